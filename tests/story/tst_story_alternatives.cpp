// Token alternatives through the story engine (story/story_service.h): every generated
// token's alternatives are saved with its passage, as the generation streamed them;
// none when none are asked for; a branch at a token continues from the picked
// alternative, and a retry after it rewrites only the continuation; a duplicated story
// keeps them.
#include "story_test_requests.h"
#include "test_support.h"
#include "verify_ok.h"

#include <baton/engine/model.h>
#include <baton/storage/database.h>
#include <baton/storage/story_store.h>
#include <baton/storage/token_choice_store.h>
#include <baton/story/story_service.h>
#include <baton/story/token_choices.h>

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace baton;

class TestStoryAlternatives : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<engine::Model> m_model; // recurrent, T 16, o 4
    int m_dbs = 0;

    std::unique_ptr<storage::Database> openDb() {
        auto db = storage::Database::open(
            m_tmp.filePath(QString("alternatives-%1.db").arg(++m_dbs)).toStdString());
        return db.ok() ? std::move(*db) : nullptr;
    }

    static story::ContinueRequest request(int64_t story, uint64_t seed, int tokens = 40) {
        return baton::test::storyRequest(story, seed, tokens);
    }

    static int64_t newStory(storage::Database& db) {
        storage::Story s;
        s.title = "A story";
        return *db.stories().create(s);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        m_model = baton::test::loadRecurrentFixture(m_tmp.filePath("recurrent"));
        QVERIFY2(m_model, qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
    }

    void everyTokensAlternativesAreSaved() {
        auto db = openDb();
        const int64_t id = newStory(*db);
        story::StoryService service(*db);
        auto r = request(id, 3);
        r.userText = "It was a dark night on the sea.";
        std::vector<engine::GenerationEvent> events;
        auto done = service.continueStory(m_model, r, [&](const engine::GenerationEvent& e) {
            if (e.token >= 0)
                events.push_back(e);
            return true;
        });
        BATON_VERIFY_OK(done);
        QCOMPARE(events.size(), size_t(40));
        const auto path = *db->stories().currentPath(id);
        QVERIFY(path.size() >= 3);
        // The passages' tokens, in order, are the generation's: each with the
        // probability it streamed with, and the alternatives it streamed, decoded.
        size_t next = 0;
        const auto& tok = *m_model->tokenizer();
        for (size_t i = 1; i < path.size(); ++i) {
            auto choices = story::passageChoices(*db, path[i].id);
            BATON_VERIFY_OK(choices);
            QVERIFY(!choices->empty());
            std::string text;
            for (const story::TokenChoice& c : *choices) {
                QVERIFY(next < events.size());
                const engine::GenerationEvent& e = events[next++];
                text += c.text;
                QCOMPARE(c.logprob, e.logprob);
                QCOMPARE(int(e.topLogprobs.size()), story::kRecordedAlternatives);
                QVERIFY(!c.alternatives.empty() &&
                        c.alternatives.size() <= size_t(story::kRecordedAlternatives));
                size_t k = 0; // the streamed alternatives that are text, in the same order
                for (const auto& [altId, altLogprob] : e.topLogprobs) {
                    const std::string altText = tok.decode({altId});
                    if (k < c.alternatives.size() && c.alternatives[k].text == altText &&
                        c.alternatives[k].logprob == altLogprob)
                        ++k;
                }
                QCOMPARE(k, c.alternatives.size());
                for (size_t j = 1; j < c.alternatives.size(); ++j)
                    QVERIFY(c.alternatives[j].logprob <= c.alternatives[j - 1].logprob);
                for (const story::Alternative& a : c.alternatives)
                    if (a.text == c.text)
                        QCOMPARE(a.logprob, c.logprob);
            }
            QCOMPARE(text, path[i].text);
        }
        QCOMPARE(next, events.size());
        // A few KB per passage at most.
        for (size_t i = 1; i < path.size(); ++i)
            QVERIFY(db->tokenChoices().get(path[i].id)->size() < 4096);
        // The user's text has none.
        QVERIFY(db->tokenChoices().get(path.front().id)->empty());
    }

    void noneWhenNoneAreAsked() {
        auto db = openDb();
        const int64_t id = newStory(*db);
        story::StoryService service(*db);
        auto r = request(id, 4, 24);
        r.userText = "Once";
        r.alternatives = 0;
        std::vector<engine::GenerationEvent> events;
        auto done = service.continueStory(m_model, r, [&](const engine::GenerationEvent& e) {
            events.push_back(e);
            return true;
        });
        BATON_VERIFY_OK(done);
        const auto path = *db->stories().currentPath(id);
        QVERIFY(path.size() >= 2);
        for (const auto& p : path)
            QVERIFY(db->tokenChoices().get(p.id)->empty());
        QVERIFY(std::isnan(events.front().logprob)); // and the model computed none
        r.alternatives = 21;
        QVERIFY(!service.continueStory(m_model, r));
    }

    void aBranchContinuesFromThePickedToken() {
        auto db = openDb();
        const int64_t id = newStory(*db);
        story::StoryService service(*db);
        auto r = request(id, 5, 32);
        r.userText = "The lighthouse keeper";
        BATON_VERIFY_OK(service.continueStory(m_model, r));
        const auto path = *db->stories().currentPath(id);
        // The second generated passage, at its third token, with an alternative that
        // differs from what was written.
        const storage::Passage& at = path[2];
        const auto choices = *story::passageChoices(*db, at.id);
        QVERIFY(choices.size() > 2);
        const story::TokenChoice& c = choices[2];
        int pick = 0;
        while (size_t(pick) < c.alternatives.size() && c.alternatives[size_t(pick)].text == c.text)
            ++pick;
        QVERIFY(size_t(pick) < c.alternatives.size());
        const std::string expected =
            choices[0].text + choices[1].text + c.alternatives[size_t(pick)].text;

        auto b = request(id, 6, 24);
        b.branch = story::TokenBranch{at.id, 2, pick};
        std::string streamed;
        auto done = service.continueStory(m_model, b, [&](const engine::GenerationEvent& e) {
            streamed += e.text;
            return true;
        });
        BATON_VERIFY_OK(done);
        QVERIFY(done->branchPassageId != 0);
        QCOMPARE(done->parentId, done->branchPassageId);
        const auto branched = *db->stories().currentPath(id);
        // The path: the same up to the passage, then the branch and its continuation.
        QCOMPARE(branched[1].id, path[1].id);
        QCOMPARE(branched[2].id, done->branchPassageId);
        QCOMPARE(branched[2].text, expected);
        QCOMPARE(branched[2].parentId, path[1].id);
        std::string after;
        for (size_t i = 3; i < branched.size(); ++i)
            after += branched[i].text;
        QCOMPARE(after, streamed);
        QVERIFY(!streamed.empty());
        // The old passage and what followed it are still there.
        QCOMPARE(db->stories().passage(at.id)->text, at.text);
        QCOMPARE(db->stories().children(id, at.id)->front().id, path[3].id);

        // A retry rewrites the continuation, not the picked token.
        auto again = request(id, 7, 16);
        again.retry = true;
        auto retried = service.continueStory(m_model, again);
        BATON_VERIFY_OK(retried);
        QCOMPARE(retried->parentId, done->branchPassageId);
        QCOMPARE(db->stories().currentPath(id)->at(2).text, expected);

        // Not together with typed text or a retry.
        auto both = request(id, 8, 8);
        both.branch = story::TokenBranch{at.id, 2, pick};
        both.userText = "typed";
        QVERIFY(!service.continueStory(m_model, both));
        both.userText.clear();
        both.retry = true;
        QVERIFY(!service.continueStory(m_model, both));
    }

    void aDuplicateKeepsThem() {
        auto db = openDb();
        const int64_t id = newStory(*db);
        story::StoryService service(*db);
        auto r = request(id, 9, 24);
        r.userText = "A copy";
        BATON_VERIFY_OK(service.continueStory(m_model, r));
        const int64_t copy = *db->stories().duplicate(id, "Copy");
        const auto a = *db->stories().currentPath(id);
        const auto b = *db->stories().currentPath(copy);
        QCOMPARE(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i)
            QCOMPARE(*db->tokenChoices().get(b[i].id), *db->tokenChoices().get(a[i].id));
        // Deleting the copy's passages deletes their choices.
        const int64_t removed = b[1].id;
        BATON_VERIFY_OK(db->stories().removePassage(removed));
        QVERIFY(db->tokenChoices().get(removed)->empty());
    }
};

QTEST_GUILESS_MAIN(TestStoryAlternatives)
#include "tst_story_alternatives.moc"
