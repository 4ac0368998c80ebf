// The Write page when the disk is full: typed text that cannot be saved stays in the
// editor as typed text, the writer is told once, Baton saves it again by itself, and
// it goes in once there is room (the fault comes from the test VFS of
// tests/storage/fault_vfs.h, under the app's own storage thread).
#include "app_harness.h"
#include "fault_vfs.h"
#include "test_support.h"
#include "verify_ok.h"

#include "library_panel.h"
#include "story_editor.h"
#include "story_session.h"

#include <baton/storage/story_store.h>

#include <QDir>
#include <QMessageBox>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTimer>

using namespace baton;

class TestWriteFaults : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_db;
    qint64 m_story = 0;
    qint64 m_other = 0;   // a second story, opened while a save of the first fails
    test::FaultVfs m_vfs; // before the app: its storage thread opens through it
    test::AppHarness m_app;

    ui::StoryEditor* editor() const { return m_app.window->editor(); }

private Q_SLOTS:
    void initTestCase() {
        test::initTestProcess();
        m_db = m_dir.filePath("faults.db");
        {
            auto db = storage::Database::open(m_db.toStdString());
            BATON_VERIFY_OK(db);
            storage::Story s;
            s.title = "Full disk";
            m_story = *(*db)->stories().create(s);
            BATON_VERIFY_OK(
                (*db)->stories().append(m_story, "It began. ", storage::PassageAuthor::User));
            s.title = "Elsewhere";
            m_other = *(*db)->stories().create(s);
            BATON_VERIFY_OK(
                (*db)->stories().append(m_other, "Elsewhere. ", storage::PassageAuthor::User));
        }
        m_app.start(m_db);
        if (QTest::currentTestFailed())
            return;
        m_app.window->session()->open(m_story);
        QTRY_COMPARE(editor()->storyText(), QStringLiteral("It began. "));
    }

    void cleanupTestCase() {
        m_vfs.disarm();
        m_app.stop();
    }

    void typedTextSurvivesAFullDisk() {
        QSignalSpy notSaved(m_app.window->session(), &ui::StorySession::typedTextNotSaved);
        m_vfs.arm(test::Fault::DiskFull, 1, true); // every write fails from now on
        editor()->setFocus();
        editor()->moveCursor(QTextCursor::End);
        QTest::keyClicks(editor(), QStringLiteral("Then the sea rose."));
        // The autosave fails; the text comes back as typed (unsaved) text, and the
        // writer is told once.
        QTRY_VERIFY_WITH_TIMEOUT(m_vfs.fired(), 10000);
        QMessageBox* box = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (box = m_app.window->findChild<QMessageBox*>(QStringLiteral("errorDialog"))), 10000);
        QVERIFY2(box->text().contains(QStringLiteral("could not be saved")),
                 qPrintable(box->text()));
        QVERIFY2(box->informativeText().contains(QStringLiteral("full")),
                 qPrintable(box->informativeText()));
        QTRY_COMPARE_WITH_TIMEOUT(editor()->typedText(), QStringLiteral("Then the sea rose."),
                                  10000);
        QCOMPARE(editor()->storyText(), QStringLiteral("It began. Then the sea rose."));
        // Nothing was saved, so there is nothing to undo (no "Undo Typing" left behind).
        QTRY_VERIFY(!m_app.window->session()->canUndo());
        QDir().mkpath(QStringLiteral(BATON_SCREENSHOT_DIR));
        QVERIFY(box->grab().save(QStringLiteral(BATON_SCREENSHOT_DIR "/write_full_disk.png")));
        box->close();
        // Typing goes on meanwhile; the next attempt fails too (still full) without
        // another message box.
        QTest::keyClicks(editor(), QStringLiteral(" Again."));
        QTRY_VERIFY_WITH_TIMEOUT(notSaved.count() >= 2, 30000);
        QTRY_VERIFY(!editor()->typedText().isEmpty());
        QVERIFY(!m_app.window->findChild<QMessageBox*>(QStringLiteral("errorDialog")));
        QCOMPARE(editor()->typedText(), QStringLiteral("Then the sea rose. Again."));
        auto db = test::AppHarness::openReadOnly(m_db);
        QVERIFY(db);
        QCOMPARE(*db->stories().currentText(m_story), std::string("It began. "));
        // Room again: the retry saves everything, in order, once.
        m_vfs.disarm();
        QTRY_VERIFY_WITH_TIMEOUT(editor()->typedText().isEmpty(), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(*db->stories().currentText(m_story),
                                  std::string("It began. Then the sea rose. Again."), 10000);
        QCOMPARE(editor()->storyText(), QStringLiteral("It began. Then the sea rose. Again."));
        QVERIFY(m_app.flush());
        QCOMPARE(*(*storage::Database::open(m_db.toStdString()))->integrityCheck(),
                 std::string("ok"));
    }

    // The writer types, then opens another story at once (the draft is saved on the
    // way) and that save fails: the text is not put into the story now shown, and not
    // lost either: Baton saves it again to the story it was typed in.
    void typedTextOfAStoryLeftBehind() {
        const std::string before = "It began. Then the sea rose. Again.";
        m_vfs.arm(test::Fault::DiskFull, 1, true);
        editor()->setFocus();
        editor()->moveCursor(QTextCursor::End);
        QTest::keyClicks(editor(), QStringLiteral(" Left behind."));
        auto* library = m_app.window->findChild<ui::LibraryPanel*>();
        QVERIFY(library);
        Q_EMIT library->storyActivated(m_other); // as a click in the library does
        QTRY_COMPARE_WITH_TIMEOUT(editor()->storyText(), QStringLiteral("Elsewhere. "), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(m_vfs.fired(), 10000);
        QMessageBox* box = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (box = m_app.window->findChild<QMessageBox*>(QStringLiteral("errorDialog"))), 10000);
        QVERIFY2(box->text().contains(QStringLiteral("story you left")), qPrintable(box->text()));
        box->close();
        QVERIFY(editor()->typedText().isEmpty());
        QCOMPARE(editor()->storyText(), QStringLiteral("Elsewhere. "));
        auto db = test::AppHarness::openReadOnly(m_db);
        QVERIFY(db);
        QCOMPARE(*db->stories().currentText(m_story), before);
        m_vfs.disarm();
        QTRY_COMPARE_WITH_TIMEOUT(*db->stories().currentText(m_story), before + " Left behind.",
                                  30000);
        QCOMPARE(*db->stories().currentText(m_other), std::string("Elsewhere. "));
        QCOMPARE(editor()->storyText(), QStringLiteral("Elsewhere. "));
        QVERIFY(m_app.flush());
    }

    // Closing the window while typed text cannot be saved asks first; "Keep Baton Open"
    // keeps the window and the text, and once there is room again it closes with the
    // text saved. (The last test: the window closes.)
    void closingAsksBeforeLosingText() {
        m_vfs.arm(test::Fault::DiskFull, 1, true);
        editor()->setFocus();
        editor()->moveCursor(QTextCursor::End);
        QTest::keyClicks(editor(), QStringLiteral(" Not lost."));
        QString asked;
        QTimer answer;
        connect(&answer, &QTimer::timeout, this, [&] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box || box->objectName() != QStringLiteral("unsavedTextDialog"))
                return;
            asked = box->text();
            box->grab().save(QStringLiteral(BATON_SCREENSHOT_DIR "/write_unsaved_close.png"));
            for (QAbstractButton* b : box->buttons())
                if (b->text() == QStringLiteral("Keep Baton Open"))
                    b->click();
        });
        answer.start(50);
        QVERIFY(!m_app.window->close());
        QVERIFY2(asked.contains(QStringLiteral("could not be saved")), qPrintable(asked));
        QVERIFY(m_app.window->isVisible());
        QTRY_COMPARE_WITH_TIMEOUT(editor()->typedText(), QStringLiteral(" Not lost."), 10000);
        auto db = test::AppHarness::openReadOnly(m_db);
        QVERIFY(db);
        QCOMPARE(*db->stories().currentText(m_other), std::string("Elsewhere. "));
        m_vfs.disarm();
        asked.clear();
        QVERIFY(m_app.window->close());
        QVERIFY(asked.isEmpty());
        QCOMPARE(*db->stories().currentText(m_other), std::string("Elsewhere.  Not lost."));
    }
};

QTEST_MAIN(TestWriteFaults)
#include "tst_write_faults.moc"
