// The recurrence module and windowed execution (method.md sections 2-4): window
// plans, the state's reach, recurrent checkpoints, generation equal to scoring,
// FLOPs, and state blobs that resume exactly or are refused.
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include "model/model_impl.h"
#include "model/recurrence.h"
#include "util/hash.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/scoring.h>
#include <baton/engine/windows.h>

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>
#include <map>

using namespace baton::engine;

class TestRecurrence : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_recurrentDir; // the fixture plus a random recurrence module (T 16, o 4)
    std::shared_ptr<Model> m_baseline, m_recurrent;
    std::vector<int32_t> m_ids;
    RecurrenceConfig m_rec;

    QString makeRecurrent(const QString& name, const RecurrenceConfig& rec, uint32_t seed = 2) {
        const QString dir = m_tmp.filePath(name);
        if (!baton::test::writeRecurrentFixture(dir, rec, seed))
            qWarning("cannot write the recurrent fixture %s", qPrintable(dir));
        QFile::remove(dir + "/reference.json");
        QFile::remove(dir + "/text.txt");
        return dir;
    }

    static std::vector<int32_t> greedyRun(Generator& g, int n) {
        SamplingOptions o;
        o.temperature = 0;
        o.maxTokens = n;
        o.stopAtEndOfText = false;
        auto r = g.generate(o);
        return r.ok() ? r->tokens : std::vector<int32_t>{};
    }

    // Every generated token's log-probability, as the generator saw it, equals what
    // windowed scoring of the finished stream gives.
    void checkGenerationMatchesScoring(const std::shared_ptr<Model>& model,
                                       const WindowSettings& w) {
        auto g = Generator::create(model, w);
        QVERIFY(g.ok());
        std::vector<int32_t> stream(m_ids.begin(), m_ids.begin() + 21); // rolls over while reading
        QVERIFY((*g)->append(stream).ok());
        std::vector<double> seen;
        SamplingOptions o;
        o.maxTokens = 1;
        o.seed = 4;
        o.temperature = 1.0;
        o.stopAtEndOfText = false;
        for (int i = 0; i < 50; ++i) {
            const auto logits = (*g)->nextLogits();
            auto r = (*g)->generate(o);
            QVERIFY(r.ok());
            const int32_t t = r->tokens[0];
            double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
            for (float x : logits)
                sum += std::exp(double(x) - mx);
            seen.push_back(double(logits[size_t(t)]) - mx - std::log(sum));
            stream.push_back(t);
        }
        ScoreOptions so;
        so.windows = w;
        auto scored = scoreTokens(*model, stream, so);
        QVERIFY(scored.ok());
        for (size_t i = 0; i < seen.size(); ++i) {
            const auto& s = scored->perToken[scored->perToken.size() - seen.size() + i];
            QVERIFY2(std::abs(s.logprob - seen[i]) < 2e-4,
                     qPrintable(QString("token %1: %2 vs %3").arg(i).arg(s.logprob).arg(seen[i])));
        }
    }

    // N greedy tokens in one go equal k tokens, an exported state, a freshly loaded
    // model and generator from it, and N - k more.
    void checkExportImport(const std::string& dir, const WindowSettings& w, int k,
                           const std::vector<int32_t>& pinned = {}) {
        const int N = 60;
        auto modelA = Model::load(dir);
        auto one = Generator::create(*modelA, w);
        BATON_VERIFY_OK((*one)->pin(pinned));
        QVERIFY((*one)->appendText("It was a bright cold day in April").ok());
        const auto all = greedyRun(**one, N);
        QCOMPARE(all.size(), size_t(N));
        auto first = Generator::create(*modelA, w);
        BATON_VERIFY_OK((*first)->pin(pinned));
        QVERIFY((*first)->appendText("It was a bright cold day in April").ok());
        auto part1 = greedyRun(**first, k);
        auto blob = (*first)->exportState();
        QVERIFY(blob.ok());
        auto modelB = Model::load(dir);
        if (!pinned.empty() && (*first)->windowIndex() > 0) // its windows started elsewhere
            QCOMPARE(Generator::importState(*modelB, *blob, w).error().code,
                     ErrorCode::StateMismatch);
        auto resumed = Generator::importState(*modelB, *blob, w, {}, pinned);
        BATON_VERIFY_OK(resumed);
        QCOMPARE((*resumed)->pinnedTokens(), pinned);
        QCOMPARE((*resumed)->windowIndex(), (*first)->windowIndex());
        QCOMPARE((*resumed)->streamLength(), (*first)->streamLength());
        QCOMPARE((*resumed)->windowStart(), (*first)->windowStart());
        QCOMPARE((*resumed)->currentState(), (*first)->currentState());
        auto part2 = greedyRun(**resumed, N - k);
        part1.insert(part1.end(), part2.begin(), part2.end());
        QCOMPARE(part1, all);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY2(QFile::exists(baton::test::fixtureDir() + "/reference.json"),
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        auto base = Model::load(baton::test::fixture());
        QVERIFY(base.ok());
        m_baseline = *base;
        for (const auto v :
             baton::test::readJsonObject(baton::test::fixtureDir() + "/reference.json")["ids"]
                 .toArray())
            m_ids.push_back(v.toInt());
        m_rec.window = 16;
        m_rec.overlap = 4;
        m_recurrentDir = makeRecurrent("recurrent", m_rec);
        auto rec = Model::load(m_recurrentDir.toStdString());
        BATON_VERIFY_OK(rec);
        m_recurrent = *rec;
        QVERIFY(m_recurrent->recurrent());
        QVERIFY(!m_baseline->recurrent());
        QCOMPARE(m_recurrent->info().recurrence->window, 16);
        QVERIFY(m_recurrent->info().identity != m_baseline->info().identity);
        QVERIFY(m_recurrent->info().parameterCount > m_baseline->info().parameterCount);
    }

    // ---- window plans ----

    void workedExample() {
        // method.md: T = 10, o = 3, 1-based: windows t1..t10, t8..t17, t15..t24;
        // scored predictions t2..t11, t12..t18, t19..t25.
        const auto spans = planWindows(25, {10, 3});
        QCOMPARE(spans.size(), size_t(3));
        const int64_t starts[] = {1, 8, 15}, firsts[] = {2, 12, 19}, lasts[] = {11, 18, 25};
        for (size_t n = 0; n < 3; ++n) {
            QCOMPARE(spans[n].start + 1, starts[n]);
            QCOMPARE(spans[n].firstScored + 1, firsts[n]);
            QCOMPARE(spans[n].lastScored + 1, lasts[n]);
        }
        QCOMPARE(spans[0].length, int64_t(10));
        QCOMPARE(spans[1].length, int64_t(10));
    }

    void everyTokenButTheFirstScoredOnce() {
        for (int T : {1, 2, 3, 5, 10, 16, 33}) {
            for (int o = 0; o < T; o += std::max(1, T / 4)) {
                for (int64_t n : {0, 1, 2, 3, 9, 10, 11, 25, 100, 257}) {
                    std::vector<int> seen(static_cast<size_t>(std::max<int64_t>(n, 1)), 0);
                    for (const auto& s : planWindows(n, {T, o})) {
                        QVERIFY(s.length >= 1 && s.length <= T);
                        QCOMPARE(s.start, int64_t(T - o) * s.index);
                        for (int64_t t = s.firstScored; t <= s.lastScored; ++t) {
                            // the predicting position lies inside the window
                            QVERIFY(t - 1 >= s.start && t - 1 < s.start + s.length);
                            ++seen[size_t(t)];
                        }
                    }
                    for (int64_t t = 1; t < n; ++t)
                        QVERIFY2(
                            seen[size_t(t)] == 1,
                            qPrintable(
                                QString("T %1 o %2 n %3 token %4").arg(T).arg(o).arg(n).arg(t)));
                    if (n > 0)
                        QCOMPARE(seen[0], 0);
                }
            }
        }
    }

    void flopsMatchThePaper() {
        ModelConfig small;
        small.nLayer = 12;
        small.nEmbd = 768;
        small.nHead = 12;
        small.vocabSize = 50257;
        small.nPositions = 1024;
        small.nInner = 3072;
        const std::pair<int, double> paper[] = {{0, 1.75e8},   {5, 1.78e8},   {10, 1.81e8},
                                                {30, 1.94e8},  {50, 2.10e8},  {75, 2.33e8},
                                                {100, 2.62e8}, {150, 3.50e8}, {200, 5.25e8}};
        for (auto [o, expected] : paper) {
            const double f = flopsPerToken(small, {300, o}, false);
            QVERIFY2(std::abs(f - expected) / expected < 0.005,
                     qPrintable(QString("o %1: %2 vs %3").arg(o).arg(f).arg(expected)));
        }
        QVERIFY(std::abs(flopsPerToken(small, {300, 0}, false) - 1.754e8) / 1.754e8 < 1e-3);
        QCOMPARE(flopsPerToken(small, {300, 0}, true) - flopsPerToken(small, {300, 0}, false),
                 2.0 * 50257 * 768);
    }

    // ---- the state's reach ----

    void firstWindowIsPlainGpt2() {
        auto a = m_baseline->windowLogits(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 16));
        auto b = m_recurrent->windowLogits(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 16));
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(*a, *b); // bit for bit
        ScoreOptions o;
        o.windows = {16, 4};
        auto sa = scoreTokens(*m_baseline, m_ids, o), sb = scoreTokens(*m_recurrent, m_ids, o);
        for (size_t i = 0; i < 16; ++i) // window 0's predictions
            QCOMPARE(sa->perToken[i].logprob, sb->perToken[i].logprob);
        QVERIFY(std::abs(sa->nllSum - sb->nllSum) > 1e-3); // later windows differ
    }

    void stateChangesOnlyBlocksFromTheInsertionBlock() {
        for (int insert : {0, 1}) {
            RecurrenceConfig rec = m_rec;
            rec.insertBlock = insert;
            auto model =
                Model::load(makeRecurrent(QString("insert%1").arg(insert), rec).toStdString());
            QVERIFY(model.ok());
            Model::Impl& m = ModelAccess::of(**model);
            torch::NoGradGuard noGrad;
            auto ids =
                torch::tensor(std::vector<int64_t>(m_ids.begin(), m_ids.begin() + 12)).unsqueeze(0);
            std::vector<torch::Tensor> plain, withState;
            ForwardArgs a;
            a.blockOutputs = &plain;
            m.net->forward(ids, a);
            ForwardArgs b;
            b.blockOutputs = &withState;
            b.slotLayer = insert;
            b.state = torch::randn({1, 1, m.info.config.nEmbd});
            m.net->forward(ids, b);
            QCOMPARE(plain.size(), size_t(2));
            for (int l = 0; l < 2; ++l) {
                const double diff =
                    (plain[size_t(l)] - withState[size_t(l)]).abs().max().item<double>();
                if (l < insert)
                    QCOMPARE(diff, 0.0);
                else
                    QVERIFY2(diff > 1e-4, qPrintable(QString("block %1 ignored the state").arg(l)));
            }
        }
    }

    void previousWindowReachesTheNextOnlyThroughTheState() {
        ScoreOptions o;
        o.windows = {16, 0};
        auto changed = m_ids;
        for (int i = 3; i < 10; ++i) // edit window 0 only
            changed[size_t(i)] = (changed[size_t(i)] * 7 + 11) % 50000;
        for (auto model : {m_baseline, m_recurrent}) {
            auto a = scoreTokens(*model, m_ids, o), b = scoreTokens(*model, changed, o);
            QVERIFY(a.ok() && b.ok());
            double window1 = 0;
            for (size_t i = 0; i < a->perToken.size(); ++i)
                if (a->perToken[i].window == 1)
                    window1 = std::max(
                        window1, double(std::abs(a->perToken[i].logprob - b->perToken[i].logprob)));
            if (model->recurrent())
                QVERIFY2(window1 > 1e-4, "the state did not carry the previous window");
            else
                QCOMPARE(window1, 0.0);
        }
    }

    void noStateIsTheBaselineComputation() {
        ScoreOptions on, off;
        on.windows = off.windows = {16, 4};
        off.state = StateSource::Off;
        auto a = scoreTokens(*m_recurrent, m_ids, off), b = scoreTokens(*m_baseline, m_ids, on);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(a->nllSum, b->nllSum);
        auto c = scoreTokens(*m_recurrent, m_ids, on);
        QVERIFY(c->recurrent && !a->recurrent);
        // Slot attention is reported where a slot exists (windows after the first).
        QVERIFY(c->bands[0].slotMassCount > 0);
        QVERIFY(c->bands[0].meanSlotMass() > 0 && c->bands[0].meanSlotMass() < 1);
        QCOMPARE(a->bands[0].slotMassCount, int64_t(0));
        int64_t banded = 0;
        for (const auto& band : c->bands)
            banded += band.tokens;
        QCOMPARE(banded, c->scoredTokens);
    }

    void otherOverlapWarns() {
        ScoreOptions o;
        o.windows = {16, 8};
        auto r = scoreTokens(*m_recurrent, m_ids, o);
        QVERIFY(r.ok());
        QCOMPARE(r->warnings.size(), size_t(1));
        o.windows = {0, 0}; // the trained setting by default
        auto d = scoreTokens(*m_recurrent, m_ids, o);
        QCOMPARE(d->windows.window, 16);
        QCOMPARE(d->windows.overlap, 4);
        QVERIFY(d->warnings.empty());
    }

    // ---- generation ----

    // Every generated token's log-probability, as the generator saw it, equals what
    // windowed scoring of the finished stream gives: same windows, same states.
    void generationMatchesScoring_data() {
        QTest::addColumn<bool>("recurrent");
        QTest::addColumn<int>("overlap");
        QTest::newRow("recurrent o=4") << true << 4;
        QTest::newRow("recurrent o=0") << true << 0;
        QTest::newRow("baseline o=4") << false << 4;
    }
    void generationMatchesScoring() {
        QFETCH(bool, recurrent);
        QFETCH(int, overlap);
        checkGenerationMatchesScoring(recurrent ? m_recurrent : m_baseline, {16, overlap});
    }

    // ---- design variants: several slots, pooling the last positions, a sink ----

    void variants_data() {
        QTest::addColumn<int>("slots");
        QTest::addColumn<int>("poolLast");
        QTest::addColumn<bool>("sink");
        QTest::addColumn<bool>("slotBias");
        QTest::newRow("3 slots") << 3 << 0 << false << false;
        QTest::newRow("pool the last 5") << 1 << 5 << false << false;
        QTest::newRow("sink") << 1 << 0 << true << false;
        QTest::newRow("2 slots over the last 8, sink, slot bias") << 2 << 8 << true << true;
    }
    void variants() {
        QFETCH(int, slots);
        QFETCH(int, poolLast);
        QFETCH(bool, sink);
        QFETCH(bool, slotBias);
        RecurrenceConfig rec = m_rec;
        rec.slots = slots;
        rec.poolLast = poolLast;
        rec.sink = sink;
        rec.slotBias = slotBias;
        const QString dir = makeRecurrent(
            QString("variant-%1-%2-%3-%4").arg(slots).arg(poolLast).arg(sink).arg(slotBias), rec);
        // baton.json says version 2 and names the options; the module loads with them.
        const QJsonObject desc = baton::test::readJsonObject(dir + "/baton.json");
        QCOMPARE(desc["format_version"].toInt(), 2);
        QCOMPARE(desc["slots"].toInt(), slots);
        auto model = Model::load(dir.toStdString());
        BATON_VERIFY_OK(model);
        QCOMPARE((*model)->info().recurrence->slots, slots);
        QCOMPARE((*model)->info().recurrence->poolLast, poolLast);
        QCOMPARE((*model)->info().recurrence->sink, sink);
        // The first window is still plain GPT-2; the CPU decoder agrees with LibTorch
        // (slots, segments, sink), and a state blob resumes exactly.
        auto a = m_baseline->windowLogits(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 16));
        auto b = (*model)->windowLogits(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 16));
        QCOMPARE(*a, *b);
        checkGenerationMatchesScoring(*model, {16, 4});
        checkGenerationMatchesScoring(*model, {16, 0});
        checkExportImport(dir.toStdString(), {16, 4}, 23);
        // Every slot enters: the state has S vectors.
        auto g = Generator::create(*model, {16, 4});
        QVERIFY((*g)->append(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 40)).ok());
        QCOMPARE((*g)->currentState().size(), size_t(slots * m_baseline->config().nEmbd));
    }

    // ---- the recurrent-memory literature's designs ----

    void literatureDesigns_data() {
        QTest::addColumn<int>("insertBlock");
        QTest::addColumn<int>("readBlocks");
        QTest::addColumn<bool>("writeTokens");
        QTest::addColumn<bool>("gate");
        QTest::addColumn<int>("slots");
        QTest::addColumn<bool>("memoryTokens");
        QTest::newRow("read by every block") << 0 << 2 << false << false << 1 << false;
        QTest::newRow("write tokens") << 1 << 1 << true << false << 1 << false;
        QTest::newRow("3 write tokens") << 1 << 1 << true << false << 3 << false;
        QTest::newRow("gate") << 1 << 1 << false << true << 1 << false;
        QTest::newRow("gate, 2 slots") << 1 << 1 << false << true << 2 << false;
        QTest::newRow("2 write tokens, gate, read by every block")
            << 0 << 2 << true << true << 2 << false;
        QTest::newRow("memory tokens, 2 slots") << 0 << 2 << false << false << 2 << true;
        QTest::newRow("RMT: 3 memory tokens written by write tokens, gated")
            << 0 << 2 << true << true << 3 << true;
    }
    void literatureDesigns() {
        QFETCH(int, insertBlock);
        QFETCH(int, readBlocks);
        QFETCH(bool, writeTokens);
        QFETCH(bool, gate);
        QFETCH(int, slots);
        QFETCH(bool, memoryTokens);
        RecurrenceConfig rec = m_rec;
        rec.insertBlock = insertBlock;
        rec.readBlocks = readBlocks;
        rec.writeTokens = writeTokens;
        rec.gate = gate;
        rec.slots = slots;
        rec.memoryTokens = memoryTokens;
        const QString dir = makeRecurrent(QString("design-%1-%2-%3-%4-%5-%6")
                                              .arg(insertBlock)
                                              .arg(readBlocks)
                                              .arg(writeTokens)
                                              .arg(gate)
                                              .arg(slots)
                                              .arg(memoryTokens),
                                          rec);
        // baton.json says version 3 (4 with memory tokens) and names the options; the
        // module loads with them.
        const QJsonObject desc = baton::test::readJsonObject(dir + "/baton.json");
        QCOMPARE(desc["format_version"].toInt(), memoryTokens ? 4 : 3);
        QCOMPARE(desc.contains("memory_tokens"), memoryTokens);
        QCOMPARE(desc["read_blocks"].toInt(), readBlocks);
        QCOMPARE(desc["write"].toString(), QString(writeTokens ? "tokens" : "pool"));
        QCOMPARE(desc["gate"].toBool(), gate);
        auto model = Model::load(dir.toStdString());
        BATON_VERIFY_OK(model);
        const RecurrenceConfig& loaded = *(*model)->info().recurrence;
        QCOMPARE(loaded.readBlocks, readBlocks);
        QCOMPARE(loaded.writeTokens, writeTokens);
        QCOMPARE(loaded.gate, gate);
        QCOMPARE(loaded.slots, slots);
        QCOMPARE(loaded.memoryTokens, memoryTokens);
        QCOMPARE(describeRecurrence(loaded).find("memory tokens") != std::string::npos,
                 memoryTokens);
        QVERIFY(describeRecurrence(loaded).find(gate ? "gated" : "state slot") !=
                std::string::npos);
        // The first window is plain GPT-2; generation (the CPU decoder with the state
        // in several blocks, write tokens run through the cache at each roll-over, the
        // gate) equals scoring, and a state blob resumes exactly.
        auto a = m_baseline->windowLogits(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 16));
        auto b = (*model)->windowLogits(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 16));
        QCOMPARE(*a, *b);
        checkGenerationMatchesScoring(*model, {16, 4});
        checkGenerationMatchesScoring(*model, {16, 0});
        checkExportImport(dir.toStdString(), {16, 4}, 23);
        checkExportImport(dir.toStdString(), {16, 4}, 12);
        auto g = Generator::create(*model, {16, 4});
        QVERIFY((*g)->append(std::vector<int32_t>(m_ids.begin(), m_ids.begin() + 40)).ok());
        QCOMPARE((*g)->currentState().size(), size_t(slots * m_baseline->config().nEmbd));
    }

    // Each option does what it says, seen in the module and the network directly.
    void literatureOptionsAct() {
        Model::Impl& m = ModelAccess::of(*m_recurrent);
        torch::NoGradGuard noGrad;
        const auto ids =
            torch::tensor(std::vector<int64_t>(m_ids.begin(), m_ids.begin() + 16)).unsqueeze(0);
        const int64_t k = m_baseline->config().nEmbd;
        const auto state = torch::randn({1, 1, k});
        { // the state read by block 0 only changes block 0's output; read by blocks 0-1
          // it also changes block 1's beyond what block 0's change explains
            std::vector<torch::Tensor> none, first, both;
            ForwardArgs a;
            a.blockOutputs = &none;
            m.net->forward(ids, a);
            a.blockOutputs = &first;
            a.state = state;
            a.slotLayer = 0;
            m.net->forward(ids, a);
            a.blockOutputs = &both;
            a.slotLayers = 2;
            m.net->forward(ids, a);
            QVERIFY(!torch::allclose(none[0], first[0]));
            QVERIFY(torch::allclose(first[0], both[0]));
            QVERIFY(!torch::allclose(first[1], both[1]));
            // As memory tokens, block 0 reads the state as it is and block 1 reads the
            // slots' own pass through block 0: the same block 0, another block 1.
            std::vector<torch::Tensor> memory;
            a.blockOutputs = &memory;
            a.memoryTokens = true;
            m.net->forward(ids, a);
            QVERIFY(torch::allclose(both[0], memory[0]));
            QVERIFY(!torch::allclose(both[1], memory[1]));
        }
        { // write tokens: the token outputs are those of the window alone (causal), and
          // the written outputs depend on every token of the window
            const auto w = torch::randn({2, k}) * 0.02;
            ForwardArgs a;
            const auto plain = m.net->forward(ids, a);
            a.writeTokens = w;
            const auto withWrite = m.net->forward(ids, a);
            QVERIFY(torch::allclose(plain.hidden, withWrite.hidden, 1e-5, 1e-6));
            QCOMPARE(withWrite.written.sizes().vec(), (std::vector<int64_t>{1, 2, k}));
            auto other = ids.clone();
            other[0][0] = (other[0][0].item<int64_t>() + 1) % 1000;
            const auto changed = m.net->forward(other, a);
            QVERIFY(!torch::allclose(changed.written, withWrite.written));
            // Write tokens are causal among themselves: of two equal ones, the second
            // also sees the first.
            ForwardArgs twice;
            twice.writeTokens = torch::cat({w.narrow(0, 0, 1), w.narrow(0, 0, 1)});
            const auto t = m.net->forward(ids, twice);
            QVERIFY(!torch::allclose(t.written[0][0], t.written[0][1]));
        }
        { // the gate mixes the previous state in; without a previous state it is the
          // candidate alone, and a gate that is shut keeps the previous state
            RecurrenceConfig rec = m_rec;
            rec.gate = true;
            Recurrence gated(m_baseline->config(), rec);
            torch::manual_seed(3);
            gated->initialise();
            rec.gate = false;
            Recurrence plain(m_baseline->config(), rec);
            for (auto& p : plain->named_parameters(true))
                p.value().copy_(gated->named_parameters(true)[p.key()]);
            const auto sums = torch::randn({1, 1, k}) * 16;
            const auto previous = torch::randn({1, 1, k});
            QVERIFY(torch::allclose(gated->forward(sums, {}, 16), plain->forward(sums, {}, 16)));
            const auto mixed = gated->forward(sums, previous, 16);
            QVERIFY(!torch::allclose(mixed, plain->forward(sums, {}, 16)));
            gated->gate->weight.zero_();
            gated->gate->bias.fill_(30); // g = 1: the previous state is kept
            QVERIFY(torch::allclose(gated->forward(sums, previous, 16), previous, 1e-5, 1e-5));
        }
    }

    void olderAndNewerFormats() {
        // Version 1 and 2 files still load (the designs above write version 3 or 4 only
        // when they use their options); a module without them is written as before.
        RecurrenceConfig v1 = m_rec, v2 = m_rec;
        v2.slots = 2;
        QCOMPARE(v1.formatVersion(), 1);
        QCOMPARE(v2.formatVersion(), 2);
        for (const auto& rec : {v1, v2}) {
            const QString dir = makeRecurrent(QString("format-v%1").arg(rec.formatVersion()), rec);
            const QJsonObject j = baton::test::readJsonObject(dir + "/baton.json");
            QCOMPARE(j["format_version"].toInt(), rec.formatVersion());
            QVERIFY(!j.contains("read_blocks") && !j.contains("write") && !j.contains("gate"));
            auto model = Model::load(dir.toStdString());
            BATON_VERIFY_OK(model);
            QCOMPARE((*model)->info().recurrence->readBlocks, 1);
            QVERIFY(!(*model)->info().recurrence->writeTokens &&
                    !(*model)->info().recurrence->gate);
        }
        auto expect = [&](const QString& dir, ErrorCode code) {
            auto r = Model::load(dir.toStdString());
            QVERIFY2(!r.ok() && r.error().code == code,
                     r.ok() ? "accepted" : r.error().message.c_str());
        };
        RecurrenceConfig v3 = m_rec;
        v3.gate = true;
        { // a version 3 file: an unknown way of writing, reading past the last block, a
          // gate the weights do not have, a newer version
            const QString dir = makeRecurrent("format-v3-write", v3);
            QJsonObject j = baton::test::readJsonObject(dir + "/baton.json");
            j["write"] = "attention";
            baton::test::writeFile(dir + "/baton.json", QJsonDocument(j).toJson());
            expect(dir, ErrorCode::BadConfig);
        }
        {
            const QString dir = makeRecurrent("format-v3-read", v3);
            QJsonObject j = baton::test::readJsonObject(dir + "/baton.json");
            j["read_blocks"] = 2; // from block 1 of 2
            baton::test::writeFile(dir + "/baton.json", QJsonDocument(j).toJson());
            expect(dir, ErrorCode::BadConfig);
        }
        {
            const QString dir = makeRecurrent("format-v3-gate", v3);
            QJsonObject j = baton::test::readJsonObject(dir + "/baton.json");
            j["gate"] = false;
            baton::test::writeFile(dir + "/baton.json", QJsonDocument(j).toJson());
            expect(dir, ErrorCode::ConfigMismatch);
        }
        { // version 4: memory tokens need a second reading block
            RecurrenceConfig v4 = m_rec;
            v4.insertBlock = 0;
            v4.readBlocks = 2;
            v4.memoryTokens = true;
            const QString dir = makeRecurrent("format-v4-memory", v4);
            QJsonObject j = baton::test::readJsonObject(dir + "/baton.json");
            QCOMPARE(j["format_version"].toInt(), 4);
            j["read_blocks"] = 1;
            baton::test::writeFile(dir + "/baton.json", QJsonDocument(j).toJson());
            expect(dir, ErrorCode::BadConfig);
        }
        {
            const QString dir = makeRecurrent("format-v5", v3);
            QJsonObject j = baton::test::readJsonObject(dir + "/baton.json");
            j["format_version"] = 5;
            baton::test::writeFile(dir + "/baton.json", QJsonDocument(j).toJson());
            expect(dir, ErrorCode::Unsupported);
        }
    }

    void segmentsCoverThePooledPositions() {
        ModelConfig c = m_baseline->config();
        RecurrenceConfig rec;
        rec.slots = 3;
        rec.poolLast = 6;
        Recurrence last(c, rec);
        const int expected[10] = {-1, -1, -1, -1, 0, 0, 1, 1, 2, 2};
        for (int p = 0; p < 10; ++p)
            QCOMPARE(last->segmentOf(p, 10), expected[p]);
        rec.poolLast = 0;
        Recurrence all(c, rec);
        const int whole[10] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2};
        for (int p = 0; p < 10; ++p)
            QCOMPARE(all->segmentOf(p, 10), whole[p]);
        // The matrix that pools a call's positions agrees with segmentOf.
        const auto m = all->segmentMatrix(3, 5, 10, torch::TensorOptions());
        QCOMPARE(m.size(0), int64_t(3));
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 3; ++j)
                QCOMPARE(m[j][i].item<float>(), whole[3 + i] == j ? 1.f : 0.f);
        RecurrenceConfig tooFew;
        tooFew.slots = 4;
        tooFew.poolLast = 3;
        QVERIFY(!validateRecurrenceConfig(tooFew, c).ok());
    }

    void aSinkThatIsNeverChosenChangesNothing() {
        RecurrenceConfig plain = m_rec, withSink = m_rec;
        withSink.sink = true;
        // The same seed gives the same weights: the sink is drawn last.
        auto a = Model::load(makeRecurrent("nosink", plain, 5).toStdString());
        auto b = Model::load(makeRecurrent("sink-off", withSink, 5).toStdString());
        QVERIFY(a.ok() && b.ok());
        {
            torch::NoGradGuard noGrad;
            ModelAccess::of(**b).recurrence->sink.fill_(-1e4);
            ModelAccess::of(**b).refreshRecurrenceCaches();
        }
        ScoreOptions o;
        o.windows = {16, 4};
        auto sa = scoreTokens(**a, m_ids, o), sb = scoreTokens(**b, m_ids, o);
        QVERIFY(std::abs(sa->nllSum - sb->nllSum) < 1e-4);
        {
            torch::NoGradGuard noGrad;
            ModelAccess::of(**b).recurrence->sink.fill_(2.0);
            ModelAccess::of(**b).refreshRecurrenceCaches();
        }
        auto sc = scoreTokens(**b, m_ids, o);
        QVERIFY(std::abs(sa->nllSum - sc->nllSum) > 1e-3);
        // A sink takes attention away from the slot.
        QVERIFY(sc->bands[0].meanSlotMass() < sa->bands[0].meanSlotMass());
    }

    // ---- state ablations and paired differences ----

    void ablationsReplaceTheState() {
        ScoreOptions o;
        o.windows = {16, 0};
        std::map<StateSource, ScoreResult> r;
        for (StateSource s : {StateSource::On, StateSource::Off, StateSource::Mean,
                              StateSource::Far, StateSource::Shuffled}) {
            o.state = s;
            auto res = scoreTokens(*m_recurrent, m_ids, o); // 8 windows
            QVERIFY(res.ok());
            QCOMPARE(res->state, s);
            QCOMPARE(res->perWindow.size(), size_t(8));
            r[s] = *res;
        }
        for (auto& [s, res] : r) {
            // Window 0 never has a state; every later window gets another one.
            QCOMPARE(res.perWindow[0].nllSum, r[StateSource::On].perWindow[0].nllSum);
            if (s != StateSource::On)
                QVERIFY(std::abs(res.nllSum - r[StateSource::On].nllSum) > 1e-4);
        }
        // Another permutation with another seed; the same with the same seed.
        o.state = StateSource::Shuffled;
        o.shuffleSeed = 9;
        auto again = scoreTokens(*m_recurrent, m_ids, o);
        QVERIFY(again->nllSum != r[StateSource::Shuffled].nllSum);
        o.shuffleSeed = 1;
        QCOMPARE(scoreTokens(*m_recurrent, m_ids, o)->nllSum, r[StateSource::Shuffled].nllSum);
        // With a single window carrying a state there is nothing else to take: far,
        // shuffled and mean are the true state.
        const std::vector<int32_t> two(m_ids.begin(), m_ids.begin() + 30);
        o.state = StateSource::On;
        const double on = scoreTokens(*m_recurrent, two, o)->nllSum;
        for (StateSource s : {StateSource::Mean, StateSource::Far, StateSource::Shuffled}) {
            o.state = s;
            QVERIFY(std::abs(scoreTokens(*m_recurrent, two, o)->nllSum - on) < 1e-4);
        }
        QVERIFY(parseStateSource("far").ok());
        QVERIFY(!parseStateSource("sideways").ok());
    }

    void pairedDifferencesAndTheirErrors() {
        auto window = [](double nll, int64_t n, std::vector<double> bands) {
            WindowScore w;
            w.scored = n;
            w.nllSum = nll;
            w.bandNll = bands;
            w.bandTokens = {n, 0, 0};
            return w;
        };
        // a = b + 0.5 nats on every token: the difference is exactly 0.5, with no spread.
        std::vector<WindowScore> a, b;
        for (int i = 0; i < 5; ++i) {
            b.push_back(window(10.0 + i, 4, {10.0 + i, 0, 0}));
            a.push_back(window(12.0 + i, 4, {12.0 + i, 0, 0}));
        }
        auto d = comparePaired(a, b);
        QVERIFY(d.ok());
        QVERIFY(std::abs(d->all.mean - 0.5) < 1e-12);
        QVERIFY(d->all.stdError < 1e-12);
        QCOMPARE(d->all.windows, int64_t(5));
        QCOMPARE(d->bands[1].windows, int64_t(0));
        // Per-window differences 0, 4, 8 over 4 tokens each: mean 1 per token; residuals
        // -4, 0, 4; SE = sqrt(32 * 3/2) / 12 = 0.57735.
        std::vector<WindowScore> c, e;
        for (int i = 0; i < 3; ++i) {
            e.push_back(window(0, 4, {0, 0, 0}));
            c.push_back(window(4.0 * i, 4, {4.0 * i, 0, 0}));
        }
        d = comparePaired(c, e);
        QVERIFY(std::abs(d->all.mean - 1.0) < 1e-12);
        QVERIFY(std::abs(d->all.stdError - std::sqrt(48.0) / 12.0) < 1e-9);
        // Different windows are refused.
        c.pop_back();
        QVERIFY(!comparePaired(c, e).ok());
    }

    // Pairing by spans of bytes: each token's loss counts in the span of its last byte
    // (the unscored first token nowhere); the last span is short; two cuts of one text
    // pair whatever their tokens, and the difference is per byte.
    void byteSpansPairAcrossTokenizers() {
        TokenLosses a; // tokens ending at bytes 3, 4, 9, 10 of a 10-byte text
        a.byteEnd = {3, 4, 9, 10};
        a.nll = {std::nanf(""), 1.0f, 2.0f, 4.0f};
        auto sa = scoreByteSpans(a, 10, 4);
        QCOMPARE(sa.size(), size_t(3));
        QCOMPARE(sa[0].bytes, int64_t(4));
        QCOMPARE(sa[2].bytes, int64_t(2));
        QCOMPARE(sa[0].nllSum, 1.0); // byte 4 is in span 0
        QCOMPARE(sa[1].nllSum, 0.0);
        QCOMPARE(sa[2].nllSum, 6.0);
        TokenLosses b; // another tokenizer: one token a byte, each costing 0.5
        for (int i = 1; i <= 10; ++i) {
            b.byteEnd.push_back(i);
            b.nll.push_back(i == 1 ? std::nanf("") : 0.5f);
        }
        auto sb = scoreByteSpans(b, 10, 4);
        auto d = comparePairedSpans(sa, sb);
        BATON_VERIFY_OK(d);
        QCOMPARE(d->windows, int64_t(3));
        QCOMPARE(d->tokens, int64_t(10));
        // (1 - 1.5) + (0 - 2) + (6 - 1) = 2.5 over 10 bytes.
        QVERIFY(std::abs(d->mean - 0.25) < 1e-12);
        QVERIFY(d->stdError > 0);
        QVERIFY(!comparePairedSpans(sa, scoreByteSpans(b, 10, 5)).ok());
        QVERIFY(scoreByteSpans(a, 10, 0).empty());
    }

    // engine::evaluate: one row per setting in order (state on, then off when asked),
    // each the same as scoreText under that setting; per-token losses on request;
    // progress to 1; a cancelled evaluation stops with Cancelled.
    void evaluateScoresEachSettingInOrder() {
        const std::string text = m_recurrent->tokenizer()->decode(m_ids);
        EvaluateRequest r;
        r.text = text;
        r.settings = {{16, 0}, {16, 4}};
        r.alsoWithoutState = true;
        r.keepPerToken = true;
        std::vector<EvaluationRow> rows;
        std::vector<double> fractions;
        BATON_VERIFY_OK(evaluate(
            *m_recurrent, r, [&](EvaluationRow row) { rows.push_back(std::move(row)); }, {},
            [&](double f, const std::string&) { fractions.push_back(f); }));
        QCOMPARE(rows.size(), size_t(4));
        const std::vector<std::pair<int, bool>> expected = {
            {0, true}, {0, false}, {4, true}, {4, false}};
        for (size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(rows[i].score.windows.overlap, expected[i].first);
            QCOMPARE(rows[i].withState, expected[i].second);
            ScoreOptions o;
            o.windows = {16, expected[i].first};
            o.state = expected[i].second ? StateSource::On : StateSource::Off;
            auto alone = scoreText(*m_recurrent, text, o);
            BATON_VERIFY_OK(alone);
            QCOMPARE(rows[i].score.nllSum, alone->nllSum);
            // Per token: one loss per token, the first unscored, the rest adding up.
            const TokenLosses& l = rows[i].losses;
            QCOMPARE(l.nll.size(), m_ids.size());
            QCOMPARE(l.byteEnd.size(), m_ids.size());
            QVERIFY(std::isnan(l.nll.front()));
            double sum = 0;
            for (size_t t = 1; t < l.nll.size(); ++t)
                sum += double(l.nll[t]);
            QVERIFY(std::abs(sum - alone->nllSum) < 1e-3 * std::max(1.0, alone->nllSum));
            QCOMPARE(l.byteEnd.back(), int64_t(text.size()));
        }
        QVERIFY(!fractions.empty());
        QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
        QCOMPARE(fractions.back(), 1.0);
        // A baseline model has no state to switch off: one row per setting.
        rows.clear();
        BATON_VERIFY_OK(
            evaluate(*m_baseline, r, [&](EvaluationRow row) { rows.push_back(std::move(row)); }));
        QCOMPARE(rows.size(), size_t(2));
        // Cancelled before it starts: no rows, Cancelled.
        rows.clear();
        CancelToken cancel;
        cancel.cancel();
        auto stopped = evaluate(
            *m_recurrent, r, [&](EvaluationRow row) { rows.push_back(std::move(row)); }, cancel);
        QVERIFY(!stopped.ok());
        QCOMPARE(stopped.error().code, ErrorCode::Cancelled);
        QVERIFY(rows.empty());
    }

    void costPerTokenStaysFlat() {
        // Structural check: the KV cache never holds more than T tokens.
        auto g = Generator::create(m_recurrent, {16, 4});
        QVERIFY((*g)->appendText("A long story begins.").ok());
        for (int i = 0; i < 10; ++i) {
            greedyRun(**g, 9);
            QVERIFY((*g)->windowFill() <= 16);
        }
        QVERIFY((*g)->streamLength() > 90);
    }

    // ---- resumable state ----

    void exportImportContinuesExactly_data() {
        QTest::addColumn<bool>("recurrent");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("pinned");
        QTest::newRow("recurrent, mid-window") << true << 23 << 0;
        QTest::newRow("recurrent, at a roll-over") << true << 12 << 0;
        QTest::newRow("baseline") << false << 30 << 0;
        // 3 tokens pinned to every window of 16 with o = 4: windows advance by 9.
        QTest::newRow("recurrent, pinned, mid-window") << true << 23 << 3;
        QTest::newRow("recurrent, pinned, at a roll-over") << true << 9 << 3;
        QTest::newRow("baseline, pinned") << false << 30 << 3;
    }
    void exportImportContinuesExactly() {
        QFETCH(bool, recurrent);
        QFETCH(int, k);
        QFETCH(int, pinned);
        const std::string dir = recurrent ? m_recurrentDir.toStdString() : baton::test::fixture();
        const std::vector<int32_t> memory = {464, 3290, 318, 257, 1310};
        checkExportImport(dir, {16, 4}, k,
                          std::vector<int32_t>(memory.begin(), memory.begin() + pinned));
    }

    void blobsAreRefused() {
        auto g = Generator::create(m_recurrent, {16, 4});
        QVERIFY(
            (*g)->appendText("Some context that rolls over more than once, to carry a state along.")
                .ok());
        greedyRun(**g, 20);
        auto blob = (*g)->exportState();
        QVERIFY(blob.ok());
        const WindowSettings w{16, 4};
        QVERIFY(Generator::importState(m_recurrent, *blob, w).ok());

        auto code = [&](std::shared_ptr<Model> model, const std::vector<uint8_t>& b,
                        const WindowSettings& ws) {
            auto r = Generator::importState(model, b, ws);
            return r.ok() ? QString("accepted") : QString(errorCodeName(r.error().code));
        };
        QCOMPARE(code(m_baseline, *blob, w), QString("state-mismatch"));        // another model
        QCOMPARE(code(m_recurrent, *blob, {16, 8}), QString("state-mismatch")); // another o
        QCOMPARE(code(m_recurrent, *blob, {12, 4}), QString("state-mismatch")); // another T
        auto flipped = *blob;
        flipped[flipped.size() / 2] ^= 0x40;
        QCOMPARE(code(m_recurrent, flipped, w), QString("state-corrupt"));
        auto truncated = std::vector<uint8_t>(blob->begin(), blob->begin() + 40);
        QCOMPARE(code(m_recurrent, truncated, w), QString("state-corrupt"));
        QCOMPARE(code(m_recurrent, {}, w), QString("state-corrupt"));
        // Another format version, with a valid checksum: refused as a version problem.
        auto reseal = [](std::vector<uint8_t>& b) {
            baton::engine::ContentHash h;
            h.update(b.data(), b.size() - 8);
            const uint64_t sum = h.digest();
            std::memcpy(b.data() + b.size() - 8, &sum, 8);
        };
        auto newer = *blob;
        newer[8] = 9;
        reseal(newer);
        QCOMPARE(code(m_recurrent, newer, w), QString("state-version"));
        // Versions 1 (one slot, no slot count in the header) and 2 (no count of pinned
        // tokens) are still read, and continue exactly like the version 3 blob they were
        // made from.
        const size_t slotsAt = 8 + 4 + 16 + 4 * 4; // magic, version, identity, T, o, k, block
        auto v1 = *blob;
        v1.erase(v1.begin() + long(slotsAt), v1.begin() + long(slotsAt + 8));
        v1[8] = 1;
        reseal(v1);
        auto v2 = *blob;
        v2.erase(v2.begin() + long(slotsAt + 4), v2.begin() + long(slotsAt + 8));
        v2[8] = 2;
        reseal(v2);
        auto fromV1 = Generator::importState(m_recurrent, v1, w);
        auto fromV2 = Generator::importState(m_recurrent, v2, w);
        auto fromV3 = Generator::importState(m_recurrent, *blob, w);
        QVERIFY(fromV1.ok() && fromV2.ok() && fromV3.ok());
        SamplingOptions greedy;
        greedy.temperature = 0;
        greedy.maxTokens = 20;
        const auto tokens = (*fromV3)->generate(greedy)->tokens;
        QCOMPARE((*fromV1)->generate(greedy)->tokens, tokens);
        QCOMPARE((*fromV2)->generate(greedy)->tokens, tokens);
    }

    // ---- recurrent checkpoints ----

    void badRecurrentCheckpoints() {
        auto expect = [&](const QString& dir, ErrorCode code) {
            auto r = Model::load(dir.toStdString());
            QVERIFY2(!r.ok() && r.error().code == code,
                     r.ok() ? "accepted" : r.error().message.c_str());
        };
        { // baton.json says another FFN width than the weights have
            const QString dir = makeRecurrent("width", m_rec);
            RecurrenceConfig other = m_rec;
            other.ffnWidth = 100;
            auto tok = loadTokenizer(dir.toStdString());
            baton::test::writeFile(dir + "/baton.json", QByteArray::fromStdString(batonJsonText(
                                                            other, (*tok)->identity())));
            expect(dir, ErrorCode::ConfigMismatch);
        }
        { // a slot bias the weights do not have
            const QString dir = makeRecurrent("bias", m_rec);
            RecurrenceConfig other = m_rec;
            other.slotBias = true;
            auto tok = loadTokenizer(dir.toStdString());
            baton::test::writeFile(dir + "/baton.json", QByteArray::fromStdString(batonJsonText(
                                                            other, (*tok)->identity())));
            expect(dir, ErrorCode::ConfigMismatch);
        }
        { // half a recurrent checkpoint
            const QString dir = makeRecurrent("half", m_rec);
            QFile::remove(dir + "/recurrence.safetensors");
            expect(dir, ErrorCode::FileNotFound);
        }
        { // trained with another tokenizer
            const QString dir = makeRecurrent("tok", m_rec);
            baton::test::writeFile(dir + "/baton.json", QByteArray::fromStdString(batonJsonText(
                                                            m_rec, "0123456789abcdef")));
            expect(dir, ErrorCode::TokenizerMismatch);
        }
        { // insert block beyond the model, window beyond its positions, newer format
            for (const char* edit : {"insert_block", "window", "format_version"}) {
                const QString dir = makeRecurrent(QString("edit-") + edit, m_rec);
                QJsonObject j = baton::test::readJsonObject(dir + "/baton.json");
                j[edit] =
                    QString(edit) == "window" ? 4096 : (QString(edit) == "insert_block" ? 7 : 99);
                baton::test::writeFile(dir + "/baton.json", QJsonDocument(j).toJson());
                expect(dir, QString(edit) == "format_version" ? ErrorCode::Unsupported
                                                              : ErrorCode::BadConfig);
            }
        }
    }

    void slotBiasChangesAttention() {
        RecurrenceConfig rec = m_rec;
        rec.slotBias = true;
        auto model = Model::load(makeRecurrent("slot-bias", rec).toStdString());
        BATON_VERIFY_OK(model);
        // The CPU decoder and LibTorch agree with a slot bias too.
        auto g = Generator::create(*model, {16, 4});
        std::vector<int32_t> stream(m_ids.begin(), m_ids.begin() + 21);
        QVERIFY((*g)->append(stream).ok());
        for (int i = 0; i < 30; ++i)
            stream.push_back(greedyRun(**g, 1)[0]);
        ScoreOptions so;
        so.windows = {16, 4};
        auto scored = scoreTokens(**model, stream, so);
        auto fresh = Generator::create(*model, {16, 4});
        QVERIFY((*fresh)->append(std::vector<int32_t>(stream.begin(), stream.end() - 1)).ok());
        const auto& logits = (*fresh)->nextLogits();
        double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
        for (float x : logits)
            sum += std::exp(double(x) - mx);
        const double lp = double(logits[size_t(stream.back())]) - mx - std::log(sum);
        QVERIFY(std::abs(lp - scored->perToken.back().logprob) < 2e-4);
    }
};

QTEST_GUILESS_MAIN(TestRecurrence)
#include "tst_recurrence.moc"
