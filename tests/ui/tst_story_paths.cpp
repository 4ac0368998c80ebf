// One story engine for every client: the same story continued through baton-cli
// (a process per command) and through the app's StorySession (the engine thread, the
// storage thread) with the same seeds and settings ends with identical passages, tree,
// recorded generations and saved states, byte for byte. The steps: continue, continue
// (resuming from the saved state), retry (an alternative to the last generation, read
// from the database), continue. An adventure's continuation stops before the player's
// next turn in both (the story layer's rule, not the app's).
//
// The app keeps its generator between continuations of an open story (no re-reading);
// the CLI, a new process each time, resumes from the saved state and reads the text
// after it in one batched pass. The tokens and texts are the same either way, but a
// batched pass sums in another order than token-by-token decoding, so the states
// saved after a kept generator differ from the CLI's in the last bits of their floats:
// that variant is compared with the states' sizes instead of their bytes. With a new
// session for every step (the app restarted) it resumes exactly as the CLI does, and
// the states match byte for byte.
#include "cli_run.h"
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include "story_session.h"

#include <baton/engine/model.h>
#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/database.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/story/settings.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <sstream>

using namespace baton;

namespace {

constexpr int kChunkTokens = 4;

// Everything a story's continuation leaves in the database except times, as text
// (a failed comparison prints the first line that differs).
// withBlobs false: the states' sizes instead of their bytes.
std::string describeStory(storage::Database& db, int64_t storyId, const std::string& identity,
                          int window, int overlap, bool withBlobs) {
    std::ostringstream out;
    auto story = db.stories().get(storyId);
    if (!story)
        return "story: " + storage::describe(story.error());
    out << "current " << story->currentPassageId << "\n";
    auto passages = db.stories().allPassages(storyId);
    if (!passages)
        return "passages: " + storage::describe(passages.error());
    for (const auto& p : *passages) {
        out << "passage " << p.id << " parent " << p.parentId << " author "
            << static_cast<int>(p.author) << " generation " << p.generationId << " text [" << p.text
            << "]\n";
        if (p.generationId != 0) {
            auto g = db.generations().get(p.generationId);
            if (!g)
                return "generation: " + storage::describe(g.error());
            out << "  generation " << g->id << " parent " << g->parentId << " settings "
                << g->settingsJson << "\n";
        }
        auto states = db.states().forPassage(p.id);
        if (!states)
            return "states: " + storage::describe(states.error());
        for (const auto& s : *states) {
            out << "  state window " << s.windowIndex << " offset " << s.tokenOffset << " T "
                << s.window << " o " << s.overlap << " format " << s.formatVersion << " layout "
                << s.layout;
            auto full = db.states().latestOnPath(p.id, identity, window, overlap, s.formatVersion,
                                                 s.layout);
            if (full && *full && (*full)->passageId == p.id && !withBlobs)
                out << " bytes " << (*full)->blob.size();
            else if (full && *full && (*full)->passageId == p.id)
                out << " blob "
                    << QByteArray(reinterpret_cast<const char*>((*full)->blob.data()),
                                  static_cast<int>((*full)->blob.size()))
                           .toHex()
                           .toStdString();
            out << "\n";
        }
    }
    return out.str();
}

// "" when equal, else the first line that differs in each.
std::string firstDifference(const std::string& a, const std::string& b) {
    std::istringstream sa(a), sb(b);
    std::string la, lb;
    for (int line = 1;; ++line) {
        const bool ha = static_cast<bool>(std::getline(sa, la));
        const bool hb = static_cast<bool>(std::getline(sb, lb));
        if (!ha && !hb)
            return {};
        if (ha != hb || la != lb)
            return "line " + std::to_string(line) + ":\n  app: " + (ha ? la : "(end)") +
                   "\n  cli: " + (hb ? lb : "(end)");
    }
}

// The steps, each with its own seed: continue, continue, retry, continue.
struct Step {
    bool retry;
    int seed;
};
const Step kSteps[] = {{false, 11}, {false, 12}, {true, 13}, {false, 14}};

} // namespace

