// Recall (story/recall.h): a fact stated 30 windows back is recalled and placed in the
// window when its key comes back, and not otherwise; never from text the window holds,
// from another branch, from words an edit removed, when banned or when off; the query
// rule; and a continuation with recall still resumes from its saved state.
#include "story_test_requests.h"
#include "test_support.h"
#include "verify_ok.h"

#include <baton/storage/database.h>
#include <baton/storage/story_store.h>
#include <baton/story/context.h>
#include <baton/story/recall.h>
#include <baton/story/story_service.h>

#include <QTemporaryDir>
#include <QtTest>

using namespace baton;

namespace {

const std::string kFact = "The key to the vault lies beneath the crimson lantern. ";
const std::string kFiller = "The road went on through the hills while the rain fell. ";

} // namespace

class TestStoryRecall : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<engine::Model> m_model;
    std::unique_ptr<storage::Database> m_db;
    const engine::WindowSettings kWindows{64, 8};
    int64_t m_story = 0;
    int64_t m_fact = 0;

    story::StorySettings settings() const {
        story::StorySettings s = story::defaultSettings();
        s.windows = kWindows;
        return s;
    }

    story::ContinuationPlan plan(const std::string& pending, const story::StorySettings& s) {
        auto p = story::planContinuation(*m_db, *m_model, m_story, s, pending);
        if (!p)
            qFatal("plan: %s", p.error().message.c_str());
        return std::move(*p);
    }

    // The recalled excerpts of the fact placed in the window.
    static bool factPlaced(const story::ContinuationPlan& p, int64_t fact) {
        for (const auto& c : p.recall.chunks)
            if (c.passageId == fact && c.placed)
                return true;
        return false;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        m_model = baton::test::loadRecurrentFixture(m_tmp.filePath("recurrent"));
        QVERIFY2(m_model, qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        auto db = storage::Database::open(m_tmp.filePath("recall.db").toStdString());
        BATON_VERIFY_OK(db);
        m_db = std::move(*db);
        storage::Story s;
        s.title = "The vault";
        m_story = *m_db->stories().create(s);
        m_fact = *m_db->stories().append(m_story, kFact, storage::PassageAuthor::User);
        // 30 windows of filler after it.
        const auto perFiller = m_model->tokenizer()->encode(kFiller).size();
        const size_t fillers = 30 * size_t(kWindows.window) / perFiller + 1;
        for (size_t i = 0; i < fillers; ++i)
            BATON_VERIFY_OK(
                m_db->stories().append(m_story, kFiller, storage::PassageAuthor::Model));
    }

    void termsAreNamesAndRareWords() {
        QCOMPARE(story::recallTerms("And then she asked Margaret about the old lantern, quietly."),
                 (std::vector<std::string>{"quietly", "lantern", "Margaret"}));
        QCOMPARE(story::recallTerms("the the the and of"), std::vector<std::string>{});
        // Newest first, once each, at most the limit.
        std::string many;
        for (int i = 0; i < 30; ++i)
            many += "Name" + std::to_string(i) + " ";
        const auto terms = story::recallTerms(many + "Name29");
        QCOMPARE(terms.size(), story::kRecallMaxTerms);
        QCOMPARE(terms.front(), std::string("Name29"));
        // Only the end of the text is read.
        QVERIFY(story::recallTerms("Margaret " + std::string(2000, ' ')).empty());
        // Query syntax and any script are words or nothing, never an error.
        for (const std::string& t :
             std::vector<std::string>{"\"NEAR(vault lantern)\" * ^ AND OR NOT", "東京の夜", "Ёлка",
                                      "\xff\xfe broken", std::string("nul\0x", 5)})
            story::recallTerms(t);
    }

    void aFactThirtyWindowsBackComesBackWithItsKey() {
        const story::StorySettings s = settings();
        auto asked = plan("She thought of the vault and the lantern.", s);
        QVERIFY(asked.recall.enabled);
        QVERIFY2(factPlaced(asked, m_fact), "the fact is recalled when its key comes back");
        const auto& c = asked.recall.chunks.front();
        QCOMPARE(c.passageId, m_fact);
        QCOMPARE(c.text, kFact);
        QVERIFY(c.pathEnd <= asked.recall.windowStart);
        QVERIFY(asked.recall.tokens <= asked.recall.budget);
        // The window reads it as guidance, labelled with the words that matched.
        auto view = story::describeContext(asked, *m_model);
        BATON_VERIFY_OK(view);
        bool shown = false;
        for (const auto& span : view->spans)
            if (span.kind == story::SegmentKind::Recalled) {
                QVERIFY(span.text.find("Earlier: The key to the vault") != std::string::npos);
                QVERIFY(span.label.find("vault") != std::string::npos);
                shown = true;
            }
        QVERIFY(shown);
        QCOMPARE(story::windowAt(*view, c.pathStart), int64_t(0));
        QVERIFY(view->windowIndex >= 29);

        // Not otherwise: the recent text does not name it.
        auto unasked = plan("She walked on without a word.", s);
        QVERIFY(!factPlaced(unasked, m_fact));
        // Off, or banned: never.
        story::StorySettings off = s;
        off.recall.enabled = false;
        auto none = plan("She thought of the vault and the lantern.", off);
        QVERIFY(none.recall.chunks.empty());
        QCOMPARE(none.room.recallBudget, 0);
        story::StorySettings banned = s;
        banned.recall.banned.emplace_back(m_fact, 0);
        QVERIFY(!factPlaced(plan("She thought of the vault and the lantern.", banned), m_fact));
    }

    void textInTheWindowIsNotRecalled() {
        // The filler is everywhere, its last windows included: only chunks before the
        // window come back.
        auto p = plan("The rain and the hills.", settings());
        for (const auto& c : p.recall.chunks)
            QVERIFY(c.pathEnd <= p.recall.windowStart);
        QVERIFY(p.recall.windowStart > 0);
        // A fact the window still holds is not read twice.
        const auto leaf = m_db->stories().currentPath(m_story)->back().id;
        const int64_t compass = *m_db->stories().append(
            m_story, "The silver compass points north. ", storage::PassageAuthor::User);
        auto near = plan("Where was the compass?", settings());
        for (const auto& c : near.recall.chunks)
            QVERIFY(c.passageId != compass);
        BATON_VERIFY_OK(m_db->stories().setCurrent(m_story, leaf));
    }

    void editsAndBranchesAreFollowed() {
        const story::StorySettings s = settings();
        // An edit: the old words no longer recall it, the new ones do.
        auto edited = m_db->stories().editPassage(
            m_fact, "The key to the cellar lies beneath the crimson lantern. ");
        BATON_VERIFY_OK(edited);
        QVERIFY(!factPlaced(plan("She thought of the vault.", s), m_fact));
        QVERIFY(factPlaced(plan("She thought of the cellar.", s), m_fact));
        BATON_VERIFY_OK(m_db->stories().editPassage(m_fact, kFact));
        // A branch without the fact: a new root with its own filler.
        auto path = *m_db->stories().currentPath(m_story);
        const int64_t leaf = path.back().id;
        BATON_VERIFY_OK(m_db->stories().addPassage(m_story, 0, "Another beginning. ",
                                                   storage::PassageAuthor::User, true));
        for (int i = 0; i < 200; ++i)
            BATON_VERIFY_OK(
                m_db->stories().append(m_story, kFiller, storage::PassageAuthor::Model));
        QVERIFY(!factPlaced(plan("She thought of the vault and the lantern.", s), m_fact));
        BATON_VERIFY_OK(m_db->stories().setCurrent(m_story, leaf));
        QVERIFY(factPlaced(plan("She thought of the vault and the lantern.", s), m_fact));
    }

    void recallKeepsTheSavedStates() {
        // Two continuations that recall the fact: the second resumes from the state the
        // first saved instead of reading the story again.
        story::StoryService service(*m_db);
        auto r = baton::test::storyRequest(m_story, 5, 24);
        r.settings.windows = kWindows;
        r.userText = "She thought of the vault and the lantern.";
        auto first = service.continueStory(m_model, r, nullptr);
        BATON_VERIFY_OK(first);
        story::StoryService fresh(*m_db); // a new process: no kept generator
        auto again = baton::test::storyRequest(m_story, 6, 24);
        again.settings.windows = kWindows;
        again.userText = " The vault again.";
        QVERIFY(factPlaced(plan(again.userText, again.settings), m_fact));
        auto second = fresh.continueStory(m_model, again, nullptr);
        BATON_VERIFY_OK(second);
        QVERIFY(second->resumedFromPassage != 0);
        QVERIFY(second->tokensRead < 4 * kWindows.window);
    }
};

QTEST_GUILESS_MAIN(TestStoryRecall)
#include "tst_story_recall.moc"
