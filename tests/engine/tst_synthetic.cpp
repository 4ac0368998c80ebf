// The synthetic memory task: its sequences say what the task says, runs
// train tiny models that resume exactly, and the report is read back as written.
#include "test_support.h"
#include "verify_ok.h"

#include "util/files.h"

#include <baton/engine/model.h>
#include <baton/engine/synthetic.h>

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>
#include <set>

using namespace baton::engine;

namespace {

// A run small enough for a test: one block, 16 wide, a few steps.
SyntheticRunConfig tinyRun(const std::string& out, bool recurrent) {
    SyntheticRunConfig c;
    c.outDir = out;
    c.task.window = 16;
    c.task.keys = 16;
    c.task.values = 4;
    c.task.fillerWords = 5;
    c.task.factsPerWindow = 1;
    c.task.distances = {0, 1, 2};
    c.task.gap = 1;
    c.layers = 2;
    c.heads = 2;
    c.embd = 16;
    c.bpttWindows = 3;
    c.batch = 2;
    c.steps = 6;
    c.warmupSteps = 2;
    c.checkpointEvery = 2;
    c.evalSequences = 7;
    c.seed = 3;
    c.design = recurrent ? "gated write tokens" : "baseline";
    if (recurrent) {
        RecurrenceConfig r;
        r.ffnWidth = 8;
        r.ffnDepth = 1;
        r.writeTokens = true;
        r.gate = true;
        r.slots = 2;
        c.recurrence = r;
    }
    return c;
}

} // namespace

