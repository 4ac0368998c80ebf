// Two writers on one database at once, as when the app and baton-cli (or the server,
// or a second app window) have the same story database open: two writer processes
// (storage_crash_writer, each chunk and its state in one transaction) and two
// StorageControllers of this process (the app's storage thread, twice) append to the
// same story together. No write may fail ("database is locked" must never reach a
// user), no chunk may be lost, and the story stays one line (every append sees the
// others' commits).
#include "crash_chunk.h"
#include "verify_ok.h"

#include "titled_story.h"

#include <baton/storage/database.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/story_store.h>

#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <vector>

using namespace baton::storage;

class TestTwoWriters : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
    }

    void everyWriteGoesIn() {
        const QString path = m_dir.filePath("shared.db");
        int64_t story = 0;
        {
            auto db = Database::open(path.toStdString());
            BATON_VERIFY_OK(db);
            story = *(*db)->stories().create(titled("crash")); // the writers' story
            BATON_VERIFY_OK((*db)->stories().append(story, "Start. ", PassageAuthor::User));
        }
        constexpr int kProcessChunks = 600, kControllerChunks = 300;
        // Two app windows: two storage threads on the same file.
        std::vector<std::unique_ptr<StorageController>> windows;
        for (int w = 0; w < 2; ++w) {
            windows.push_back(std::make_unique<StorageController>());
            QSignalSpy opened(windows.back().get(), &StorageController::opened);
            windows.back()->open(path);
            QVERIFY(opened.wait(10000));
        }
        std::vector<std::unique_ptr<QSignalSpy>> failures, appended;
        for (auto& w : windows) {
            failures.push_back(std::make_unique<QSignalSpy>(w.get(), &StorageController::failed));
            appended.push_back(
                std::make_unique<QSignalSpy>(w.get(), &StorageController::passageAppended));
        }
        // Two baton-cli-like processes.
        std::vector<std::unique_ptr<QProcess>> writers;
        for (int p = 0; p < 2; ++p) {
            auto proc = std::make_unique<QProcess>();
            proc->setProcessChannelMode(QProcess::ForwardedErrorChannel);
            proc->start(QStringLiteral(BATON_CRASH_WRITER_PATH),
                        {path, m_dir.filePath(QStringLiteral("side%1").arg(p)),
                         QString::number(kProcessChunks)});
            QVERIFY(proc->waitForStarted(10000));
            writers.push_back(std::move(proc));
        }
        // Meanwhile the windows append, interleaved, as typing autosaves do.
        for (int i = 0; i < kControllerChunks; ++i)
            for (size_t w = 0; w < windows.size(); ++w)
                windows[w]->appendPassage(
                    story, "Window " + std::to_string(w) + " line " + std::to_string(i) + ". ",
                    PassageAuthor::User);
        for (auto& proc : writers) {
            QVERIFY(proc->waitForFinished(120000));
            QCOMPARE(proc->exitStatus(), QProcess::NormalExit);
            QCOMPARE(proc->exitCode(), 0); // a failed chunk exits 1 with the error
        }
        for (size_t w = 0; w < windows.size(); ++w) {
            QTRY_COMPARE_WITH_TIMEOUT(appended[w]->count() + failures[w]->count(),
                                      kControllerChunks, 60000);
            QCOMPARE(failures[w]->count(), 0);
        }
        windows.clear();
        auto db = Database::open(path.toStdString());
        BATON_VERIFY_OK(db);
        QCOMPARE(*(*db)->integrityCheck(), std::string("ok"));
        const int64_t expected = 1 + 2 * kProcessChunks + 2 * kControllerChunks;
        QCOMPARE(*(*db)->stories().passageCount(story), expected);
        // One line: every passage is on the current path (none became a side branch).
        QCOMPARE(int64_t((*db)->stories().currentPath(story)->size()), expected);
        // Each window's lines in the order it sent them.
        const std::string text = *(*db)->stories().currentText(story);
        for (int w = 0; w < 2; ++w) {
            size_t at = 0;
            for (int i = 0; i < kControllerChunks; ++i) {
                at = text.find("Window " + std::to_string(w) + " line " + std::to_string(i) + ". ",
                               at);
                QVERIFY2(at != std::string::npos,
                         qPrintable(QString("window %1 line %2").arg(w).arg(i)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTwoWriters)
#include "tst_two_writers.moc"