class TestStoryPaths : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_model;
    std::string m_identity;
    std::string m_settings;
    QString m_cliDb;
    int64_t m_cliStory = 0;

    // A story with the model, the settings and one user passage; returns its id.
    int64_t makeStory(const QString& dbPath, storage::StoryMode mode = storage::StoryMode::Story) {
        auto db = storage::Database::open(dbPath.toStdString());
        if (!db)
            return -1;
        storage::Story s;
        s.mode = mode;
        s.title = "Two roads";
        s.memory = "The keeper is called Ada.";
        s.authorsNote = "Stormy.";
        s.modelPath = m_model.toStdString();
        s.settingsJson = m_settings;
        auto id = (*db)->stories().create(s);
        if (!id || !(*db)->stories().append(*id,
                                            "The lamp of the lighthouse went out at "
                                            "nine.",
                                            storage::PassageAuthor::User))
            return -1;
        return *id;
    }

    // The steps through baton-cli, one process per step, on the story in dbPath.
    static void runCli(const QString& dbPath, int64_t story, const std::vector<Step>& steps) {
        for (const Step& step : steps) {
            QStringList args{"--db",
                             dbPath,
                             "story",
                             "generate",
                             QString::number(story),
                             "--chunk-tokens",
                             QString::number(kChunkTokens),
                             "--threads",
                             "1",
                             "--quiet",
                             "--seed",
                             QString::number(step.seed)};
            if (step.retry)
                args << "--retry";
            const auto r = baton::test::cli(args);
            QVERIFY2(r.exitCode == 0, r.err.constData());
        }
    }

    // The steps through StorySession on a new database; reopen: a new session for every
    // step, as if the app had been restarted (no kept generator). Returns the
    // database's path ("" on failure).
    QString runApp(const QString& name, bool reopen,
                   const std::vector<Step>& steps = std::vector<Step>(std::begin(kSteps),
                                                                      std::end(kSteps)),
                   storage::StoryMode mode = storage::StoryMode::Story) {
        const QString dbPath = m_tmp.filePath(name);
        const int64_t id = makeStory(dbPath, mode);
        if (id != m_cliStory) {
            QTest::qFail("the app's story was not made", __FILE__, __LINE__);
            return {};
        }
        storage::StorageController storage;
        engine::ModelJobs engine;
        QSignalSpy opened(&storage, &storage::StorageController::opened);
        storage.open(dbPath);
        if (!opened.wait(10000))
            return {};
        QSignalSpy loaded(&engine, &engine::ModelJobs::modelLoaded);
        engine.load(this, m_model, {}, {});
        if (!loaded.wait(60000))
            return {};

        std::unique_ptr<ui::StorySession> session;
        int failures = 0;
        auto settings = story::parseSettings(m_settings);
        if (!settings)
            return {};
        for (const Step& step : steps) {
            if (reopen || !session) { // a new session: as if the app had been restarted
                session = std::make_unique<ui::StorySession>(storage, engine);
                session->setDatabasePath(dbPath);
                session->setChunkTokens(kChunkTokens);
                connect(session.get(), &ui::StorySession::failed, this, [&] { ++failures; });
                QSignalSpy openedStory(session.get(), &ui::StorySession::opened);
                session->open(id);
                if (!openedStory.wait(10000))
                    return {};
            }
            settings->sampling.seed = static_cast<uint64_t>(step.seed);
            QSignalSpy finished(session.get(), &ui::StorySession::generationFinished);
            if (step.retry) {
                if (!session->canRetry())
                    return {};
                session->retry(*settings);
            } else if (!session->generate(QString(), *settings)) {
                return {};
            }
            if (!finished.wait(120000))
                return {};
            if (!QTest::qWaitFor([&] { return !session->busy(); }, 10000))
                return {};
        }
        if (failures != 0)
            return {};
        session.reset();
        QSignalSpy flushed(&storage, &storage::StorageController::flushed);
        storage.flush();
        return flushed.wait(10000) ? dbPath : QString();
    }

    std::string describe(const QString& dbPath, bool withBlobs) const {
        auto db = storage::Database::open(dbPath.toStdString());
        if (!db)
            return "cannot open " + dbPath.toStdString();
        return describeStory(**db, m_cliStory, m_identity, 48, 4, withBlobs);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        engine::initializeRuntime(1); // the CLI runs with --threads 1: the same kernels
        QVERIFY(m_tmp.isValid());
        m_model = m_tmp.filePath("recurrent");
        engine::RecurrenceConfig rec;
        rec.window = 48; // room for the memory, the author's note and new text
        rec.overlap = 4;
        QVERIFY(baton::test::writeRecurrentFixture(m_model, rec));
        auto model = engine::Model::load(m_model.toStdString());
        BATON_VERIFY_OK(model);
        m_identity = (*model)->info().identity;

        story::StorySettings settings = story::defaultSettings();
        settings.fixedSeed = true;
        settings.sampling.seed = 1;       // every step gives its own
        settings.sampling.maxTokens = 22; // several chunks; more than one window in all
        settings.sampling.stopAtEndOfText = false;
        m_settings = story::settingsJson(settings);

        // The CLI: one process per step.
        m_cliDb = m_tmp.filePath("cli.db");
        m_cliStory = makeStory(m_cliDb);
        QVERIFY(m_cliStory > 0);
        runCli(m_cliDb, m_cliStory, {std::begin(kSteps), std::end(kSteps)});
        QVERIFY(!QTest::currentTestFailed());
        const std::string cli = describe(m_cliDb, true);
        // Four generations, the third an alternative to the second: a branch point.
        QVERIFY2(cli.find("generation 4 parent") != std::string::npos, cli.c_str());
        QVERIFY2(cli.find(" blob ") != std::string::npos, cli.c_str());
    }

    // Restarted before every step, the app resumes from the saved states as the CLI
    // does: everything is identical, the states' bytes too.
    void restartedEveryStepMatchesTheCliByteForByte() {
        const QString app = runApp("app-restarted.db", true);
        QVERIFY(!app.isEmpty());
        const std::string difference =
            firstDifference(describe(app, true), describe(m_cliDb, true));
        QVERIFY2(difference.empty(), difference.c_str());
    }

    // Kept open (the generator kept between continuations): the same passages, tree,
    // generations and states (window, offset, size); the states' floats may differ in
    // their last bits (see the top of the file).
    void keptOpenMatchesTheCli() {
        const QString app = runApp("app-open.db", false);
        QVERIFY(!app.isEmpty());
        const std::string difference =
            firstDifference(describe(app, false), describe(m_cliDb, false));
        QVERIFY2(difference.empty(), difference.c_str());
    }

    // An adventure: baton-cli and the app continue it alike, and both stop before the
    // player's next turn (the stop is recorded with each generation).
    void anAdventureStopsBeforeThePlayersTurnInEveryClient() {
        const std::vector<Step> steps{{false, 21}, {false, 22}};
        const QString cliDb = m_tmp.filePath("adventure-cli.db");
        QCOMPARE(makeStory(cliDb, storage::StoryMode::Adventure), m_cliStory);
        runCli(cliDb, m_cliStory, steps);
        QVERIFY(!QTest::currentTestFailed());
        const QString app = runApp("adventure-app.db", true, steps, storage::StoryMode::Adventure);
        QVERIFY(!app.isEmpty());
        const std::string cli = describe(cliDb, true);
        const std::string difference = firstDifference(describe(app, true), cli);
        QVERIFY2(difference.empty(), difference.c_str());
        // Every recorded generation (one line per passage it wrote) ran with the stop.
        const std::string stop = "\"stop\":[\"\\n>\"]";
        QVERIFY2(cli.find("generation 2 parent") != std::string::npos, cli.c_str());
        std::istringstream lines(cli);
        int generations = 0;
        for (std::string line; std::getline(lines, line);)
            if (line.rfind("  generation ", 0) == 0) {
                ++generations;
                QVERIFY2(line.find(stop) != std::string::npos, line.c_str());
            }
        QVERIFY(generations >= int(steps.size()));
    }
};

QTEST_MAIN(TestStoryPaths)
#include "tst_story_paths.moc"
