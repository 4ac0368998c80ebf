// The main window driven through its real widgets, offscreen, with the fixture model
// and a temporary database: create a story, type, generate (streamed, saved as a user
// passage and model passages with states), retry (an alternative), stop, reopen and
// continue from the saved state; the library's rename, search and delete with undo;
// a model that cannot be opened. Screenshots go to the build tree.
#include "app_harness.h"
#include "test_support.h"
#include "tiny_model.h"

#include "adventure_bar.h"
#include "context_panel.h"
#include "generation_settings_panel.h"
#include "library_panel.h"
#include "story_editor.h"
#include "story_list_model.h"
#include "story_session.h"
#include "story_tree_panel.h"
#include "window_ruler.h"
#include "write_page.h"

#include "connection.h"

#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/database.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/ui/main_window.h>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QFrame>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

#include <memory>

using namespace baton;
using ui::MainWindow;
using ui::StorySession;

class TestMainWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_db;
    test::AppHarness m_app;
    qint64 m_story = 0;

    QAction* action(const char* name) const {
        auto* a = m_app.window->findChild<QAction*>(QLatin1String(name));
        if (!a)
            qWarning("no action %s", name);
        return a;
    }
    ui::StoryEditor* editor() const { return m_app.window->editor(); }
    StorySession* session() const { return m_app.window->session(); }

    void screenshot(const QString& name) { m_app.screenshot(name); }

    // Builds the app as main() does, on the test's database. The library's models are
    // checked against the model contract through every test (QAbstractItemModelTester).
    void startApp() {
        m_app.start(m_db);
        if (QTest::currentTestFailed())
            return;
        auto* list = m_app.window->findChild<QListView*>(QStringLiteral("storyList"));
        QVERIFY(list);
        auto* library = m_app.window->findChild<ui::LibraryPanel*>();
        QVERIFY(library);
        using Tester = QAbstractItemModelTester;
        new Tester(list->model(), Tester::FailureReportingMode::QtTest, m_app.window.get());
        new Tester(library->model(), Tester::FailureReportingMode::QtTest, m_app.window.get());
    }

    void loadFixture() {
        QSignalSpy ready(m_app.window.get(), &MainWindow::modelReady);
        m_app.window->loadModel(baton::test::fixtureDir());
        QVERIFY(ready.wait(60000));
        QTRY_VERIFY(action("actionNewStory")->isEnabled());
    }

    void stopApp() { m_app.stop(); }

    void waitIdle() {
        QTRY_VERIFY_WITH_TIMEOUT(!session()->busy(), 120000);
        // Every write queued so far answered.
        QVERIFY(m_app.flush());
    }

    // A second connection on the file (the app's is on its own thread).
    static std::unique_ptr<storage::Database> openDb(const QString& path) {
        return test::AppHarness::openReadOnly(path);
    }

    static QString toDisplay(const std::string& s) { return ui::toDisplayText(s); }

    static std::string joined(const std::vector<storage::Passage>& path) {
        std::string s;
        for (const auto& p : path)
            s += p.text;
        return s;
    }

    // The status bar, the Context dock and the window ruler say the same window and fill.
    bool countersAgree() const {
        const auto* panel =
            m_app.window->findChild<ui::ContextPanel*>(QStringLiteral("contextPanel"));
        const auto* status = m_app.window->findChild<QLabel*>(QStringLiteral("windowLabel"));
        if (!panel || !status || !panel->view())
            return false;
        const story::ContextView& v = *panel->view();
        const QString caption = ui::windowCaption(v.windowIndex, v.used, v.windows.window);
        const auto* ruler = m_app.window->ruler();
        return status->text() == caption && ruler->caption() == caption &&
               int64_t(ruler->windows().size()) == v.windowIndex + 1;
    }

    // After a change of the path: a new context view arrives, and everything agrees.
    void waitForAgreement(int viewsBefore, QSignalSpy& views, const char* what) {
        QTRY_VERIFY2_WITH_TIMEOUT(
            views.count() > viewsBefore && !session()->busy() && countersAgree(), what, 30000);
    }

    void setSpin(const char* name, int value) {
        auto* s = m_app.window->findChild<QSpinBox*>(QLatin1String(name));
        QVERIFY(s);
        s->setValue(value);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        QVERIFY2(QFile::exists(baton::test::fixtureDir() + "/config.json"),
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        m_db = m_tmp.filePath(QStringLiteral("baton.db"));
        startApp();
    }

    void withoutAModelSaysHowToOpenOne() {
        auto* bar = m_app.window->findChild<QFrame*>(QStringLiteral("noModelBar"));
        QVERIFY(bar && bar->isVisible());
        QVERIFY(bar->findChild<QLabel*>()->text().contains(QStringLiteral("Open model")));
        QVERIFY(!action("actionGenerate")->isEnabled());
        screenshot(QStringLiteral("main_window_no_model.png"));
        loadFixture();
        QVERIFY(!bar->isVisible());
        auto* label = m_app.window->findChild<QLabel*>(QStringLiteral("modelLabel"));
        QVERIFY(label->text().contains(QStringLiteral("gpt2-tiny-random")));
        // The fixture is stored F32 and held f32: its weights are the file's pages.
        QVERIFY2(label->toolTip().contains(QStringLiteral("MB of the weights are the model "
                                                          "file's own pages")),
                 qPrintable(label->toolTip()));
        // The window defaults come from the model: T = n_positions, o = 0.
        QCOMPARE(m_app.window->findChild<QSpinBox*>(QStringLiteral("window"))->value(), 128);
        QCOMPARE(m_app.window->findChild<QSpinBox*>(QStringLiteral("overlap"))->value(), 0);
    }

    void aModelThatCannotBeOpenedIsReported() {
        m_app.window->loadModel(m_tmp.filePath(QStringLiteral("no-such-model")));
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = m_app.window->findChild<QMessageBox*>(QStringLiteral("errorDialog"))) &&
                    box->isVisible());
        QVERIFY(box->text().contains(QStringLiteral("could not be opened")));
        QVERIFY(box->detailedText().contains(QStringLiteral("file-not-found")));
        box->close();
        QTRY_VERIFY(!m_app.window->findChild<QMessageBox*>(QStringLiteral("errorDialog")));
        // The loaded model stays.
        QVERIFY(m_app.engine->model().has_value());
        QTRY_VERIFY(action("actionNewStory")->isEnabled());
    }

    void createTypeAndGenerate() {
        action("actionNewStory")->trigger();
        QTRY_VERIFY(session()->isOpen());
        m_story = session()->storyId();
        QCOMPARE(m_app.window->library()->model()->rowCount(), 1);
        QCOMPARE(m_app.window->library()->selectedStory(), m_story);
        QVERIFY(editor()->isEnabled());
        setSpin("maxTokens", 48);

        const QString typed = QStringLiteral("The lighthouse keeper counted the ships.");
        editor()->setFocus();
        QTest::keyClicks(editor(), typed);
        QCOMPARE(editor()->typedText(), typed);
        QVERIFY(action("actionGenerate")->isEnabled());
        QVERIFY(!action("actionContinue")->isEnabled()); // typed text waits for Generate

        // (Offscreen there is no window manager to give the focus back after the
        // error dialog of the previous test.)
        m_app.window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_app.window.get()));
        editor()->setFocus();
        QSignalSpy phases(session(), &StorySession::phaseChanged);
        QTest::keyClick(editor(), Qt::Key_Return, Qt::ControlModifier); // Generate
        QVERIFY(!phases.isEmpty());
        QVERIFY(editor()->isReadOnly());
        QVERIFY(action("actionStop")->isEnabled());
        // Streamed text appears after the typed text, in the model's colour.
        QTRY_VERIFY_WITH_TIMEOUT(editor()->storyText().size() > typed.size(), 60000);
        waitIdle();
        QVERIFY(!editor()->isReadOnly());
        const QString text = editor()->storyText();
        QVERIFY(text.startsWith(typed));
        QVERIFY(text.size() > typed.size());
        QCOMPARE(editor()->authorAt(0), storage::PassageAuthor::User);
        QCOMPARE(editor()->authorAt(int(text.size()) - 1), storage::PassageAuthor::Model);
        QVERIFY(editor()->userColor() != editor()->modelColor());
        QVERIFY(editor()->typedText().isEmpty());
        QVERIFY(m_app.window->findChild<QLabel*>(QStringLiteral("windowLabel"))
                    ->text()
                    .startsWith(QStringLiteral("Window 1 · ")));
        QVERIFY(m_app.window->findChild<QLabel*>(QStringLiteral("speedLabel"))
                    ->text()
                    .contains(QStringLiteral("tokens/s")));

        // Saved: the typed text as a user passage, the generated text as model
        // passages (one per chunk of about 16 tokens), with states.
        auto db = openDb(m_db);
        QVERIFY(db);
        const auto path = *db->stories().currentPath(m_story);
        QVERIFY(path.size() >= 3);
        QCOMPARE(path[0].author, storage::PassageAuthor::User);
        QCOMPARE(QString::fromStdString(path[0].text), typed);
        for (size_t i = 1; i < path.size(); ++i)
            QCOMPARE(path[i].author, storage::PassageAuthor::Model);
        QCOMPARE(toDisplay(joined(path)), text);
        QVERIFY(*db->states().countForStory(m_story) >= 1);
        const auto last = *db->states().forPassage(path.back().id);
        QCOMPARE(last.size(), size_t(1));
        QCOMPARE(last[0].window, 128);
        QCOMPARE(last[0].modelIdentity, m_app.engine->model()->identity);
        // The settings were saved with the story.
        QVERIFY(db->stories().get(m_story)->settingsJson.find("\"max_tokens\":48") !=
                std::string::npos);
        QTRY_VERIFY(action("actionRetry")->isEnabled());
        screenshot(QStringLiteral("main_window.png"));
    }

    void retryWritesAnAlternative() {
        auto db = openDb(m_db);
        const auto before = *db->stories().currentPath(m_story);
        QVERIFY(before.size() >= 2);
        const qint64 user = before[0].id;
        const QString userText = QString::fromStdString(before[0].text);
        action("actionRetry")->trigger();
        QVERIFY(session()->busy());
        waitIdle();
        const auto after = *db->stories().currentPath(m_story);
        QVERIFY(after.size() >= 2);
        QCOMPARE(after[0].id, before[0].id);
        QVERIFY(after[1].id != before[1].id);
        QCOMPARE(after[1].parentId, user);
        const auto alternatives = *db->stories().children(m_story, user);
        QCOMPARE(alternatives.size(), size_t(2)); // the first generation is kept
        QCOMPARE(alternatives[0].id, before[1].id);
        QCOMPARE(editor()->storyText(), toDisplay(joined(after)));
        QVERIFY(editor()->storyText().startsWith(userText));
    }

    void stopKeepsWhatWasWritten() {
        setSpin("maxTokens", 100000);
        // Past the end-of-text token, so it runs until stopped.
        auto* panel = m_app.window->findChild<ui::GenerationSettingsPanel*>();
        QVERIFY(panel);
        story::StorySettings settings = panel->settings();
        settings.sampling.stopAtEndOfText = false;
        panel->load(settings);
        const int before = int(editor()->storyText().size());
        action("actionContinue")->trigger();
        // Well over a window of 128 tokens (random tokens are several characters each).
        QTRY_VERIFY_WITH_TIMEOUT(editor()->storyText().size() > before + 1500, 60000);
        QVERIFY(session()->busy());
        QTest::keyClick(m_app.window.get(), Qt::Key_Escape); // Stop
        waitIdle();
        QCOMPARE(session()->lastResult().reason, engine::StopReason::Cancelled);
        QVERIFY(session()->lastResult().tokens.size() < 100000);
        settings.sampling.stopAtEndOfText = true;
        panel->load(settings);
        auto db = openDb(m_db);
        const auto path = *db->stories().currentPath(m_story);
        QCOMPARE(toDisplay(joined(path)), editor()->storyText());
        // Windows of 128 tokens rolled over; one state per finished window is kept on
        // the path (the first generation's branch point keeps its own), every chunk's in
        // the open one.
        const int64_t states = *db->states().countForStory(m_story);
        QVERIFY(states >= 2);
        // On the path: at most one state per finished window (two at the branch point).
        const std::string onPath =
            "WITH RECURSIVE chain(id) AS (SELECT " + std::to_string(path.back().id) +
            " UNION ALL SELECT p.parent_id FROM passages p JOIN chain c ON p.id = c.id WHERE "
            "p.parent_id IS NOT NULL) SELECT s.window_index FROM chain c JOIN recurrent_states "
            "s ON s.passage_id = c.id";
        auto& c = connectionOf(*db);
        const int64_t open = c.queryInt("SELECT max(window_index) FROM (" + onPath + ")");
        QVERIFY(open >= 1);
        QVERIFY(c.queryInt("SELECT max(n) FROM (SELECT count(*) n FROM (" + onPath +
                           ") WHERE window_index < " + std::to_string(open) +
                           " GROUP BY window_index)") <= 2);
    }

    void reopenAndContinueFromTheSavedState() {
        const QString text = editor()->storyText();
        QTextCursor caret = editor()->textCursor();
        caret.setPosition(7);
        editor()->setTextCursor(caret);
        stopApp();
        startApp();
        // The story open at the close opens again by itself, the caret where it was.
        QTRY_COMPARE(session()->storyId(), m_story);
        QTRY_COMPARE(editor()->textCursor().position(), 7);
        loadFixture();
        auto* list = m_app.window->findChild<QListView*>(QStringLiteral("storyList"));
        QVERIFY(list);
        QTRY_COMPARE(list->model()->rowCount(), 1);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                          list->visualRect(list->model()->index(0, 0)).center());
        QTRY_VERIFY(session()->isOpen());
        QCOMPARE(session()->storyId(), m_story);
        QCOMPARE(editor()->storyText(), text);
        // The story's settings came back with it (saved by the last Continue).
        QCOMPARE(m_app.window->findChild<QSpinBox*>(QStringLiteral("maxTokens"))->value(), 100000);
        setSpin("maxTokens", 40);

        auto db = openDb(m_db);
        const auto before = *db->stories().currentPath(m_story);
        const auto latest =
            *db->states().latestOnPath(before.back().id, m_app.engine->model()->identity, 128, 0,
                                       int(engine::kStateFormatVersion));
        QVERIFY(latest.has_value());
        QTRY_VERIFY(action("actionContinue")->isEnabled());
        action("actionContinue")->trigger();
        waitIdle();
        // Resumed from the latest saved state, encoding only the text after it.
        QCOMPARE(session()->resumedFromPassage(), latest->passageId);
        const auto after = *db->stories().currentPath(m_story);
        QVERIFY(after.size() > before.size());
        for (size_t i = 0; i < before.size(); ++i)
            QCOMPARE(after[i].id, before[i].id);
        QVERIFY(editor()->storyText().startsWith(text));
        QCOMPARE(editor()->storyText(), toDisplay(joined(after)));
    }

    void editingSavedTextInPlace() {
        auto db = openDb(m_db);
        const auto before = *db->stories().currentPath(m_story);
        QVERIFY(before.size() >= 3);
        const int64_t statesBefore = *db->states().countForStory(m_story);
        QVERIFY(statesBefore > 0);
        const QString text = editor()->storyText();
        // Type inside the first passage (the user's): it joins that passage.
        m_app.window->activateWindow();
        editor()->setFocus();
        QTextCursor c = editor()->textCursor();
        c.setPosition(4);
        editor()->setTextCursor(c);
        QTest::keyClicks(editor(), QStringLiteral("XY"));
        QCOMPARE(editor()->storyText(), text.left(4) + "XY" + text.mid(4));
        QVERIFY(editor()->typedText().isEmpty());
        QVERIFY(editor()->hasPendingEdits());
        const auto edits = editor()->pendingEdits();
        QCOMPARE(edits.size(), size_t(1));
        QCOMPARE(edits[0].passageId, before[0].id);
        QCOMPARE(editor()->passageAt(5), before[0].id);
        // Saved after a pause in typing; every state after the edit is gone.
        const std::string edited = before[0].text.substr(0, 4) + "XY" + before[0].text.substr(4);
        QTRY_COMPARE_WITH_TIMEOUT(db->stories().passage(before[0].id)->text, edited, 10000);
        QCOMPARE(*db->states().countForStory(m_story), int64_t(0));
        QVERIFY(!editor()->hasPendingEdits());
        // A deletion across two passages edits both.
        const int boundary = int(toDisplay(before[0].text).size()) + 2;
        c.setPosition(boundary - 2);
        c.setPosition(boundary + 3, QTextCursor::KeepAnchor);
        editor()->setTextCursor(c);
        QTest::keyClick(editor(), Qt::Key_Delete);
        QCOMPARE(editor()->pendingEdits().size(), size_t(2));
        // Undo: first the typing since the last save (the editor's own undo), then
        // the saved edit (the story's undo writes the old text back).
        QTest::keyClick(editor(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(editor()->storyText(), text.left(4) + "XY" + text.mid(4));
        QTRY_VERIFY(!editor()->hasPendingEdits() || editor()->pendingEdits().empty());
        QTest::keyClick(editor(), Qt::Key_Z, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(db->stories().passage(before[0].id)->text, before[0].text, 10000);
        QTRY_COMPARE(editor()->storyText(), text);
        // ... and with it the states the edit removed, and who wrote the passage.
        QVERIFY(m_app.flush());
        QCOMPARE(*db->states().countForStory(m_story), statesBefore);
        QCOMPARE(db->stories().passage(before[0].id)->author, before[0].author);
        // Redo puts it back.
        QVERIFY(action("actionRedo")->isEnabled());
        action("actionRedo")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(db->stories().passage(before[0].id)->text, edited, 10000);
        QTRY_COMPARE(editor()->storyText(), text.left(4) + "XY" + text.mid(4));
        QVERIFY(m_app.flush());
        QCOMPARE(*db->states().countForStory(m_story), int64_t(0));
        action("actionUndo")->trigger();
        QTRY_COMPARE(editor()->storyText(), text);
        QVERIFY(m_app.flush());
        QCOMPARE(*db->states().countForStory(m_story), statesBefore);

        // The model continues without reading the story from its beginning again (from
        // a saved state, or from the last continuation's generator, which read the same
        // text).
        setSpin("maxTokens", 12);
        action("actionContinue")->trigger();
        waitIdle();
        QVERIFY2(session()->encodedChars() < text.size(),
                 qPrintable(QString("read %1 of %2 characters again")
                                .arg(session()->encodedChars())
                                .arg(text.size())));
        QVERIFY(editor()->storyText().startsWith(text));
        QVERIFY(editor()->storyText().size() > text.size());
        QVERIFY(*db->states().countForStory(m_story) > 0);
        // ... and undoing that generation returns to the text before it (kept in
        // the tree: redo comes back to it).
        const QString generated = editor()->storyText();
        action("actionUndo")->trigger();
        QTRY_COMPARE(editor()->storyText(), text);
        action("actionRedo")->trigger();
        QTRY_COMPARE(editor()->storyText(), generated);
    }

    void branchTreeSwitchesAlternatives() {
        ui::StoryTreePanel* tree = m_app.window->storyTree();
        auto db = openDb(m_db);
        const auto path = *db->stories().currentPath(m_story);
        // The retry earlier made two alternatives after the user's passage.
        QTRY_VERIFY(tree->segmentCount() >= 3);
        QVERIFY(tree->alternative(1).has_value());
        QCOMPARE(tree->alternativePosition(), QStringLiteral("2 of 2"));
        QVERIFY(action("actionPreviousAlternative")->isEnabled());
        screenshot(QStringLiteral("write_branches.png"));
        m_app.window->activateWindow();
        QTest::keyClick(m_app.window.get(), Qt::Key_Left, Qt::AltModifier);
        QTRY_COMPARE(tree->alternativePosition(), QStringLiteral("1 of 2"));
        const auto other = *db->stories().currentPath(m_story);
        QCOMPARE(other[0].id, path[0].id);
        QVERIFY(other[1].id != path[1].id);
        QTRY_COMPARE(editor()->storyText(), toDisplay(joined(other)));
        // A click on a node of the tree continues from it.
        QTreeWidget* view = tree->tree();
        QTreeWidgetItem* target = nullptr;
        for (QTreeWidgetItemIterator it(view); *it; ++it)
            if ((*it)->data(0, Qt::UserRole).toLongLong() == path.back().id)
                target = *it;
        QVERIFY(target);
        view->scrollToItem(target);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                          view->visualItemRect(target).center());
        QTRY_COMPARE(tree->alternativePosition(), QStringLiteral("2 of 2"));
        QTRY_COMPARE(editor()->storyText(), toDisplay(joined(path)));
        // Switching is undoable like everything else.
        action("actionUndo")->trigger();
        QTRY_COMPARE(tree->alternativePosition(), QStringLiteral("1 of 2"));
        action("actionRedo")->trigger();
        QTRY_COMPARE(tree->alternativePosition(), QStringLiteral("2 of 2"));
        QTRY_COMPARE(editor()->storyText(), toDisplay(joined(path)));
    }

    void typedTextIsAutosaved() {
        auto db = openDb(m_db);
        const auto before = *db->stories().currentPath(m_story);
        const QString text = editor()->storyText();
        m_app.window->activateWindow();
        editor()->setFocus();
        editor()->moveCursor(QTextCursor::End);
        QTest::keyClicks(editor(), QStringLiteral(" A draft."));
        QCOMPARE(editor()->typedText(), QStringLiteral(" A draft."));
        // After a pause in typing it is saved as the user's passage (a kill now loses
        // nothing).
        QTRY_VERIFY_WITH_TIMEOUT(editor()->typedText().isEmpty(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(db->stories().currentPath(m_story)->back().text,
                                  std::string(" A draft."), 10000);
        QCOMPARE(db->stories().currentPath(m_story)->back().author, storage::PassageAuthor::User);
        QCOMPARE(editor()->storyText(), text + QStringLiteral(" A draft."));
        // Undo takes it back (the editor's own undo is empty after the save).
        QTest::keyClick(editor(), Qt::Key_Z, Qt::ControlModifier);
        QTRY_COMPARE(editor()->storyText(), text);
        QTRY_COMPARE(db->stories().currentPath(m_story)->back().id, before.back().id);
    }

    void memoryAndNoteAreSavedAndRead() {
        auto* memory = m_app.window->findChild<QPlainTextEdit*>(QStringLiteral("memoryEdit"));
        auto* note = m_app.window->findChild<QPlainTextEdit*>(QStringLiteral("authorsNoteEdit"));
        QVERIFY(memory && note);
        auto db = openDb(m_db);
        QVERIFY(*db->states().countForStory(m_story) > 0);
        memory->setPlainText(QStringLiteral("Ada keeps the Qzxjv lighthouse."));
        note->setPlainText(QStringLiteral("Wkvqz stormy."));
        QTRY_COMPARE_WITH_TIMEOUT(db->stories().get(m_story)->memory,
                                  std::string("Ada keeps the Qzxjv lighthouse."), 10000);
        QTRY_COMPARE(db->stories().get(m_story)->authorsNote, std::string("Wkvqz stormy."));
        // A new memory: the saved states were computed without it.
        QCOMPARE(*db->states().countForStory(m_story), int64_t(0));
        const QString text = editor()->storyText();
        setSpin("maxTokens", 8);
        action("actionContinue")->trigger();
        waitIdle();
        // Read: the story (the note is guidance, placed before the continuation; the
        // memory starts every window, the default layout).
        QCOMPARE(session()->resumedFromPassage(), qint64(0));
        QCOMPARE(session()->encodedChars(), qint64(text.size()));
        // Neither is story text.
        QVERIFY(!editor()->storyText().contains(QStringLiteral("Qzxjv")));
        QVERIFY(!editor()->storyText().contains(QStringLiteral("Wkvqz")));
        // They come back with the story.
        stopApp();
        startApp();
        loadFixture();
        m_app.window->library()->select(m_story);
        QTRY_COMPARE(session()->storyId(), m_story);
        memory = m_app.window->findChild<QPlainTextEdit*>(QStringLiteral("memoryEdit"));
        QVERIFY(memory);
        QCOMPARE(memory->toPlainText(), QStringLiteral("Ada keeps the Qzxjv lighthouse."));
        QCOMPARE(m_app.window->findChild<QPlainTextEdit*>(QStringLiteral("authorsNoteEdit"))
                     ->toPlainText(),
                 QStringLiteral("Wkvqz stormy."));
    }

    // A one-word edit in the last passage rewrites that passage only, though the
    // passages around it begin and end with line breaks (the editor's paragraphs), and
    // keeps the saved states of every passage before it.
    void editingOneWordKeepsTheStatesBeforeIt() {
        int64_t story = 0;
        std::vector<int64_t> ids;
        {
            auto db = storage::Database::open(m_db.toStdString());
            QVERIFY(db.ok());
            storage::Story s;
            s.title = "Paragraphs";
            story = *(*db)->stories().create(s);
            const char* texts[] = {"It was a dark night.\n\n",  "Anne walked to the shrubbery",
                                   " and stopped.\n",           "\n\"Come,\" he said.",
                                   "\n\nShe did not answer.\n", "\nThe wind rose again."};
            for (const char* t : texts) {
                ids.push_back(*(*db)->stories().append(story, t, storage::PassageAuthor::Model));
                storage::StoredState st;
                st.passageId = ids.back();
                st.modelIdentity = "m";
                st.window = 128;
                st.formatVersion = 3;
                st.blob = {1, 2, 3};
                QVERIFY((*db)->states().save(st).ok());
            }
        }
        m_app.window->library()->refresh();
        auto opened = [&] {
            m_app.window->library()->select(story); // once the library lists it
            return session()->storyId() == story;
        };
        QTRY_VERIFY_WITH_TIMEOUT(opened(), 10000);
        QTRY_VERIFY(editor()->storyText().endsWith(QStringLiteral("The wind rose again.")));
        // "wind" -> "gale", typed over a selection.
        const int at = int(editor()->storyText().lastIndexOf(QStringLiteral("wind")));
        editor()->setFocus();
        QTextCursor c = editor()->textCursor();
        c.setPosition(at);
        c.setPosition(at + 4, QTextCursor::KeepAnchor);
        editor()->setTextCursor(c);
        QTest::keyClicks(editor(), QStringLiteral("gale"));
        QCOMPARE(editor()->pendingEdits().size(), size_t(1));
        QCOMPARE(editor()->pendingEdits()[0].passageId, ids.back());
        // What was typed is the writer's, all of it.
        for (int i = at; i < at + 4; ++i)
            QCOMPARE(editor()->authorAt(i), storage::PassageAuthor::User);
        auto db = openDb(m_db);
        QTRY_COMPARE_WITH_TIMEOUT(db->stories().passage(ids.back())->text,
                                  std::string("\nThe gale rose again."), 10000);
        for (size_t i = 0; i + 1 < ids.size(); ++i) {
            QCOMPARE(db->stories().passage(ids[i])->editedAt, int64_t(0));
            QCOMPARE(db->states().forPassage(ids[i])->size(), size_t(1));
        }
        QVERIFY(db->states().forPassage(ids.back())->empty());
        // Back to the story the other tests write, and this one gone.
        m_app.window->library()->select(m_story);
        QTRY_COMPARE(session()->storyId(), m_story);
        {
            auto rw = storage::Database::open(m_db.toStdString());
            QVERIFY(rw.ok() && (*rw)->stories().remove(story).ok());
        }
        m_app.window->library()->refresh();
        QTRY_VERIFY(m_app.window->library()->selectedStory() == m_story);
    }

    // File > Export story writes the current branch as Markdown or text; File > Import
    // story reads it back as a story with the same title and text.
    void exportAndImportRoundTrip() {
        QVERIFY(session()->isOpen());
        const QString text = editor()->storyText();
        const QString title = QString::fromStdString(session()->story().title);
        auto* page = m_app.window->findChild<ui::WritePage*>();
        QVERIFY(page);
        const QString md = m_tmp.filePath(QStringLiteral("export.md"));
        const QString txt = m_tmp.filePath(QStringLiteral("export.txt"));
        QVERIFY(page->exportStory(md));
        QVERIFY(page->exportStory(txt));
        QCOMPARE(baton::test::readFile(txt), text.toUtf8());
        QCOMPARE(baton::test::readFile(md),
                 (QStringLiteral("# ") + title + "\n\n" + text).toUtf8());
        // A folder that does not exist: an error, nothing written.
        QSignalSpy failed(page, &ui::WritePage::failed);
        QVERIFY(!page->exportStory(m_tmp.filePath(QStringLiteral("no/such/folder/x.md"))));
        QCOMPARE(failed.count(), 1);
        // Imported back: the same title and text.
        const size_t before = openDb(m_db)->stories().list()->size();
        page->importStory(md);
        QTRY_COMPARE_WITH_TIMEOUT(openDb(m_db)->stories().list()->size(), before + 1, 10000);
        const auto stories = *openDb(m_db)->stories().list();
        const auto imported = std::find_if(stories.begin(), stories.end(), [&](const auto& s) {
            return s.id != m_story && s.title == title.toStdString();
        });
        QVERIFY(imported != stories.end());
        QCOMPARE(toDisplay(*openDb(m_db)->stories().currentText(imported->id)), text);
        {
            auto rw = storage::Database::open(m_db.toStdString());
            QVERIFY(rw.ok() && (*rw)->stories().remove(imported->id).ok());
        }
        m_app.window->library()->refresh();
        m_app.window->library()->select(m_story);
        QTRY_COMPARE(session()->storyId(), m_story);
    }

    void editorKeepsTheStorysCharacters() {
        // No-break spaces stay (QTextEdit::toPlainText would make them spaces), line
        // breaks are \n, and showing the same path again attaches ids only.
        ui::StoryEditor e;
        storage::Passage p;
        p.id = 7;
        p.text = "a\xC2\xA0"
                 "b\r\nc";
        p.author = storage::PassageAuthor::Model;
        e.setPassages({p});
        QCOMPARE(e.storyText(), QStringLiteral("a\u00A0b\nc"));
        QVERIFY(e.typedText().isEmpty());
        QCOMPARE(e.savedLength(), 5);
        QCOMPARE(e.passageAt(4), qint64(7));
        e.showPath({p});
        QVERIFY(!e.hasPendingEdits());
        QCOMPARE(e.storyText(), QStringLiteral("a\u00A0b\nc"));
        QVERIFY(e.pendingEdits().empty());
        // A lone \r and the Unicode line and paragraph separators are line breaks.
        storage::Passage q;
        q.id = 8;
        q.text = "x\ry\xE2\x80\xA8z\xE2\x80\xA9w";
        e.setPassages({p, q});
        QCOMPARE(e.storyText(), QStringLiteral("a\u00A0b\ncx\ny\nz\nw"));
        QCOMPARE(e.storyText(), ui::toDisplayText(p.text) + ui::toDisplayText(q.text));
        e.showPath({p, q});
        QVERIFY(e.pendingEdits().empty());
        QCOMPARE(e.passageAt(int(e.storyText().size()) - 1), qint64(8));
    }

    // Blank lines between lines of dialogue show as the paragraph gap they mean: the
    // text keeps them, the page does not show empty paragraphs.
    void blankLinesAreParagraphGaps() {
        ui::StoryEditor e;
        e.resize(500, 400);
        storage::Passage p;
        p.id = 1;
        p.author = storage::PassageAuthor::Model;
        p.text = "\"Yes,\" said he.\n\n\"No,\" said she.\n\n\nThe end.";
        e.setPassages({p});
        QCOMPARE(e.storyText(), ui::toDisplayText(p.text));
        QCOMPARE(e.collapsedBlankLines(), 3);
        // Typing into a gap makes it a paragraph again.
        QTextCursor c(e.document());
        c.setPosition(int(QStringLiteral("\"Yes,\" said he.\n").size()));
        e.setTextCursor(c);
        e.setFocus();
        QTest::keyClicks(&e, QStringLiteral("Then"));
        QTRY_COMPARE(e.collapsedBlankLines(), 2);
        QCOMPARE(e.storyText().count(QStringLiteral("Then")), 1);
        // The last line stays, so there is always a line to type on.
        p.text = "Hello.\n\n";
        e.setPassages({p});
        QCOMPARE(e.collapsedBlankLines(), 1);
        QVERIFY(e.document()->lastBlock().isVisible());
    }

    void libraryRenamesSearchesAndUndoesADelete() {
        ui::LibraryPanel* library = m_app.window->library();
        action("actionNewStory")->trigger();
        QTRY_COMPARE(library->model()->rowCount(), 2);
        QTRY_VERIFY(session()->storyId() != m_story && session()->isOpen());
        const qint64 second = session()->storyId();
        // Most recent first.
        QCOMPARE(library->model()->stories().front().id, second);

        // Rename in place.
        library->model()->setData(library->model()->index(library->model()->rowOf(second)),
                                  QStringLiteral("Qzxj harbour lights"), Qt::EditRole);
        QTRY_COMPARE(m_app.window->windowTitle(), QStringLiteral("Qzxj harbour lights — Baton"));
        {
            QVERIFY(m_app.flush());
            auto db = openDb(m_db);
            QCOMPARE(db->stories().get(second)->title, std::string("Qzxj harbour lights"));
        }

        // Search by title (a word the random model's text will not contain).
        auto* search = m_app.window->findChild<QLineEdit*>(QStringLiteral("librarySearch"));
        auto* list = m_app.window->findChild<QListView*>(QStringLiteral("storyList"));
        QSignalSpy applied(library, &ui::LibraryPanel::searchApplied);
        QTest::keyClicks(search, QStringLiteral("qzxj h"));
        QVERIFY(applied.wait(5000));
        QCOMPARE(list->model()->rowCount(), 1);
        QCOMPARE(list->model()->index(0, 0).data(ui::StoryListModel::IdRole).toLongLong(), second);
        // And by the text of the passages (the first story's typed text).
        applied.clear();
        library->setSearchText(QStringLiteral("LIGHTHOUSE keeper"));
        QVERIFY(applied.wait(5000));
        QCOMPARE(list->model()->rowCount(), 1);
        QCOMPARE(list->model()->index(0, 0).data(ui::StoryListModel::IdRole).toLongLong(), m_story);
        applied.clear();
        library->setSearchText(QStringLiteral("no story says this"));
        QVERIFY(applied.wait(5000));
        QCOMPARE(list->model()->rowCount(), 0);
        search->clear();
        QTRY_COMPARE(list->model()->rowCount(), 2);

        // Duplicate: the copy has the same text and is selected and opened.
        library->select(m_story);
        QTRY_COMPARE(session()->storyId(), m_story);
        const QString original = editor()->storyText();
        action("actionDuplicateStory")->trigger();
        QTRY_COMPARE(library->model()->rowCount(), 3);
        QTRY_VERIFY(session()->storyId() != m_story && session()->storyId() != second);
        const qint64 copy = session()->storyId();
        QTRY_COMPARE(editor()->storyText(), original);
        QVERIFY(m_app.window->windowTitle().contains(QStringLiteral("(copy)")));
        library->select(copy);
        action("actionDeleteStory")->trigger();
        library->commitPendingDelete();
        QTRY_COMPARE(library->model()->rowCount(), 2);

        // Delete, undo, delete again: written when the window closes.
        library->select(second);
        action("actionDeleteStory")->trigger();
        QCOMPARE(library->model()->rowCount(), 1);
        QVERIFY(!session()->isOpen());
        QVERIFY(m_app.window->findChild<QFrame*>(QStringLiteral("undoBar"))->isVisible());
        QVERIFY(action("actionUndoDelete")->isEnabled());
        screenshot(QStringLiteral("library_undo_delete.png"));
        action("actionUndoDelete")->trigger();
        QCOMPARE(library->model()->rowCount(), 2);
        QVERIFY(!m_app.window->findChild<QFrame*>(QStringLiteral("undoBar"))->isVisible());
        library->select(second);
        action("actionDeleteStory")->trigger();
        QCOMPARE(library->model()->rowCount(), 1);
        {
            auto db = openDb(m_db);
            QCOMPARE(db->stories().list()->size(), size_t(2)); // not yet written
        }
        stopApp();
        auto db = openDb(m_db);
        const auto stories = *db->stories().list();
        QCOMPARE(stories.size(), size_t(1));
        QCOMPARE(stories[0].id, m_story);
        QCOMPARE(*db->integrityCheck(), std::string("ok"));
    }

    void adventureTurns() {
        // (After the library's test, which closes the app.)
        startApp();
        loadFixture();
        action("actionNewAdventure")->trigger();
        QTRY_VERIFY(session()->isOpen() && session()->storyId() != m_story);
        QCOMPARE(session()->story().mode, storage::StoryMode::Adventure);
        const qint64 id = session()->storyId();
        ui::AdventureBar* bar = m_app.window->adventureBar();
        QTRY_VERIFY(bar->isVisible());
        setSpin("maxTokens", 24);
        auto* input = m_app.window->findChild<QLineEdit*>(QStringLiteral("turnInput"));
        QVERIFY(input && input->isEnabled());
        input->setFocus();
        QTest::keyClicks(input, QStringLiteral("open the door"));
        QTest::keyClick(input, Qt::Key_Return);
        QVERIFY(session()->busy());
        waitIdle();
        QVERIFY(input->text().isEmpty());
        const QString first = editor()->storyText();
        QVERIFY(first.startsWith(QStringLiteral("> You open the door.\n\n")));
        QVERIFY(first.size() > 22);
        auto db = openDb(m_db);
        auto path = *db->stories().currentPath(id);
        QCOMPARE(path[0].author, storage::PassageAuthor::User);
        QCOMPARE(path[0].text, std::string("> You open the door.\n\n"));
        // The reply never writes the player's next action.
        for (size_t i = 1; i < path.size(); ++i)
            QVERIFY(path[i].text.find("\n>") == std::string::npos);

        // A second turn, said.
        bar->setKind(story::TurnKind::Say);
        QTest::keyClicks(input, QStringLiteral("hello?"));
        QTest::keyClick(input, Qt::Key_Return);
        waitIdle();
        QVERIFY(editor()->storyText().startsWith(first));
        QVERIFY(editor()->storyText().contains(QStringLiteral("> You say, \u201CHello?\u201D")));
        screenshot(QStringLiteral("adventure.png"));

        // Retry turn: another reply to the same words.
        const auto two = *db->stories().currentPath(id);
        auto* retry = m_app.window->findChild<QPushButton*>(QStringLiteral("turnRetry"));
        QVERIFY(retry->isEnabled());
        QTest::mouseClick(retry, Qt::LeftButton);
        waitIdle();
        const auto retried = *db->stories().currentPath(id);
        QVERIFY(editor()->storyText().contains(QStringLiteral("> You say, \u201CHello?\u201D")));
        QVERIFY(retried.back().id != two.back().id);

        // Undo turn: back to the end of the first reply.
        auto* undo = m_app.window->findChild<QPushButton*>(QStringLiteral("turnUndo"));
        QVERIFY(undo->isEnabled());
        QTest::mouseClick(undo, Qt::LeftButton);
        QTRY_COMPARE(editor()->storyText(), first);
        // And once more: the story is empty again; the turns stay in the tree.
        QTRY_VERIFY(undo->isEnabled());
        QTest::mouseClick(undo, Qt::LeftButton);
        QTRY_COMPARE(editor()->storyText(), QString());
        QVERIFY(*db->stories().passageCount(id) > int64_t(retried.size()));
        // The story's undo takes the undo of the turn back.
        action("actionUndo")->trigger();
        QTRY_COMPARE(editor()->storyText(), first);
    }

    // One source for "which window, how full": after a generation, an undo, a switch to
    // another alternative and an edit, the status bar, the Context dock and the ruler
    // show the window the next continuation opens in, and agree.
    void countersAgreeAfterEveryChange() {
        QVERIFY(session()->isOpen());
        setSpin("maxTokens", 24);
        QSignalSpy views(session(), &ui::StorySession::contextReady);
        int before = views.count();
        action("actionContinue")->trigger();
        waitIdle();
        waitForAgreement(before, views, "after a generation");
        const auto* panel =
            m_app.window->findChild<ui::ContextPanel*>(QStringLiteral("contextPanel"));
        const int usedAfterGeneration = panel->view()->used;
        // Undo: the window of the path before the generation.
        before = views.count();
        action("actionUndo")->trigger();
        waitForAgreement(before, views, "after an undo");
        QVERIFY(panel->view()->used != usedAfterGeneration ||
                panel->view()->windowIndex >= 0); // a fresh view, of the shorter path
        action("actionRedo")->trigger();
        // A retry makes an alternative; switching back is a change of branch.
        before = views.count();
        action("actionRetry")->trigger();
        waitIdle();
        waitForAgreement(before, views, "after a retry");
        before = views.count();
        action("actionPreviousAlternative")->trigger();
        waitForAgreement(before, views, "after a switch to another alternative");
        // An edit of saved text.
        before = views.count();
        editor()->setFocus();
        QTextCursor c = editor()->textCursor();
        c.setPosition(2);
        editor()->setTextCursor(c);
        QTest::keyClicks(editor(), QStringLiteral("Q"));
        waitForAgreement(before, views, "after an edit");
        action("actionUndo")->trigger();
        QTRY_VERIFY(!editor()->storyText().mid(2, 1).startsWith(QLatin1Char('Q')) ||
                    !editor()->hasPendingEdits());
    }

    void windowRulerAndLossColours() {
        QVERIFY(session()->isOpen());
        QVERIFY(editor()->savedLength() > 0);
        setSpin("window", 16);
        setSpin("overlap", 4);
        auto* ruler = m_app.window->ruler();
        // The ruler shows the story's windows as the context view lays them out.
        QTRY_VERIFY_WITH_TIMEOUT(countersAgree() && ruler->windows().size() > 1, 20000);
        QVERIFY(!ruler->hasLoss());
        QAction* loss = action("actionShowLoss");
        QVERIFY(loss->isEnabled());
        loss->trigger();
        QVERIFY(loss->isChecked());
        QTRY_VERIFY_WITH_TIMEOUT(ruler->hasLoss(), 60000);
        // Every window that holds text is shaded by its tokens' mean loss.
        const auto& w = ruler->windows();
        QCOMPARE(w.front().startChar, 0);
        for (size_t i = 1; i < w.size(); ++i)
            QVERIFY(w[i].startChar >= w[i - 1].startChar);
        for (const auto& x : w)
            if (x.endChar > x.startChar + 4)
                QVERIFY(x.meanLoss > 0);
        // Every token but the first is coloured.
        QVERIFY(editor()->lossRangeCount() > 10);
        QTest::qWait(50);
        screenshot(QStringLiteral("write_windows_and_loss.png"));
        // New text makes the colours stale: they go, the windows stay.
        editor()->setFocus();
        QTest::keyClicks(editor(), QStringLiteral(" More."));
        QCOMPARE(editor()->lossRangeCount(), 0);
        QVERIFY(!ruler->hasLoss());
        QVERIFY(!loss->isChecked());
        for (int i = 0; i < 6; ++i)
            QTest::keyClick(editor(), Qt::Key_Backspace);
        QVERIFY(editor()->typedText().isEmpty());
    }

    // A recurrent model's label says so, and its tooltip describes the module.
    void aRecurrentModelIsDescribed() {
        const QString dir = m_tmp.filePath(QStringLiteral("recurrent"));
        engine::RecurrenceConfig rec;
        rec.window = 32;
        rec.slots = 4;
        QVERIFY(baton::test::writeRecurrentFixture(dir, rec));
        QSignalSpy ready(m_app.window.get(), &MainWindow::modelReady);
        m_app.window->loadModel(dir);
        QVERIFY(ready.wait(60000));
        auto* label = m_app.window->findChild<QLabel*>(QStringLiteral("modelLabel"));
        QVERIFY2(label->text().contains(QStringLiteral(" · recurrent")), qPrintable(label->text()));
        QVERIFY2(label->toolTip().contains(QStringLiteral(
                     "Recurrent: trained at T = 32, o = 0; 4 state slots into block 1")),
                 qPrintable(label->toolTip()));
    }

    void cleanupTestCase() { stopApp(); }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