class TestSynthetic : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase() { baton::test::initTestProcess(); }

    void sequencesSayWhatTheTaskSays() {
        SyntheticTask task;
        const SyntheticVocab v = syntheticVocab(task);
        QCOMPARE(v.size, 4 + task.keys + task.values + task.fillerWords); // with RECALL
        const int windows = 10;
        const int64_t T = task.window;
        std::map<int, int64_t> perDistance;
        for (uint64_t seed = 0; seed < 100; ++seed) {
            const SyntheticSequence s = makeSyntheticSequence(task, windows, seed);
            QCOMPARE(int64_t(s.tokens.size()), windows * T);
            for (int32_t t : s.tokens)
                QVERIFY(t >= 1 && t < v.size);
            // Facts: where each key is stated (once per sequence) and its value.
            std::map<int32_t, std::pair<int64_t, int32_t>> facts;
            int64_t factCount = 0;
            for (int64_t i = 0; i < int64_t(s.tokens.size()); ++i)
                if (s.tokens[size_t(i)] == v.set) {
                    QVERIFY(i % T <= T - 3); // a fact never straddles windows
                    const int32_t key = s.tokens[size_t(i + 1)], value = s.tokens[size_t(i + 2)];
                    QVERIFY(key >= v.firstKey && key < v.firstValue);
                    QVERIFY(value >= v.firstValue && value < v.firstFiller);
                    QVERIFY(!facts.count(key));
                    facts[key] = {i, value};
                    ++factCount;
                }
            QCOMPARE(factCount, int64_t(windows * task.factsPerWindow));
            // Every question: ASK k v (RECALL k v for d > 0) with v the value of k's fact, stated d
            // windows back (before it in its own window for d = 0); a fact is asked about in its
            // own window and at most once more, in another window (so no question can be answered
            // from another of its window).
            std::map<int32_t, std::vector<int>> asked; // key -> distances
            for (const auto& q : s.questions) {
                asked[s.tokens[size_t(q.answerAt - 1)]].push_back(q.distance);
                QCOMPARE(s.tokens[size_t(q.answerAt)], int32_t(v.firstValue + q.answer));
                QCOMPARE((q.answerAt - 2) / T, q.answerAt / T);
                const int32_t key = s.tokens[size_t(q.answerAt - 1)];
                QVERIFY(facts.count(key));
                const auto [at, value] = facts[key];
                QCOMPARE(value, int32_t(v.firstValue + q.answer));
                QCOMPARE(q.answerAt / T - at / T, int64_t(q.distance));
                QVERIFY(at < q.answerAt);
                ++perDistance[q.distance];
            }
            for (const auto& [key, distances] : asked) {
                QVERIFY(distances.size() <= 2);
                QCOMPARE(distances[0], 0);
                if (distances.size() == 2)
                    QVERIFY(distances[1] > 0);
            }
            QCOMPARE(int64_t(asked.size()), factCount);
            // Every ASK or RECALL is a listed question; RECALL marks those about a fact
            // of an earlier window.
            int64_t asks = 0;
            for (int32_t t : s.tokens)
                asks += t == v.ask || t == v.recall ? 1 : 0;
            QCOMPARE(asks, int64_t(s.questions.size()));
            for (const auto& q : s.questions)
                QCOMPARE(s.tokens[size_t(q.answerAt - 2)], int32_t(q.distance ? v.recall : v.ask));
        }
        for (int d : task.distances)
            QVERIFY2(perDistance[d] > 50, qPrintable(QString("distance %1").arg(d)));
        QCOMPARE(perDistance[0], int64_t(100 * windows * task.factsPerWindow));
        // Asked once: one question per fact at most, at any distance.
        SyntheticTask once = task;
        once.askTwice = false;
        std::map<int, int64_t> onceDistances;
        for (uint64_t seed = 0; seed < 100; ++seed) {
            const SyntheticSequence s = makeSyntheticSequence(once, windows, seed);
            std::set<int32_t> keys;
            for (const auto& q : s.questions) {
                QVERIFY(keys.insert(s.tokens[size_t(q.answerAt - 1)]).second);
                ++onceDistances[q.distance];
            }
        }
        for (int d : task.distances)
            QVERIFY(onceDistances[d] > 50);
        // Two items of a window are at least task.gap filler tokens apart.
        for (uint64_t seed = 0; seed < 20; ++seed) {
            const auto s = makeSyntheticSequence(task, windows, seed).tokens;
            int64_t last = -1000;
            for (int64_t i = 0; i < int64_t(s.size()); ++i) {
                if (i % T == 0)
                    last = -1000;
                if (s[size_t(i)] == v.set || s[size_t(i)] == v.ask || s[size_t(i)] == v.recall) {
                    QVERIFY(i - last >= 3 + task.gap);
                    last = i;
                }
            }
        }
        // Without the RECALL marker every question reads ASK, in the first layout's ids;
        // the marker is part of the task's identity.
        SyntheticTask unmarked = task;
        unmarked.recallMarker = false;
        const SyntheticVocab uv = syntheticVocab(unmarked);
        QCOMPARE(uv.recall, -1);
        QCOMPARE(uv.firstKey, 3);
        QCOMPARE(v.firstKey, 4);
        const SyntheticSequence plain = makeSyntheticSequence(unmarked, windows, 3);
        for (const auto& q : plain.questions)
            QCOMPARE(plain.tokens[size_t(q.answerAt - 2)], int32_t(uv.ask));
        QVERIFY(syntheticTaskIdentity(unmarked) != syntheticTaskIdentity(task));
        // A sequence is its seed's: the same again, another for another seed.
        QCOMPARE(makeSyntheticSequence(task, windows, 5).tokens,
                 makeSyntheticSequence(task, windows, 5).tokens);
        QVERIFY(makeSyntheticSequence(task, windows, 5).tokens !=
                makeSyntheticSequence(task, windows, 6).tokens);
        // The filler follows the grammar: each filler word has at most 3 successors.
        std::map<int32_t, std::set<int32_t>> next;
        for (uint64_t seed = 0; seed < 20; ++seed) {
            const auto s = makeSyntheticSequence(task, windows, seed).tokens;
            for (size_t i = 0; i + 1 < s.size(); ++i)
                if (s[i] >= v.firstFiller && s[i + 1] >= v.firstFiller)
                    next[s[i]].insert(s[i + 1]);
        }
        for (const auto& [word, successors] : next)
            QVERIFY(successors.size() <= size_t(task.fillerSuccessors));
    }

    // With fitDistances, every fact of a window from which some positive distance lands
    // inside the sequence is asked about later, at such a distance; without, a fact's
    // later question may fall past the end. Only a task that uses it names it.
    void fitDistancesAskInsideTheSequence() {
        SyntheticTask task;
        task.factsPerWindow = 1;
        task.distances = {0, 1, 2, 4, 8, 16};
        const std::string plainIdentity = syntheticTaskIdentity(task);
        QVERIFY(syntheticTaskJson(task).find("fit_distances") == std::string::npos);
        const int windows = 3;
        int64_t plainLater = 0, fitLater = 0;
        for (uint64_t seed = 0; seed < 200; ++seed) {
            for (const auto& q : makeSyntheticSequence(task, windows, seed).questions)
                plainLater += q.distance > 0 ? 1 : 0;
            SyntheticTask fit = task;
            fit.fitDistances = true;
            const auto s = makeSyntheticSequence(fit, windows, seed);
            int64_t later = 0;
            for (const auto& q : s.questions) {
                QVERIFY(q.distance == 0 || q.distance == 1 || q.distance == 2);
                later += q.distance > 0 ? 1 : 0;
            }
            QCOMPARE(later, int64_t(2)); // windows 0 and 1 (d = 1 or 2, d = 1); not 2
            fitLater += later;
        }
        QVERIFY(plainLater < fitLater / 2); // 2/5 + 1/5 of the facts, against 2 in 3
        SyntheticTask fit = task;
        fit.fitDistances = true;
        QVERIFY(syntheticTaskIdentity(fit) != plainIdentity);
        QCOMPARE(syntheticTaskIdentity(task), plainIdentity);
    }

    void badTasksAreRefused() {
        SyntheticTask task;
        BATON_VERIFY_OK(validateSyntheticTask(task, 10));
        QVERIFY(!validateSyntheticTask(task, 40).ok()); // 80 facts, 64 keys
        SyntheticTask crowded = task;
        crowded.window = 32; // 2 facts and up to 10 questions of 3 tokens
        QVERIFY(!validateSyntheticTask(crowded, 2).ok());
        SyntheticTask tight = task; // 2 facts, 4 questions: 18 tokens, and 5 gaps
        tight.distances = {0, 1};
        tight.window = 20;
        tight.gap = 0;
        BATON_VERIFY_OK(validateSyntheticTask(tight, 2));
        tight.gap = 2;
        QVERIFY(!validateSyntheticTask(tight, 2).ok());
        SyntheticTask noDistances = task;
        noDistances.distances.clear();
        QVERIFY(!validateSyntheticTask(noDistances, 2).ok());
        SyntheticRunConfig c = tinyRun(m_tmp.filePath("bad").toStdString(), true);
        c.recurrence->insertBlock = 2; // of 2 layers
        auto r = runSynthetic(c);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        // An unknown device is refused before any training, and the folder's run can
        // still go on where it can run.
        SyntheticRunConfig elsewhere = tinyRun(m_tmp.filePath("device").toStdString(), false);
        elsewhere.device = "tpu";
        auto refused = runSynthetic(elsewhere);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, ErrorCode::InvalidArgument);
        QVERIFY(!QFile::exists(m_tmp.filePath("device/checkpoints")));
        elsewhere.device = "cpu";
        BATON_VERIFY_OK(runSynthetic(elsewhere));
    }

    void aRunTrainsEvaluatesAndResumesExactly() {
        const std::string whole = m_tmp.filePath("whole").toStdString();
        const std::string parts = m_tmp.filePath("parts").toStdString();
        auto a = runSynthetic(tinyRun(whole, true));
        BATON_VERIFY_OK(a);
        QCOMPARE(a->steps, int64_t(6));
        QVERIFY(a->moduleParameters > 0);
        QCOMPARE(a->evaluation.chance, 0.25);
        // Cells: every distance with the state on and off; every question counted once
        // per state.
        QCOMPARE(a->evaluation.cells.size(), size_t(6));
        for (const auto& cell : a->evaluation.cells) {
            QVERIFY(cell.state == "on" || cell.state == "off");
            QVERIFY(cell.questions > 0 && cell.correct <= cell.questions);
            QVERIFY(cell.meanProbability > 0 && cell.meanProbability < 1);
        }
        QCOMPARE(a->evaluation.cells[0].questions, a->evaluation.cells[1].questions);

        // Stopped after step 3, then run again: it resumes from the checkpoint and ends
        // where the uninterrupted run did.
        auto stopAt3 = [](const SyntheticEvent& e) {
            return !(e.kind == SyntheticEvent::Kind::Step && e.step == 3);
        };
        auto stopped = runSynthetic(tinyRun(parts, true), stopAt3);
        QVERIFY(!stopped.ok());
        QCOMPARE(stopped.error().code, ErrorCode::Cancelled);
        QVERIFY(!QFile::exists(QString::fromStdString(parts) + "/model/config.json"));
        std::vector<std::string> infos;
        auto b = runSynthetic(tinyRun(parts, true), [&](const SyntheticEvent& e) {
            if (e.kind == SyntheticEvent::Kind::Info)
                infos.push_back(e.message);
            return true;
        });
        BATON_VERIFY_OK(b);
        QVERIFY(!infos.empty() && infos.front() == "resuming at step 3");
        QCOMPARE(b->finalLoss, a->finalLoss);
        QCOMPARE(baton::test::readFile(QString::fromStdString(parts) + "/model/model.safetensors"),
                 baton::test::readFile(QString::fromStdString(whole) + "/model/model.safetensors"));
        QCOMPARE(
            baton::test::readFile(QString::fromStdString(parts) + "/model/recurrence.safetensors"),
            baton::test::readFile(QString::fromStdString(whole) + "/model/recurrence.safetensors"));
        for (size_t i = 0; i < a->evaluation.cells.size(); ++i)
            QCOMPARE(b->evaluation.cells[i].correct, a->evaluation.cells[i].correct);

        // A finished run is not trained again; other settings in its folder are refused.
        auto again = runSynthetic(tinyRun(whole, true), [](const SyntheticEvent& e) {
            return e.kind != SyntheticEvent::Kind::Step; // a training step would stop it
        });
        BATON_VERIFY_OK(again);
        SyntheticRunConfig other = tinyRun(whole, true);
        other.seed = 4;
        QCOMPARE(runSynthetic(other).error().code, ErrorCode::InvalidArgument);

        // The report as written, read back (the app's reader); the model evaluated again.
        for (const std::string& dir : {whole, whole + "/model"}) {
            auto read = readSyntheticReport(dir);
            BATON_VERIFY_OK(read);
            QVERIFY(read->has_value());
            const SyntheticReport& r = **read;
            QCOMPARE(r.config.design, std::string("gated write tokens"));
            QVERIFY(r.config.recurrence && r.config.recurrence->writeTokens &&
                    r.config.recurrence->gate);
            QCOMPARE(r.config.task.distances, (std::vector<int>{0, 1, 2}));
            QCOMPARE(r.config.device, std::string("cpu"));
            QCOMPARE(r.evaluation.cells.size(), a->evaluation.cells.size());
            for (size_t i = 0; i < r.evaluation.cells.size(); ++i) {
                QCOMPARE(r.evaluation.cells[i].distance, a->evaluation.cells[i].distance);
                QCOMPARE(r.evaluation.cells[i].state, a->evaluation.cells[i].state);
                QCOMPARE(r.evaluation.cells[i].correct, a->evaluation.cells[i].correct);
            }
        }
        auto evaluated = evaluateSyntheticModel(whole + "/model", 7, 0, a->config.evalSeed);
        BATON_VERIFY_OK(evaluated);
        for (size_t i = 0; i < evaluated->cells.size(); ++i)
            QCOMPARE(evaluated->cells[i].correct, a->evaluation.cells[i].correct);
        // A folder without a report has none; a text model is not a synthetic one.
        auto none = readSyntheticReport(m_tmp.path().toStdString());
        BATON_VERIFY_OK(none);
        QVERIFY(!none->has_value());
        QCOMPARE(evaluateSyntheticModel(baton::test::fixture(), 7, 0, 1).error().code,
                 ErrorCode::FileNotFound);
        // A synthetic model folder has no tokenizer: it is not a text model.
        QVERIFY(!Model::load(whole + "/model").ok());
    }

    // A curriculum: stages move on by budget or by check, the stages are in the report
    // and in the checkpoints (a stopped run resumes in its stage and ends as the whole
    // run did), and its settings are checked.
    void aCurriculumMovesOnAndResumes() {
        auto curriculum = [&](const QString& name) {
            SyntheticRunConfig c = tinyRun(m_tmp.filePath(name).toStdString(), true);
            c.curriculum = {1, 2, 3};
            c.stageSteps = 2;      // by budget: stages from steps 0, 2 and 4
            c.stageAccuracy = 1.0; // a check that a 6-step model does not pass
            c.stageCheckEvery = 1;
            c.stageCheckSequences = 40;
            c.mixShorter = 0.5; // one sequence of two shorter from the second stage on
            c.steps = 7;
            return c;
        };
        std::vector<std::string> infos;
        auto whole = runSynthetic(curriculum("cur-whole"), [&](const SyntheticEvent& e) {
            if (e.kind == SyntheticEvent::Kind::Info)
                infos.push_back(e.message);
            return true;
        });
        BATON_VERIFY_OK(whole);
        QCOMPARE(whole->stages.size(), size_t(3));
        const std::vector<std::pair<int, int64_t>> expected = {{1, 0}, {2, 2}, {3, 4}};
        for (size_t i = 0; i < 3; ++i) {
            QCOMPARE(whole->stages[i].windows, expected[i].first);
            QCOMPARE(whole->stages[i].startStep, expected[i].second);
            QCOMPARE(whole->stages[i].accuracy, -1.0); // moved on by the budget
        }
        // Tokens: 2 sequences of 1 window for steps 1-2, of 1 or 2 then 2 for 3-4, of 1 or 2
        // then 3 for 5-7 (windows of 16 tokens).
        QVERIFY(whole->trainTokens > 16 * (2 * 2 + 2 * 3 + 3 * 4));
        QVERIFY(whole->trainTokens < 16 * (2 * 2 + 2 * 4 + 3 * 5));
        QVERIFY(std::any_of(infos.begin(), infos.end(), [](const std::string& m) {
            return m.find("right at d = 1") != std::string::npos; // stage 2's check
        }));
        auto read = readSyntheticReport(curriculum("cur-whole").outDir);
        BATON_VERIFY_OK(read);
        QCOMPARE((*read)->config.curriculum, (std::vector<int>{1, 2, 3}));
        QCOMPARE((*read)->config.mixShorter, 0.5);
        QCOMPARE((*read)->stages.size(), size_t(3));
        QCOMPARE((*read)->stages[2].startStep, int64_t(4));

        auto stopAt3 = [](const SyntheticEvent& e) {
            return !(e.kind == SyntheticEvent::Kind::Step && e.step == 3);
        };
        QVERIFY(!runSynthetic(curriculum("cur-parts"), stopAt3).ok());
        auto parts = runSynthetic(curriculum("cur-parts"));
        BATON_VERIFY_OK(parts);
        QCOMPARE(parts->stages.size(), size_t(3));
        QCOMPARE(parts->finalLoss, whole->finalLoss);
        QCOMPARE(parts->trainTokens, whole->trainTokens);

        // A check that passes moves on at once, and records what it measured.
        SyntheticRunConfig easy = curriculum("cur-easy");
        easy.stageSteps = 0;
        easy.stageAccuracy = 1e-9;
        auto passed = runSynthetic(easy);
        BATON_VERIFY_OK(passed);
        QCOMPARE(passed->stages.size(), size_t(3));
        QCOMPARE(passed->stages[1].startStep, int64_t(1));
        QCOMPARE(passed->stages[0].distance, 0);
        QCOMPARE(passed->stages[1].distance, 1);
        QVERIFY(passed->stages[1].accuracy >= 0);

        SyntheticRunConfig bad = curriculum("cur-bad");
        bad.curriculum = {2, 1, 3};
        QCOMPARE(runSynthetic(bad).error().code, ErrorCode::InvalidArgument);
        bad.curriculum = {1, 2};
        QCOMPARE(runSynthetic(bad).error().code, ErrorCode::InvalidArgument); // not W = 3
        bad = tinyRun(m_tmp.filePath("cur-bad").toStdString(), true);
        bad.mixShorter = 0.5;
        QCOMPARE(runSynthetic(bad).error().code, ErrorCode::InvalidArgument); // no curriculum
    }

    void aBaselineAndItsRecurrentTwinSeeTheSameData() {
        // Paired by seed: the same batches (as many tokens), the same network size, the
        // same evaluation questions; the baseline reports one state ("none").
        auto base = runSynthetic(tinyRun(m_tmp.filePath("twin-base").toStdString(), false));
        BATON_VERIFY_OK(base);
        auto rec = runSynthetic(tinyRun(m_tmp.filePath("twin-rec").toStdString(), true));
        BATON_VERIFY_OK(rec);
        QCOMPARE(base->moduleParameters, int64_t(0));
        QCOMPARE(base->evaluation.cells.size(), size_t(3));
        for (const auto& cell : base->evaluation.cells)
            QCOMPARE(cell.state, std::string("none"));
        QCOMPARE(base->trainTokens, rec->trainTokens);
        QCOMPARE(base->parameters, rec->parameters);
        for (size_t i = 0; i < base->evaluation.cells.size(); ++i)
            QCOMPARE(base->evaluation.cells[i].questions, rec->evaluation.cells[2 * i].questions);
    }

    void damagedReportsAreRefused() {
        const QString dir = m_tmp.filePath("damaged");
        QDir().mkpath(dir);
        baton::test::writeFile(dir + "/synthetic.json", "{\"format\": \"baton-synthetic\"}");
        QCOMPARE(readSyntheticReport(dir.toStdString()).error().code, ErrorCode::BadConfig);
        baton::test::writeFile(dir + "/synthetic.json",
                               "{\"format\": \"baton-synthetic\", \"format_version\": 9}");
        QCOMPARE(readSyntheticReport(dir.toStdString()).error().code, ErrorCode::Unsupported);
        baton::test::writeFile(dir + "/synthetic.json", "{\"format\": \"something else\"}");
        QCOMPARE(readSyntheticReport(dir.toStdString()).error().code, ErrorCode::BadConfig);
        // A report with a curriculum whose windows or stages lie.
        SyntheticReport r;
        r.config = tinyRun(dir.toStdString(), true);
        r.config.curriculum = {1, 3};
        r.stages = {{1, 0, 0.5, 0}, {3, 4, -1, 0}};
        const std::string good = syntheticReportJson(r);
        baton::test::writeFile(dir + "/synthetic.json", QByteArray::fromStdString(good));
        BATON_VERIFY_OK(readSyntheticReport(dir.toStdString()));
        for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
                 {"\"windows\": [\n", "\"windows\": [\n        \"one\",\n"},
                 {"\"start_step\": 4", "\"start_step\": -4"},
                 {"\"accuracy\": 0.5", "\"accuracy\": 7"}}) {
            std::string bad = good;
            const size_t at = bad.find(from);
            QVERIFY2(at != std::string::npos, from.c_str());
            bad.replace(at, from.size(), to);
            baton::test::writeFile(dir + "/synthetic.json", QByteArray::fromStdString(bad));
            auto read = readSyntheticReport(dir.toStdString());
            QVERIFY2(!read.ok(), to.c_str());
            QCOMPARE(read.error().code, ErrorCode::BadConfig);
        }
    }
};

QTEST_GUILESS_MAIN(TestSynthetic)
#include "tst_synthetic.moc"
