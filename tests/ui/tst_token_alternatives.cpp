// Token alternatives in the app, through its real widgets, offscreen, with the fixture
// model: Ctrl+click on generated text shows the token's alternatives with their
// probabilities; picking one makes a branch there (the old text stays in the tree) and
// continues from it; Undo goes back. The context menu offers the same; typed text, an
// edit, or text without recorded alternatives say why nothing can be picked.
#include "app_harness.h"
#include "test_support.h"
#include "tiny_model.h"

#include "story_editor.h"
#include "story_session.h"
#include "story_tree_panel.h"
#include "token_alternatives.h"

#include <baton/storage/story_store.h>
#include <baton/story/token_choices.h>
#include <baton/ui/main_window.h>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QContextMenuEvent>
#include <QLineEdit>
#include <QPainter>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace baton;

// Waits on work off the GUI thread (the recorded choices read from the database, a
// branch's generation): long enough for a machine busy with other tests.
constexpr int kAsync = 30000;

class TestTokenAlternatives : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_db;
    test::AppHarness m_app;
    qint64 m_story = 0;

    ui::StoryEditor* editor() const { return m_app.window->editor(); }
    ui::StorySession* session() const { return m_app.window->session(); }
    QAction* action(const char* name) const {
        return m_app.window->findChild<QAction*>(QLatin1String(name));
    }
    void waitIdle() {
        QTRY_VERIFY_WITH_TIMEOUT(!session()->busy(), 120000);
        QVERIFY(m_app.flush());
    }
    static std::string joined(const std::vector<storage::Passage>& path) {
        std::string s;
        for (const auto& p : path)
            s += p.text;
        return s;
    }
    // The middle of character `pos` in the editor's viewport.
    QPoint pointOf(int pos) const {
        QTextCursor c(editor()->document());
        c.setPosition(pos);
        const QRect before = editor()->cursorRect(c);
        c.setPosition(pos + 1);
        const QRect after = editor()->cursorRect(c);
        // The character's left edge, plus a little (its right edge may be on the next line).
        return QPoint(before.x() + qMax(1, (after.x() - before.x()) / 2), before.center().y());
    }
    // The menu of alternatives opened (and only one).
    ui::TokenAlternativesMenu* openMenu() const {
        const auto menus = m_app.window->findChildren<ui::TokenAlternativesMenu*>();
        return menus.size() == 1 && menus.front()->isVisible() ? menus.front() : nullptr;
    }
    // Where the passage's token `token` begins in the editor, by the recorded choices.
    int tokenStart(const storage::Passage& p, const std::vector<story::TokenChoice>& choices,
                   int token) const {
        return editor()->passageStart(p.id) + ui::displayCharsBefore(choices, token);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        QVERIFY2(QFile::exists(baton::test::fixtureDir() + "/config.json"),
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        m_db = m_tmp.filePath(QStringLiteral("baton.db"));
        m_app.start(m_db);
        if (QTest::currentTestFailed())
            return;
        QSignalSpy ready(m_app.window.get(), &ui::MainWindow::modelReady);
        m_app.window->loadModel(baton::test::fixtureDir());
        QVERIFY(ready.wait(60000));
        QTRY_VERIFY_WITH_TIMEOUT(action("actionNewStory")->isEnabled(), kAsync);
        action("actionNewStory")->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(session()->isOpen(), kAsync);
        m_story = session()->storyId();
        auto* tokens = m_app.window->findChild<QSpinBox*>(QStringLiteral("maxTokens"));
        QVERIFY(tokens);
        tokens->setValue(40);
        // A fixed seed: the same text, so the same passages and layout, in every run.
        auto* fixed = m_app.window->findChild<QCheckBox*>(QStringLiteral("fixedSeed"));
        auto* seed = m_app.window->findChild<QLineEdit*>(QStringLiteral("seed"));
        QVERIFY(fixed && seed);
        fixed->setChecked(true);
        seed->setText(QStringLiteral("1"));
        editor()->setFocus();
        QTest::keyClicks(editor(), QStringLiteral("The lighthouse keeper counted the ships."));
        action("actionGenerate")->trigger();
        waitIdle();
    }

    void cleanupTestCase() { m_app.stop(); }

    void pickAnAlternativeToBranch() {
        auto db = test::AppHarness::openReadOnly(m_db);
        QVERIFY(db);
        const auto before = *db->stories().currentPath(m_story);
        QVERIFY(before.size() >= 3);
        // The second generated passage, its second token.
        const storage::Passage& passage = before[2];
        auto choices = story::passageChoices(*db, passage.id);
        QVERIFY(choices.ok() && choices->size() > 2);
        const int token = 1;
        const story::TokenChoice& written = (*choices)[token];
        QVERIFY(!written.text.empty());
        const int start = tokenStart(passage, *choices, token);

        editor()->ensureCursorVisible();
        QTest::mouseClick(editor()->viewport(), Qt::LeftButton, Qt::ControlModifier,
                          pointOf(start));
        QTRY_VERIFY_WITH_TIMEOUT(openMenu(), kAsync);
        ui::TokenAlternativesMenu* menu = openMenu();
        // "Written: “…”, p%" and one line per alternative, the written one checked.
        QVERIFY(menu->actions().size() >= 2);
        int pick = -1, checked = 0;
        QList<QAction*> picks;
        for (QAction* a : menu->actions()) {
            if (a->isSeparator())
                continue;
            if (a->isChecked())
                ++checked;
            if (a->isEnabled() && a->text().contains(QLatin1Char('%')))
                picks << a;
        }
        QVERIFY(checked <= 1);
        QVERIFY(!picks.isEmpty());
        QVERIFY(menu->actions().front()->text().contains(QStringLiteral("Written")));
        QVERIFY(menu->actions().front()->text().contains(ui::tokenLabel(written.text)));
        // The first alternative that is not what was written.
        for (size_t i = 0; i < written.alternatives.size() && pick < 0; ++i)
            if (written.alternatives[i].text != written.text)
                pick = int(i);
        QVERIFY(pick >= 0);
        QVERIFY(picks.front()->text().startsWith(
            ui::tokenLabel(written.alternatives[size_t(pick)].text)));
        // The window with the menu over it at the word, where it pops up (a popup is a
        // window of its own; offscreen, the window is laid out again when grabbed).
        QPixmap shot = m_app.window->grab();
        {
            QPainter painter(&shot);
            painter.drawPixmap(editor()->viewport()->mapTo(m_app.window.get(), pointOf(start)),
                               menu->grab());
        }
        QDir().mkpath(QStringLiteral(BATON_SCREENSHOT_DIR));
        QVERIFY(shot.save(QStringLiteral(BATON_SCREENSHOT_DIR "/token_alternatives.png")));

        QTest::mouseClick(menu, Qt::LeftButton, {}, menu->actionGeometry(picks.front()).center());
        QVERIFY(session()->busy());
        // At once: the text before the token, and the picked one.
        const std::string shown = before[0].text + before[1].text + (*choices)[0].text +
                                  written.alternatives[size_t(pick)].text;
        QCOMPARE(editor()->storyText(), ui::toDisplayText(shown));
        waitIdle();
        QTRY_VERIFY_WITH_TIMEOUT(!openMenu(), kAsync);

        // A branch beside the old passage: its text up to the token and the picked
        // alternative, then the continuation; the old branch is still in the tree.
        const auto after = *db->stories().currentPath(m_story);
        QVERIFY(after.size() >= 4);
        QCOMPARE(after[1].id, before[1].id);
        QVERIFY(after[2].id != passage.id);
        QCOMPARE(after[2].parentId, before[1].id);
        QCOMPARE(after[2].text, (*choices)[0].text + written.alternatives[size_t(pick)].text);
        const auto siblings = *db->stories().children(m_story, before[1].id);
        QCOMPARE(siblings.size(), size_t(2));
        QCOMPARE(siblings[0].id, passage.id);
        QCOMPARE(siblings[1].id, after[2].id);
        QTRY_COMPARE_WITH_TIMEOUT(editor()->storyText(), ui::toDisplayText(joined(after)), kAsync);
        ui::StoryTreePanel* tree = m_app.window->storyTree();
        QTRY_COMPARE_WITH_TIMEOUT(tree->alternativePosition(), QStringLiteral("2 of 2"), kAsync);
        m_app.screenshot(QStringLiteral("token_alternatives_branch.png"));

        // One undo step goes back to the old text.
        QVERIFY(action("actionUndo")->isEnabled());
        action("actionUndo")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(editor()->storyText(), ui::toDisplayText(joined(before)), kAsync);
        action("actionRedo")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(editor()->storyText(), ui::toDisplayText(joined(after)), kAsync);
    }

    void theContextMenuOffersThem() {
        auto db = test::AppHarness::openReadOnly(m_db);
        const auto path = *db->stories().currentPath(m_story);
        const storage::Passage& last = path.back();
        const int at = editor()->passageStart(last.id);
        QVERIFY(at > 0);
        // The context menu runs its own loop: look at it and pick its entry from a timer.
        bool offered = false;
        QTimer::singleShot(200, this, [&] {
            auto* popup = qobject_cast<QMenu*>(QApplication::activePopupWidget());
            QAction* entry =
                popup ? popup->findChild<QAction*>(QStringLiteral("tokenAlternativesAction"))
                      : nullptr;
            offered = entry && entry->isEnabled();
            if (entry)
                entry->trigger();
            if (popup)
                popup->close();
        });
        const QPoint p = pointOf(at);
        QContextMenuEvent event(QContextMenuEvent::Mouse, p, editor()->viewport()->mapToGlobal(p));
        QCoreApplication::sendEvent(editor()->viewport(), &event);
        QVERIFY(offered);
        QTRY_VERIFY_WITH_TIMEOUT(openMenu(), kAsync);
        openMenu()->close();
        QTRY_VERIFY_WITH_TIMEOUT(!openMenu(), kAsync);

        // On the user's own text there is nothing to offer: nothing is asked.
        QSignalSpy asked(editor(), &ui::StoryEditor::alternativesRequested);
        QTest::mouseClick(editor()->viewport(), Qt::LeftButton, Qt::ControlModifier, pointOf(2));
        QCOMPARE(asked.count(), 0);

        // With typed text the alternatives show, and none can be picked.
        editor()->setFocus();
        QTest::keyClick(editor(), Qt::Key_End, Qt::ControlModifier);
        QTest::keyClicks(editor(), QStringLiteral(" And"));
        QCOMPARE(editor()->typedText(), QStringLiteral(" And"));
        QTest::mouseClick(editor()->viewport(), Qt::LeftButton, Qt::ControlModifier, pointOf(at));
        QTRY_VERIFY_WITH_TIMEOUT(openMenu(), kAsync);
        bool anyEnabled = false, said = false;
        for (QAction* a : openMenu()->actions()) {
            anyEnabled = anyEnabled || (!a->isSeparator() && a->isEnabled() &&
                                        a->text().contains(QLatin1Char('%')));
            said = said || a->text().contains(QStringLiteral("typed text"));
        }
        QVERIFY(!anyEnabled);
        QVERIFY(said);
        openMenu()->close();
    }
};

QTEST_MAIN(TestTokenAlternatives)
#include "tst_token_alternatives.moc"
