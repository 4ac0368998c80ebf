// The story engine (story/story_service.h): one recorded generation per continuation,
// resuming from the latest saved state, the kept generator, retry after a reopen,
// and the chunk transaction when the database refuses a write.
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include "chunk_writer.h"
#include "connection.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/storage/database.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/story/prompt.h>
#include <baton/story/resume.h>
#include <baton/story/retry.h>
#include <baton/story/story_service.h>

#include <QTemporaryDir>
#include <QtTest>

using namespace baton;

class TestStoryService : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<engine::Model> m_model; // recurrent, T 16, o 4
    std::string m_dbPath;
    int m_dbs = 0;

    std::unique_ptr<storage::Database> openDb() {
        auto db = storage::Database::open(m_dbPath);
        return db.ok() ? std::move(*db) : nullptr;
    }

    static story::ContinueRequest request(int64_t story, uint64_t seed, int tokens = 40) {
        story::ContinueRequest r;
        r.storyId = story;
        r.settings = story::defaultSettings();
        r.settings.sampling.seed = seed;
        r.settings.sampling.maxTokens = tokens;
        r.settings.sampling.stopAtEndOfText = false;
        r.chunkTokens = 8;
        return r;
    }

    static std::string text(const std::vector<storage::Passage>& path, size_t from = 0) {
        std::string t;
        for (size_t i = from; i < path.size(); ++i)
            t += path[i].text;
        return t;
    }

    int64_t newStory(storage::Database& db, const std::string& memory = {},
                     const std::string& note = {}) {
        storage::Story s;
        s.title = "A story";
        s.memory = memory;
        s.authorsNote = note;
        return *db.stories().create(s);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        const QString dir = m_tmp.filePath("recurrent");
        engine::RecurrenceConfig rec;
        rec.window = 16;
        rec.overlap = 4;
        QVERIFY(baton::test::writeRecurrentFixture(dir, rec));
        auto model = engine::Model::load(dir.toStdString());
        BATON_VERIFY_OK(model);
        m_model = *model;
    }

    void init() { m_dbPath = m_tmp.filePath(QString("stories-%1.db").arg(++m_dbs)).toStdString(); }

    void continuesAsOneRecordedGeneration() {
        auto db = openDb();
        const int64_t id = newStory(*db, "The ship is called Tern.", "Keep it short.");
        story::StoryService service(*db);
        auto r = request(id, 3);
        r.userText = "It was a dark night on the sea.";
        std::string streamed;
        auto done = service.continueStory(m_model, r, [&](const engine::GenerationEvent& e) {
            streamed += e.text;
            return true;
        });
        BATON_VERIFY_OK(done);
        QCOMPARE(done->generation.tokens.size(), size_t(40));
        QVERIFY(done->chunks >= 2 && done->states >= 1);
        QVERIFY(done->generationId != 0);
        QCOMPARE(done->resumedFromPassage, int64_t(0));
        // Read: the memory, the user's text, the note.
        QCOMPARE(done->readText,
                 std::string("The ship is called Tern.\n\nIt was a dark night on the "
                             "sea.\n[Author's note: Keep it short.]\n"));
        const auto path = *db->stories().currentPath(id);
        QCOMPARE(path.front().id, done->userPassageId);
        QCOMPARE(path.front().generationId, int64_t(0));
        QCOMPARE(done->parentId, done->userPassageId);
        QCOMPARE(done->lastPassageId, path.back().id);
        for (size_t i = 1; i < path.size(); ++i) { // one chain of chunks under explicit parents
            QCOMPARE(path[i].generationId, done->generationId);
            QCOMPARE(path[i].parentId, path[i - 1].id);
            QCOMPARE(path[i].author, storage::PassageAuthor::Model);
        }
        QCOMPARE(text(path, 1), streamed);
        auto g = db->generations().get(done->generationId);
        QCOMPARE(g->parentId, done->userPassageId);
        QVERIFY(g->settingsJson.find("\"seed\":3") != std::string::npos);
        // States are saved with the engine's current format; pruning keeps about one per
        // window.
        const int64_t kept = *db->states().countForStory(id);
        QVERIFY(kept >= 1 && kept <= done->states);
        auto latest = db->states().latestOnPath(path.back().id, m_model->info().identity, 16, 4,
                                                int(engine::kStateFormatVersion));
        QVERIFY(latest->has_value());
    }

    void resumesFromTheLatestStateOrTheKeptGenerator() {
        auto db = openDb();
        const int64_t id = newStory(*db, {}, "Be brief.");
        story::StoryService first(*db);
        auto r = request(id, 5);
        r.userText = "Once upon a time";
        QVERIFY(first.continueStory(m_model, r).ok());
        // Another service (the story reopened): from the latest saved state, reading the
        // passages after it and the note.
        story::StoryService second(*db);
        const auto path = *db->stories().currentPath(id);
        auto latest = *db->states().latestOnPath(path.back().id, m_model->info().identity, 16, 4,
                                                 int(engine::kStateFormatVersion));
        QVERIFY(latest.has_value());
        auto resumed = second.continueStory(m_model, request(id, 6));
        QVERIFY(resumed.ok());
        QCOMPARE(resumed->resumedFromPassage, latest->passageId);
        QVERIFY(!resumed->reusedGenerator);
        size_t after = 0;
        while (path[after].id != latest->passageId)
            ++after;
        QCOMPARE(resumed->readText, text(path, after + 1) + "\n[Author's note: Be brief.]\n");
        // The same service again, nothing changed meanwhile: its kept generator, when
        // the last chunk was saved with its state, reads only the note.
        auto again = second.continueStory(m_model, request(id, 7));
        QVERIFY(again.ok());
        if (again->reusedGenerator)
            QCOMPARE(again->readText, std::string("\n[Author's note: Be brief.]\n"));
        // An edit of the path makes the kept generator useless: it is not used.
        const auto now = *db->stories().currentPath(id);
        QVERIFY(db->stories().editPassage(now.front().id, "Twice upon a time").ok());
        auto edited = second.continueStory(m_model, request(id, 8));
        QVERIFY(edited.ok());
        QVERIFY(!edited->reusedGenerator);
        QCOMPARE(edited->resumedFromPassage, int64_t(0)); // the edit deleted every state
    }

    void theKeptGeneratorAndTheSavedStateAgree() {
        auto db = openDb();
        const int64_t id = newStory(*db);
        story::StoryService service(*db);
        auto r = request(id, 11, 32);
        r.userText = "The lighthouse keeper";
        QVERIFY(service.continueStory(m_model, r).ok());
        const int64_t copy = *db->stories().duplicate(id, "Copy");
        // The original continues with the kept generator, the copy from its saved state.
        auto a = service.continueStory(m_model, request(id, 12, 24));
        story::StoryService fresh(*db);
        auto b = fresh.continueStory(m_model, request(copy, 12, 24));
        QVERIFY(a.ok() && b.ok());
        QVERIFY(!b->reusedGenerator);
        QCOMPARE(a->generation.tokens, b->generation.tokens);
        QCOMPARE(a->generation.text, b->generation.text);
    }

    void retryAfterReopenRewritesExactlyTheLastGeneration() {
        int64_t id = 0, firstEnd = 0, secondStart = 0, passagesBefore = 0;
        {
            auto db = openDb();
            id = newStory(*db);
            story::StoryService service(*db);
            auto r = request(id, 21, 24);
            r.userText = "She opened the door";
            auto one = service.continueStory(m_model, r);
            auto two = service.continueStory(m_model, request(id, 22, 24));
            QVERIFY(one.ok() && two.ok());
            QVERIFY(one->generationId != two->generationId);
            firstEnd = one->lastPassageId;
            QCOMPARE(two->parentId, firstEnd);
            const auto path = *db->stories().currentPath(id);
            for (const auto& p : path)
                if (p.generationId == two->generationId && p.parentId == firstEnd)
                    secondStart = p.id;
            passagesBefore = *db->stories().passageCount(id);
        }
        // Reopened: a new connection, a new service.
        auto db = openDb();
        const auto path = *db->stories().currentPath(id);
        const auto target = story::retryTarget(path);
        QVERIFY(target.has_value());
        QCOMPARE(target->parentId, firstEnd);
        QCOMPARE(path[target->firstIndex].id, secondStart);
        story::StoryService service(*db);
        auto retryRequest = request(id, 23, 24);
        retryRequest.retry = true;
        auto three = service.continueStory(m_model, retryRequest);
        BATON_VERIFY_OK(three);
        QCOMPARE(three->parentId, firstEnd);
        // The old generation stays in the tree, beside the new one.
        auto siblings = *db->stories().children(id, firstEnd);
        QCOMPARE(siblings.size(), size_t(2));
        QCOMPARE(siblings[0].id, secondStart);
        QVERIFY(*db->stories().passageCount(id) > passagesBefore);
        const auto now = *db->stories().currentPath(id);
        QCOMPARE(now.back().generationId, three->generationId);
        // And again: a third alternative at the same place.
        retryRequest.settings.sampling.seed = 24;
        QCOMPARE(service.continueStory(m_model, retryRequest)->parentId, firstEnd);
        QCOMPARE(db->stories().children(id, firstEnd)->size(), size_t(3));
    }

    void retryOfTextWrittenBeforeGenerationsWereRecorded() {
        // Model passages without a generation (schema v2): the trailing run of them.
        std::vector<storage::Passage> path(4);
        const storage::PassageAuthor authors[] = {
            storage::PassageAuthor::User, storage::PassageAuthor::Model,
            storage::PassageAuthor::User, storage::PassageAuthor::Model};
        for (int i = 0; i < 4; ++i) {
            path[size_t(i)].id = i + 1;
            path[size_t(i)].parentId = i;
            path[size_t(i)].author = authors[i];
        }
        auto t = story::retryTarget(path);
        QVERIFY(t.has_value());
        QCOMPARE(t->firstIndex, size_t(3));
        QCOMPARE(t->parentId, int64_t(3));
        path.pop_back(); // ends with the user's text: nothing to retry
        QVERIFY(!story::retryTarget(path).has_value());
        QVERIFY(!story::retryTarget({}).has_value());
        auto db = openDb();
        const int64_t id = newStory(*db);
        QVERIFY(db->stories().append(id, "Only mine.", storage::PassageAuthor::User).ok());
        story::StoryService service(*db);
        auto r = request(id, 1);
        r.retry = true;
        auto refused = service.continueStory(m_model, r);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().kind, story::ErrorKind::InvalidRequest);
    }

    void badRequestsSaveNothing() {
        auto db = openDb();
        const int64_t id = newStory(*db);
        story::StoryService service(*db);
        auto r = request(id, 1);
        r.userText = "Typed text";
        r.settings.windows = {4096, 0}; // beyond the model's positions
        auto bad = service.continueStory(m_model, r);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().kind, story::ErrorKind::Engine);
        QCOMPARE(*db->stories().passageCount(id), int64_t(0));
        r.settings.windows = {};
        r.settings.sampling.topP = 0; // invalid sampling
        QCOMPARE(service.continueStory(m_model, r).error().kind, story::ErrorKind::Engine);
        QCOMPARE(*db->stories().passageCount(id), int64_t(0));
        auto missing = service.continueStory(m_model, request(424242, 1));
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().storage.has_value());
        QCOMPARE(missing.error().storage->code, storage::StorageErrorCode::NotFound);
        QVERIFY(!service.continueStory(nullptr, request(id, 1)).ok());
    }

    void aChunkTheDatabaseRefusesIsSavedWithTheNext() {
        auto db = openDb();
        const int64_t id = newStory(*db);
        const int64_t start = *db->stories().append(id, "Begin.", storage::PassageAuthor::User);
        auto gen = engine::Generator::create(m_model, {16, 4});
        QVERIFY(gen.ok());
        story::ChunkWriter writer(*db, {id, start, "{}", m_model->info().identity}, **gen);
        auto chunk = [](const std::string& t) {
            engine::StateChunk c;
            c.text = t;
            return c;
        };
        QVERIFY(writer.save(chunk(" one")));
        auto& c = db->connection();
        c.exec("CREATE TEMP TRIGGER refuse BEFORE INSERT ON passages BEGIN "
               "SELECT RAISE(ABORT, 'injected failure'); END");
        QVERIFY(!writer.save(chunk(" two")));
        QVERIFY(writer.error().has_value());
        QCOMPARE(*db->stories().passageCount(id), int64_t(2)); // nothing of it was written
        c.exec("DROP TRIGGER refuse");
        QVERIFY(writer.save(chunk(" three")));
        QVERIFY(!writer.error().has_value());
        const auto path = *db->stories().currentPath(id);
        QCOMPARE(path.size(), size_t(3));
        QCOMPARE(path[2].text, std::string(" two three")); // kept, saved with the next
        QCOMPARE(path[1].generationId, writer.generationId());
        QCOMPARE(path[2].generationId, writer.generationId());
        QCOMPARE(writer.chunks(), int64_t(2));

        // Through a continuation: a refused write stops the generation and is reported;
        // what came before it is saved.
        c.exec("CREATE TEMP TRIGGER refuse_late BEFORE INSERT ON passages WHEN "
               "(SELECT count(*) FROM passages WHERE story_id = NEW.story_id) >= 5 BEGIN "
               "SELECT RAISE(ABORT, 'injected failure'); END");
        story::StoryService service(*db);
        auto r = service.continueStory(m_model, request(id, 2, 64));
        QVERIFY(r.ok());
        QVERIFY(r->saveError.has_value());
        QCOMPARE(r->generation.reason, engine::StopReason::Callback);
        QCOMPARE(*db->stories().passageCount(id), int64_t(5));
        QVERIFY(r->generation.tokens.size() < 64);
    }
};

QTEST_GUILESS_MAIN(TestStoryService)
#include "tst_story_service.moc"
