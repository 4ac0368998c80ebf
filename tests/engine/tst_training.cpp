// Training (method.md section 5): exact backpropagation through windows by
// recomputation, corpora and sequences, the optimizer, resume after a kill,
// cancellation, learning on a small corpus, and from-scratch runs that the CLI loads.
#include "cli_run.h"
#include "tar_fixture.h"
#include "test_support.h"
#include "training_fixture.h"
#include "verify_ok.h"

#include "kernels/core_budget.h"
#include "model/model_impl.h"
#include "training/bptt.h"
#include "training/corpus.h"
#include "training/optimizer.h"
#include "training/run_config.h"
#include "training/validation.h"
#include "util/files.h"

#include <baton/engine/model.h>
#include <baton/engine/training.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <array>
#include <cmath>
#include <csignal>

using namespace baton::engine;

namespace {

// A tiny recurrent or baseline model with random weights (ids only, no tokenizer);
// `variants` switches on several slots over the last 6 positions, a sink and a slot bias.
// variants: 0 the reference module; 1 the design variants of issue 14 (2 slots over the
// last 6 positions, sink, slot bias); 2 and 3 the recurrent-memory designs (2 write tokens read by
// blocks 1-2 with a gate; 2 pooled slots read by every block with a gate).
std::shared_ptr<Model> tinyModel(bool recurrent, uint64_t seed, int window, int variants = 0) {
    ModelConfig c;
    c.nLayer = 3;
    c.nHead = 2;
    c.nEmbd = 16;
    c.nPositions = 32;
    c.vocabSize = 50;
    c.nInner = 64;
    RecurrenceConfig rec;
    rec.insertBlock = 1;
    rec.ffnWidth = 12;
    rec.ffnDepth = 2;
    rec.window = window;
    if (variants == 1) {
        rec.slots = 2;
        rec.poolLast = 6;
        rec.sink = true;
        rec.slotBias = true;
    } else if (variants == 2) {
        rec.slots = 2;
        rec.writeTokens = true;
        rec.readBlocks = 2;
        rec.gate = true;
    } else if (variants == 3) {
        rec.slots = 2;
        rec.insertBlock = 0;
        rec.readBlocks = 3;
        rec.gate = true;
    }
    auto m = createModel(c, nullptr, seed, {},
                         recurrent ? std::optional<RecurrenceConfig>(rec) : std::nullopt);
    return m.ok() ? *m : nullptr;
}

// Random FFN weights and alpha, so that the state is far from a no-op and every
// module parameter gets gradient.
void randomiseRecurrence(Model::Impl& m, uint64_t seed) {
    torch::NoGradGuard g;
    torch::manual_seed(seed);
    for (auto& p : m.recurrence->parameters())
        p.copy_(torch::randn_like(p) * 0.3);
    m.refreshRecurrenceCaches();
}

WindowBatch randomBatch(int64_t W, int64_t B, int64_t T, int64_t vocab, int64_t overlap,
                        uint64_t seed) {
    torch::manual_seed(seed);
    WindowBatch b;
    b.inputs = torch::randint(vocab, {W, B, T}, torch::kLong);
    b.targets = torch::randint(vocab, {W, B, T}, torch::kLong);
    // Windows after the first score only their last T - o predictions.
    for (int64_t n = 1; n < W; ++n)
        b.targets[n].narrow(1, 0, overlap).fill_(-1);
    b.scored = b.targets.ne(-1).sum().item<int64_t>();
    return b;
}

std::vector<torch::Tensor> trainableParams(Model::Impl& m) {
    std::vector<torch::Tensor> ps;
    for (auto& p : m.net->parameters())
        ps.push_back(p);
    if (m.recurrent())
        for (auto& p : m.recurrence->parameters())
            ps.push_back(p);
    for (auto& p : ps) {
        p.set_requires_grad(true);
        if (p.grad().defined())
            p.mutable_grad().zero_();
    }
    return ps;
}

// The same loss as accumulateGradients, unrolled through ordinary autograd: the
// state of window n is computed from window n - 1 inside one graph.
void unrolledGradients(Model::Impl& m, const WindowBatch& batch, double normalizer,
                       int64_t onlyWindow = -1) {
    const int64_t W = batch.inputs.size(0), T = batch.inputs.size(2);
    const int64_t V = m.info.config.vocabSize;
    torch::Tensor state, total = torch::zeros({});
    for (int64_t n = 0; n < W; ++n) {
        auto out = m.net->forward(batch.inputs[n], m.windowArgs(state, 0, T, T, true));
        auto logits = m.net->logits(out.hidden);
        auto nll = torch::nn::functional::cross_entropy(
            logits.reshape({-1, V}), batch.targets[n].reshape({-1}),
            torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(
                torch::kSum));
        if (onlyWindow < 0 || onlyWindow == n)
            total = total + nll / normalizer;
        state = m.nextState(out, state, T);
    }
    total.backward();
}

double relativeDifference(const torch::Tensor& a, const torch::Tensor& b) {
    const double scale = std::max(a.norm().item<double>(), b.norm().item<double>());
    return scale == 0 ? 0.0 : (a - b).norm().item<double>() / scale;
}

using baton::test::cli;
using baton::test::CliRun;

using baton::test::jsonLines;

// step -> loss from --json-progress output.
std::map<int, double> stepLosses(const std::vector<QJsonObject>& events) {
    std::map<int, double> losses;
    for (const auto& e : events)
        if (e["event"].toString() == "step")
            losses[e["step"].toInt()] = e["loss"].toDouble();
    return losses;
}

} // namespace

class TestTraining : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_corpus; // a folder of small training documents
    QString m_val;    // a held-out document

    // Common options of the small CLI runs on the fixture checkpoint.
    // A short in-process recurrent run on the fixture: window 16, two windows of
    // backpropagation, batch 2, no validation, no checkpoint before the end.
    TrainConfig fixtureConfig(const QString& out, int steps) const {
        TrainConfig c;
        c.outDir = m_tmp.filePath(out).toStdString();
        c.baseModel = baton::test::fixture();
        c.mode = TrainMode::Recurrent;
        c.corpus = {m_corpus.toStdString()};
        c.validation = {m_val.toStdString()};
        c.window = 16;
        c.bpttWindows = 2;
        c.batchSize = 2;
        c.steps = steps;
        c.checkpointEverySteps = 1000;
        c.validateEveryTokens = 0;
        return c;
    }

    QStringList fixtureRun(const QString& out, const QString& mode, int steps) const {
        return baton::test::fixtureTrainArgs(out, m_corpus, m_val, mode, steps, 2);
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        const auto texts = baton::test::writeTrainingTexts(m_tmp.path());
        QVERIFY2(texts.error.isEmpty(), qPrintable(texts.error));
        m_corpus = texts.corpus;
        m_val = texts.val;
    }

    // ---- corpus and sequences ----

    void gutenbergBoilerplateIsRemoved() {
        const std::string text = "The Project Gutenberg EBook of Something\nLicence blah\n"
                                 "*** START OF THE PROJECT GUTENBERG EBOOK SOMETHING ***\n\n"
                                 "Chapter 1\nIt was a dark night.\n\n"
                                 "*** END OF THE PROJECT GUTENBERG EBOOK SOMETHING ***\n"
                                 "Licence text that must go.\n";
        QCOMPARE(QString::fromStdString(stripGutenberg(text)),
                 QString("Chapter 1\nIt was a dark night.\n"));
        const std::string plain = "No markers here.\nSecond line.\n";
        QCOMPARE(QString::fromStdString(stripGutenberg(plain)), QString::fromStdString(plain));
    }

    // Validation scores the start of every validation document in equal shares (the
    // library's sixteen works, not the first one's opening alone); a run.json written
    // before the rule keeps the old one, so a resumed run compares like with like.
    void validationDrawsFromEveryDocument() {
        using V = std::vector<int64_t>;
        QCOMPARE(validationTokenShares({100, 10, 1000}, 90, true), (V{40, 10, 40}));
        QCOMPARE(validationTokenShares({100, 10, 1000}, 90, false), (V{90, 0, 0}));
        QCOMPARE(validationTokenShares({100, 10, 1000}, 5000, true), (V{100, 10, 1000}));
        QCOMPARE(validationTokenShares({7}, 5, true), (V{5}));
        QCOMPARE(validationTokenShares({}, 5, true), V{});

        QTemporaryDir dir;
        TrainConfig c;
        c.outDir = dir.filePath("run").toStdString();
        c.baseModel = "/models/base";
        c.corpus = {"/books"};
        QVERIFY(QDir().mkpath(QString::fromStdString(c.outDir)));
        const QString runJson = QString::fromStdString(c.outDir) + "/run.json";
        QString text = QString::fromStdString(runConfigText(c));
        QVERIFY(baton::test::writeFile(runJson, text.toUtf8()));
        auto now = readRunConfig(c.outDir);
        BATON_VERIFY_OK(now);
        QVERIFY(now->validationSpread);
        text.remove(QRegularExpression("\\s*\"validation_spread\": true,"));
        QVERIFY(!text.contains("validation_spread"));
        QVERIFY(baton::test::writeFile(runJson, text.toUtf8()));
        auto before = readRunConfig(c.outDir);
        BATON_VERIFY_OK(before);
        QVERIFY(!before->validationSpread);
    }

    void corpusErrors() {
        auto missing = loadCorpus({m_tmp.filePath("nope.txt").toStdString()});
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, ErrorCode::FileNotFound);
        const QString bad = m_tmp.filePath("bad.txt");
        QVERIFY(baton::test::writeFile(bad, QByteArray("good text \xff\xfe bad")));
        auto invalid = loadCorpus({bad.toStdString()});
        QVERIFY(!invalid.ok());
        QCOMPARE(invalid.error().code, ErrorCode::InvalidUtf8);
        QVERIFY(QString::fromStdString(invalid.error().message).contains("offset 10"));
        const QString empty = m_tmp.filePath("emptydir");
        QDir().mkpath(empty);
        QVERIFY(!loadCorpus({empty.toStdString()}).ok());
        auto folder = loadCorpus({m_corpus.toStdString()});
        QVERIFY(folder.ok());
        QCOMPARE(folder->size(), size_t(3));
        QVERIFY(QString::fromStdString((*folder)[0].name).endsWith("part0.txt"));
    }

    void sequencesStayInsideDocuments() {
        std::vector<std::vector<int32_t>> docs = {
            std::vector<int32_t>(100), std::vector<int32_t>(37), std::vector<int32_t>(61)};
        for (size_t d = 0; d < docs.size(); ++d)
            for (size_t i = 0; i < docs[d].size(); ++i)
                docs[d][i] = int32_t(d * 1000 + i);
        const auto corpus = TokenizedCorpus::fromVectors({}, std::move(docs));
        std::vector<std::vector<WindowSpan>> spans;
        const WindowSettings ws{10, 3};
        const auto seqs = planSequences(corpus, ws, 2, spans);
        QCOMPARE(spans.size(), size_t(3));
        int perDoc[3] = {0, 0, 0};
        for (const auto& s : seqs) {
            ++perDoc[s.doc];
            for (int64_t n = 0; n < 2; ++n) {
                const WindowSpan& w = spans[size_t(s.doc)][size_t(s.firstSpan + n)];
                // Every input and target of every window lies inside the document.
                QCOMPARE(w.length, int64_t(10));
                QVERIFY(w.start + w.length < int64_t(corpus.docs[size_t(s.doc)].size()));
                QCOMPARE(w.lastScored, w.start + 10);
            }
        }
        // Doc 0 (100 tokens, stride 7): full windows start at 0, 7, ..., 84 (13 of them)
        // -> 6 sequences of 2. Doc 1 (37): windows at 0..21 (4) -> 2. Doc 2 (61): 8 -> 4.
        QCOMPARE(perDoc[0], 6);
        QCOMPARE(perDoc[1], 2);
        QCOMPARE(perDoc[2], 4);
        // Consecutive sequences of a document do not share windows.
        QCOMPARE(seqs[0].firstSpan, int64_t(0));
        QCOMPARE(seqs[1].firstSpan, int64_t(2));
    }

    // ---- backpropagation through windows ----

    void recomputationEqualsUnrolledAutograd_data() {
        QTest::addColumn<bool>("recurrent");
        QTest::addColumn<int>("overlap");
        QTest::addColumn<int>("variants");
        QTest::newRow("recurrent o=0") << true << 0 << 0;
        QTest::newRow("recurrent o=3") << true << 3 << 0;
        QTest::newRow("recurrent o=3, 2 slots over the last 6, sink, slot bias") << true << 3 << 1;
        QTest::newRow("recurrent o=0, 2 write tokens read by blocks 1-2, gate") << true << 0 << 2;
        QTest::newRow("recurrent o=3, 2 write tokens read by blocks 1-2, gate") << true << 3 << 2;
        QTest::newRow("recurrent o=0, 2 slots read by every block, gate") << true << 0 << 3;
        QTest::newRow("baseline o=3") << false << 3 << 0;
    }
    void recomputationEqualsUnrolledAutograd() {
        QFETCH(bool, recurrent);
        QFETCH(int, overlap);
        QFETCH(int, variants);
        const int64_t W = 3, B = 2, T = 8;
        auto model = tinyModel(true, 7, int(T), variants);
        QVERIFY(model);
        Model::Impl& m = ModelAccess::of(*model);
        randomiseRecurrence(m, 11);
        const WindowBatch batch = randomBatch(W, B, T, 50, overlap, 5);
        const double normalizer = double(batch.scored);
        auto params = trainableParams(m);

        const BatchStats stats = accumulateGradients(m, batch, recurrent, normalizer);
        QCOMPARE(stats.scored, batch.scored);
        std::vector<torch::Tensor> recomputed;
        for (auto& p : params)
            recomputed.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
        for (auto& p : params)
            if (p.grad().defined())
                p.mutable_grad().zero_();

        if (recurrent) {
            unrolledGradients(m, batch, normalizer);
        } else {
            // Baseline: the windows are independent and see no state.
            const int64_t V = 50;
            torch::Tensor total = torch::zeros({});
            for (int64_t n = 0; n < W; ++n) {
                auto out = m.net->forward(batch.inputs[n]);
                total =
                    total +
                    torch::nn::functional::cross_entropy(
                        m.net->logits(out.hidden).reshape({-1, V}), batch.targets[n].reshape({-1}),
                        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(
                            torch::kSum)) /
                        normalizer;
            }
            total.backward();
        }
        size_t moduleStart = 0;
        for (auto& p : m.net->parameters()) {
            (void)p;
            ++moduleStart;
        }
        double worst = 0;
        for (size_t i = 0; i < params.size(); ++i) {
            const torch::Tensor ref =
                params[i].grad().defined() ? params[i].grad() : torch::zeros_like(params[i]);
            const double d = relativeDifference(recomputed[i], ref);
            worst = std::max(worst, d);
            // (Write tokens pool nothing: the layer weights alpha get no gradient.)
            const bool unusedAlpha =
                m.recurrence->config().writeTokens && params[i].is_same(m.recurrence->alpha);
            if (recurrent && !unusedAlpha)
                QVERIFY2(ref.abs().sum().item<double>() > 0,
                         qPrintable(QString("parameter %1 got no gradient").arg(i)));
        }
        QVERIFY2(worst < 1e-5, qPrintable(QString("worst relative difference %1").arg(worst)));
        if (!recurrent)
            for (size_t i = moduleStart; i < params.size(); ++i)
                QVERIFY(!params[i].grad().defined() ||
                        params[i].grad().abs().sum().item<double>() == 0);
    }

    void moduleLearnsFromLaterWindows() {
        // Only the last window's loss: the module's gradient can come only through
        // the states it passed forward, and it must equal the unrolled graph's.
        const int64_t W = 3, B = 2, T = 8;
        auto model = tinyModel(true, 9, int(T));
        QVERIFY(model);
        Model::Impl& m = ModelAccess::of(*model);
        randomiseRecurrence(m, 3);
        WindowBatch batch = randomBatch(W, B, T, 50, 0, 8);
        batch.targets[0].fill_(-1);
        batch.targets[1].fill_(-1);
        batch.scored = batch.targets.ne(-1).sum().item<int64_t>();
        auto params = trainableParams(m);
        accumulateGradients(m, batch, true, double(batch.scored));
        std::vector<torch::Tensor> moduleGrads;
        for (auto& p : m.recurrence->parameters()) {
            QVERIFY(p.grad().defined());
            QVERIFY(p.grad().abs().sum().item<double>() > 0);
            moduleGrads.push_back(p.grad().clone());
        }
        for (auto& p : params)
            if (p.grad().defined())
                p.mutable_grad().zero_();
        unrolledGradients(m, batch, double(batch.scored), 2);
        size_t i = 0;
        for (auto& p : m.recurrence->parameters()) {
            const double d = relativeDifference(moduleGrads[i++], p.grad());
            QVERIFY2(d < 1e-5, qPrintable(QString("relative difference %1").arg(d)));
        }
    }

    // ---- optimizer ----

    void adamMatchesTorch() {
        torch::manual_seed(1);
        auto a = torch::randn({4, 3}).requires_grad_(true);
        auto b = a.detach().clone().requires_grad_(true);
        AdamOptimizer mine({ParamGroup{{{"a", a}}, 1.0, 0.01}}, true, 0.9, 0.999, 1e-8);
        torch::optim::AdamW ref({b}, torch::optim::AdamWOptions(0.01).weight_decay(0.01));
        for (int step = 0; step < 5; ++step) {
            auto target = torch::randn({4, 3});
            mine.zeroGrad();
            ref.zero_grad();
            (a - target).pow(2).sum().backward();
            (b - target).pow(2).sum().backward();
            mine.step(0.01);
            ref.step();
        }
        QVERIFY(relativeDifference(a.detach(), b.detach()) < 1e-6);
        // Saved and loaded state continues identically.
        const std::string path = m_tmp.filePath("opt.safetensors").toStdString();
        QVERIFY(mine.save(path).ok());
        auto c = a.detach().clone().requires_grad_(true);
        AdamOptimizer copy({ParamGroup{{{"a", c}}, 1.0, 0.01}}, true, 0.9, 0.999, 1e-8);
        QVERIFY(copy.load(path).ok());
        QCOMPARE(copy.stepCount(), int64_t(5));
        auto g = torch::randn({4, 3});
        a.mutable_grad().copy_(g);
        c.mutable_grad() = g.clone();
        mine.step(0.01);
        copy.step(0.01);
        QCOMPARE((a - c).abs().max().item<double>(), 0.0);
    }

    // ---- configuration ----

    void invalidSettingsAreRefused() {
        TrainConfig c;
        c.outDir = m_tmp.filePath("never").toStdString();
        c.baseModel = baton::test::fixture();
        c.corpus = {m_corpus.toStdString()};
        QVERIFY(validateTrainConfig(c).ok());
        auto expectBad = [&](auto change, const char* what) {
            TrainConfig b = c;
            change(b);
            auto r = validateTrainConfig(b);
            QVERIFY2(!r.ok(), what);
            QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        };
        expectBad([](TrainConfig& b) { b.overlap = b.window; }, "overlap >= window");
        expectBad([](TrainConfig& b) { b.lr = 0; }, "lr 0");
        expectBad([](TrainConfig& b) { b.scratch = true; }, "scratch and base");
        expectBad([](TrainConfig& b) { b.corpus.clear(); }, "no corpus");
        expectBad([](TrainConfig& b) { b.bpttWindows = 0; }, "W 0");
        expectBad([](TrainConfig& b) { b.saveDtype = "f8"; }, "dtype");
        expectBad([](TrainConfig& b) { b.device = "tpu"; }, "unknown device");
        expectBad([](TrainConfig& b) { b.precision = "f16"; }, "unknown precision");
        expectBad([](TrainConfig& b) { b.precision = "bf16"; }, "bf16 autocast on the CPU");
        expectBad([](TrainConfig& b) { b.curriculum = {1, 4}; }, "curriculum not ending at W");
        expectBad(
            [](TrainConfig& b) {
                b.curriculum = {2, 1, 20};
                b.stageSteps = 5;
            },
            "curriculum not rising");
        expectBad([](TrainConfig& b) { b.curriculum = {1, 20}; }, "curriculum without a budget");
        expectBad([](TrainConfig& b) { b.mixShorter = 0.5; }, "mixed lengths, no curriculum");
        {
            TrainConfig cuda = c;
            cuda.device = "cuda:1";
            cuda.precision = "bf16";
            QVERIFY(validateTrainConfig(cuda).ok());
        }
        expectBad(
            [](TrainConfig& b) {
                b.mode = TrainMode::Baseline;
                b.scope = TrainScope::Recurrence;
            },
            "baseline with module only");
        // A window beyond the model's positions is found when the model is loaded.
        TrainConfig big = c;
        big.window = 4096;
        big.outDir = m_tmp.filePath("bigwindow").toStdString();
        auto r = train(big);
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.error().message).contains("positions"));
    }

    // ---- runs ----

    void lossFallsOnSmallCorpus_data() {
        QTest::addColumn<QString>("mode");
        QTest::newRow("baseline") << "baseline";
        QTest::newRow("recurrent") << "recurrent";
    }
    void lossFallsOnSmallCorpus() {
        QFETCH(QString, mode);
        TrainConfig c;
        c.outDir = m_tmp.filePath("falls-" + mode).toStdString();
        c.baseModel = baton::test::fixture();
        c.mode = mode == "recurrent" ? TrainMode::Recurrent : TrainMode::Baseline;
        c.corpus = {m_corpus.toStdString()};
        c.validation = {m_val.toStdString()};
        c.window = 16;
        c.overlap = 0;
        c.bpttWindows = 3;
        c.batchSize = 4;
        c.steps = 30;
        c.lr = 3e-3;
        c.warmupSteps = 3;
        c.validateEveryTokens = 0;
        c.validationMaxTokens = 300;
        c.checkpointEverySteps = 1000;
        std::vector<double> losses;
        std::vector<TrainEvent> validations;
        auto r = train(c, [&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step)
                losses.push_back(e.loss);
            if (e.kind == TrainEvent::Kind::Validation)
                validations.push_back(e);
            return true;
        });
        BATON_VERIFY_OK(r);
        QCOMPARE(losses.size(), size_t(30));
        const double first = (losses[0] + losses[1] + losses[2]) / 3;
        const double last = (losses[27] + losses[28] + losses[29]) / 3;
        // From random weights (about ln 50257 = 10.8 nats) the loss must fall by a lot.
        QVERIFY2(last < first - 2.0, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
        QCOMPARE(validations.size(), size_t(1));
        QVERIFY(validations[0].valLoss < first);
        QCOMPARE(validations[0].valBandLoss.size(), size_t(3));
        if (c.mode == TrainMode::Recurrent)
            QVERIFY(validations[0].valLossNoState > 0);
        // The output is a loadable model of the right kind.
        auto model = Model::load(r->modelDir);
        BATON_VERIFY_OK(model);
        QCOMPARE((*model)->recurrent(), c.mode == TrainMode::Recurrent);
        if ((*model)->recurrent())
            QCOMPARE((*model)->info().recurrence->window, 16);
    }

    void resumeAfterKillContinuesExactly_data() {
        QTest::addColumn<QString>("mode");
        QTest::newRow("baseline") << "baseline";
        QTest::newRow("recurrent") << "recurrent";
    }
    void resumeAfterKillContinuesExactly() {
        QFETCH(QString, mode);
        const int steps = 7;
        // The uninterrupted run.
        const QString whole = m_tmp.filePath("whole-" + mode);
        CliRun ref = cli(fixtureRun(whole, mode, steps));
        QVERIFY2(ref.exitCode == 0, ref.err.constData());
        const auto refLosses = stepLosses(jsonLines(ref.out));
        QCOMPARE(int(refLosses.size()), steps);
        const auto refEvents = jsonLines(ref.out);
        QCOMPARE(refEvents.back()["event"].toString(), QString("done"));
        QVERIFY(QFile::exists(refEvents.back()["path"].toString() + "/model.safetensors"));

        // The same run killed with SIGKILL right after its checkpoint at step 4 (while
        // it is already computing step 5), then resumed.
        const QString killed = m_tmp.filePath("killed-" + mode);
        QProcess p;
        p.start(QStringLiteral(BATON_CLI_PATH), fixtureRun(killed, mode, steps));
        QVERIFY(p.waitForStarted());
        QByteArray seen;
        bool sawCheckpoint = false;
        while (!sawCheckpoint && p.waitForReadyRead(120000)) {
            seen += p.readAllStandardOutput();
            for (const auto& e : jsonLines(seen))
                if (e["event"].toString() == "checkpoint" && e["step"].toInt() == 4)
                    sawCheckpoint = true;
        }
        QVERIFY2(sawCheckpoint, seen.constData());
        ::kill(pid_t(p.processId()), SIGKILL);
        p.waitForFinished();
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);

        CliRun resumed =
            cli({"train", "--out", killed, "--resume", "--json-progress", "--threads", "1"});
        QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
        const auto events = jsonLines(resumed.out);
        const auto losses = stepLosses(events);
        QVERIFY2(losses.count(5) == 1, resumed.out.constData());
        QVERIFY(losses.count(4) == 0); // resumed after step 4, not before
        for (int s = 5; s <= steps; ++s) {
            const double a = losses.at(s), b = refLosses.at(s);
            QVERIFY2(std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)),
                     qPrintable(QString("step %1: resumed %2, uninterrupted %3")
                                    .arg(s)
                                    .arg(a, 0, 'g', 10)
                                    .arg(b, 0, 'g', 10)));
        }
        // And the final weights agree.
        auto a = Model::load((killed + "/model").toStdString());
        auto b = Model::load((whole + "/model").toStdString());
        QVERIFY(a.ok() && b.ok());
        auto la = (*a)->windowLogits({1, 2, 3, 4, 5});
        auto lb = (*b)->windowLogits({1, 2, 3, 4, 5});
        QVERIFY(la.ok() && lb.ok());
        double worst = 0;
        for (size_t i = 0; i < la->size(); ++i)
            worst = std::max(worst, double(std::abs((*la)[i] - (*lb)[i])));
        QVERIFY2(worst < 1e-3, qPrintable(QString("logits differ by %1").arg(worst)));
        // A finished run cannot be started again over itself.
        CliRun again = cli(fixtureRun(whole, mode, steps));
        QCOMPARE(again.exitCode, 1);
        QVERIFY(again.err.contains("already holds a training run"));
    }

    // A curriculum: the stages' windows per sequence, by step (each step's scored tokens
    // show them), mixed lengths, the settings in run.json, and a resume mid-curriculum
    // that continues exactly.
    void aCurriculumGrowsTheSequences() {
        auto curriculum = [&](const QString& out, int steps) {
            TrainConfig c = fixtureConfig(out, steps);
            c.bpttWindows = 3;
            c.curriculum = {1, 2, 3};
            c.stageSteps = 2;
            c.checkpointEverySteps = 3;
            return c;
        };
        std::map<int64_t, int64_t> scored; // step -> scored tokens of that step
        std::map<int64_t, double> losses;
        std::vector<std::string> notices;
        int64_t before = 0;
        auto whole = train(curriculum("curriculum-whole", 7), [&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Info && e.message.rfind("curriculum:", 0) == 0)
                notices.push_back(e.message);
            if (e.kind == TrainEvent::Kind::Step) {
                scored[e.step] = e.tokens - before;
                before = e.tokens;
                losses[e.step] = e.loss;
            }
            return true;
        });
        BATON_VERIFY_OK(whole);
        // 2 sequences of 1, 2, then 3 windows of 16 tokens (every position scored: o = 0).
        const std::map<int64_t, int64_t> expected = {{1, 32}, {2, 32}, {3, 64}, {4, 64},
                                                     {5, 96}, {6, 96}, {7, 96}};
        QCOMPARE(scored, expected);
        QCOMPARE(notices,
                 (std::vector<std::string>{"curriculum: sequences of 1 window from step 1",
                                           "curriculum: sequences of 2 windows from step 3",
                                           "curriculum: sequences of 3 windows from step 5"}));
        const QJsonObject run =
            baton::test::readJsonObject(m_tmp.filePath("curriculum-whole/run.json"));
        QCOMPARE(run["curriculum"].toArray().size(), 3);
        QCOMPARE(run["stage_steps"].toInt(), 2);

        // Stopped after step 4 (its checkpoint at 3), then resumed: the same steps.
        TrainConfig parts = curriculum("curriculum-parts", 7);
        auto stopped = train(parts, [&](const TrainEvent& e) {
            return !(e.kind == TrainEvent::Kind::Step && e.step == 4);
        });
        BATON_VERIFY_OK(stopped);
        TrainConfig resume = parts;
        resume.resume = true;
        std::map<int64_t, double> resumed;
        BATON_VERIFY_OK(train(resume, [&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step)
                resumed[e.step] = e.loss;
            return true;
        }));
        QVERIFY(!resumed.empty());
        for (const auto& [step, loss] : resumed)
            QVERIFY2(std::abs(loss - losses.at(step)) <= 1e-5 * std::max(1.0, std::abs(loss)),
                     qPrintable(QString("step %1").arg(step)));

        // Half of each batch from an earlier stage: fewer tokens scored past stage 1.
        TrainConfig mixed = curriculum("curriculum-mixed", 6);
        mixed.mixShorter = 0.5;
        before = 0;
        std::map<int64_t, int64_t> mixedScored;
        BATON_VERIFY_OK(train(mixed, [&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step) {
                mixedScored[e.step] = e.tokens - before;
                before = e.tokens;
            }
            return true;
        }));
        QCOMPARE(mixedScored[1], int64_t(32));
        QCOMPARE(mixedScored[3], int64_t(16 + 32)); // one of 1 window, one of 2
        QVERIFY(mixedScored[5] == 16 + 48 || mixedScored[5] == 32 + 48);
    }

    // The batched work follows the free cores (model/fixed_blocks.h): a run with a team
    // of two computes exactly what a run with one thread computes, step by step.
    void theTeamSizeChangesNoBitOfARun() {
        cpu::setAdaptiveThreads(false);
        auto run = [&](int threads) {
            initializeRuntime(threads);
            std::vector<double> seen;
            auto r =
                train(fixtureConfig(QString("team-%1").arg(threads), 4), [&](const TrainEvent& e) {
                    if (e.kind == TrainEvent::Kind::Step)
                        seen.insert(seen.end(), {e.loss, e.gradNorm, e.moduleGradNorm});
                    return true;
                });
            return r.ok() ? seen : std::vector<double>();
        };
        const auto one = run(1);
        const auto two = run(2);
        const int team = cpu::threadCap();
        initializeRuntime(0);
        cpu::setAdaptiveThreads(true);
        if (team < 2)
            QSKIP("this machine has one core: no team of two to compare");
        QCOMPARE(one.size(), size_t(12));
        const std::array<const char*, 3> names = {"loss", "gradient norm", "module gradient norm"};
        for (size_t i = 0; i < one.size(); ++i)
            QVERIFY2(one[i] == two[i],
                     qPrintable(QString("step %1, %2: %3 with one thread, %4 with two")
                                    .arg(i / 3 + 1)
                                    .arg(names[i % 3])
                                    .arg(one[i], 0, 'g', 17)
                                    .arg(two[i], 0, 'g', 17)));
    }

    void cancelStopsWithinOneStepAndLeavesACheckpoint() {
        const TrainConfig c = fixtureConfig("cancel", 50);
        CancelToken token;
        int stepsSeen = 0;
        auto r = train(
            c,
            [&](const TrainEvent& e) {
                if (e.kind == TrainEvent::Kind::Step && ++stepsSeen == 3)
                    token.cancel();
                return true;
            },
            token);
        QVERIFY(r.ok());
        QVERIFY(r->cancelled);
        QCOMPARE(r->steps, int64_t(3));
        QCOMPARE(stepsSeen, 3);
        // The checkpoint written on cancel is a usable model, and the run resumes.
        const QString ckpt = QString::fromStdString(c.outDir) + "/checkpoints/step-000000003";
        QVERIFY(QFile::exists(ckpt + "/trainer.json"));
        auto model = Model::load(ckpt.toStdString());
        BATON_VERIFY_OK(model);
        QVERIFY((*model)->recurrent());
        TrainConfig resume;
        resume.outDir = c.outDir;
        resume.resume = true;
        int firstStep = 0;
        auto r2 = train(resume, [&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step && firstStep == 0)
                firstStep = int(e.step);
            return e.step < 5; // the callback can stop a run as well
        });
        QVERIFY(r2.ok());
        QCOMPARE(firstStep, 4);
        QVERIFY(r2->cancelled);
        QCOMPARE(r2->steps, int64_t(5));
    }

    // A cancel during a validation keeps the steps taken too (issue 65: the app said a
    // checkpoint was kept, and Resume started the run again), and the resumed run does
    // the validation it missed.
    void cancelDuringAValidationLeavesACheckpoint() {
        TrainConfig c = fixtureConfig("cancel-validating", 20);
        c.validateEveryTokens = 150; // after the third step (64 tokens a step)
        CancelToken token;
        auto r = train(
            c,
            [&](const TrainEvent& e) {
                if (e.kind == TrainEvent::Kind::Step && e.step == 3)
                    token.cancel(); // seen by the validation that follows
                return true;
            },
            token);
        BATON_VERIFY_OK(r);
        QVERIFY(r->cancelled);
        QCOMPARE(r->steps, int64_t(3));
        QVERIFY(QFile::exists(QString::fromStdString(c.outDir) +
                              "/checkpoints/step-000000003/trainer.json"));
        TrainConfig resume;
        resume.outDir = c.outDir;
        resume.resume = true;
        int firstStep = 0, validatedAt = 0;
        auto r2 = train(resume, [&](const TrainEvent& e) {
            if (e.kind == TrainEvent::Kind::Step && firstStep == 0)
                firstStep = int(e.step);
            if (e.kind == TrainEvent::Kind::Validation && validatedAt == 0)
                validatedAt = int(e.step);
            return validatedAt == 0 && e.step < 8;
        });
        BATON_VERIFY_OK(r2);
        QCOMPARE(firstStep, 4);
        QCOMPARE(validatedAt, 4);
    }

    // A library shard trains like the files it holds: the same documents, tokens,
    // batches and so the same losses; its works are tokenized into the run's store.
    void aLibraryShardTrainsLikeItsFiles() {
        std::vector<baton::test::tar::Member> works;
        for (int i = 0; i < 3; ++i) {
            const QByteArray text = baton::test::readFile(m_corpus + QString("/part%1.txt").arg(i));
            works.push_back({QString("lib/part%1.txt").arg(i).toStdString(), text.toStdString()});
        }
        const QString shard = m_tmp.filePath("library-01.tar.xz");
        const std::string packed = baton::test::tar::xz(baton::test::tar::archive(works));
        QVERIFY(baton::test::writeFile(shard, QByteArray::fromStdString(packed)));
        const auto run = [&](const QString& out, const QString& corpus) {
            CliRun r = cli(baton::test::fixtureTrainArgs(out, corpus, m_val, "baseline", 3, 2));
            if (r.exitCode != 0)
                qWarning("%s", r.err.constData());
            return stepLosses(jsonLines(r.out));
        };
        const auto fromFiles = run(m_tmp.filePath("from-files"), m_corpus);
        const auto fromShard = run(m_tmp.filePath("from-shard"), shard);
        QCOMPARE(fromShard.size(), size_t(3));
        for (const auto& [step, loss] : fromFiles)
            QCOMPARE(fromShard.at(step), loss);
        const QStringList pieces =
            QDir(m_tmp.filePath("from-shard/data")).entryList({"piece-*.tok"}, QDir::Files);
        QCOMPARE(pieces.size(), 2); // the shard's, and the validation file's

        // A validation work is taken out of the shard by name.
        const QString workList = m_tmp.filePath("val-works.txt");
        QVERIFY(baton::test::writeFile(workList, "# the fixed validation set\n\nlib/part2.txt\n"));
        QStringList args = baton::test::fixtureTrainArgs(m_tmp.filePath("by-work"), shard, m_val,
                                                         "baseline", 1, 2);
        const int val = int(args.indexOf("--val"));
        args.removeAt(val + 1);
        args.removeAt(val);
        args << "--val-works" << workList;
        CliRun byWork = cli(args);
        QVERIFY2(byWork.exitCode == 0, byWork.err.constData());
        QVERIFY2(byWork.out.contains("training on 2 documents") &&
                     byWork.out.contains("validation: library-01.tar.xz/lib/part2.txt") &&
                     byWork.out.contains("held-out check: no 32 tokens"),
                 byWork.out.constData());
        // Held-out text in the corpus stops the run before its first step, naming both.
        args =
            baton::test::fixtureTrainArgs(m_tmp.filePath("held"), shard, m_val, "baseline", 1, 2);
        args << "--held-out" << m_corpus + "/part1.txt";
        CliRun held = cli(args);
        QVERIFY(held.exitCode != 0);
        QVERIFY2(held.err.contains("the training corpus holds held-out text") &&
                     held.err.contains("part1.txt in a row in library-01.tar.xz/lib/part1.txt"),
                 held.err.constData());
    }

    void scratchRunLoadsInTheCli() {
        const QString out = m_tmp.filePath("scratch");
        CliRun r =
            cli({"train",    "--scratch", "--layers",     "2",   "--heads",        "2",
                 "--embd",   "32",        "--positions",  "64",  "--vocab-size",   "400",
                 "--corpus", m_corpus,    "--val",        m_val, "--mode",         "recurrent",
                 "--window", "32",        "--overlap",    "0",   "--bptt-windows", "2",
                 "--batch",  "2",         "--steps",      "4",   "--lr",           "1e-3",
                 "--warmup", "1",         "--save-dtype", "f16", "--out",          out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString modelDir = QString::fromUtf8(r.out.trimmed());
        QCOMPARE(modelDir, out + "/model");
        QVERIFY(QFile::exists(modelDir + "/tokenizer.model"));
        QVERIFY(QFile::exists(modelDir + "/recurrence.safetensors"));
        CliRun info = cli({"info", "--model", modelDir, "--json"});
        QVERIFY2(info.exitCode == 0, info.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(info.out).object();
        QCOMPARE(j["tokenizer"].toString(), QString("sentencepiece"));
        QCOMPARE(j["tokenizer_vocab_size"].toInt(), 400);
        CliRun gen = cli({"generate", "--model", modelDir, "--prompt", "It was", "--max-tokens",
                          "40", "--seed", "3"});
        QVERIFY2(gen.exitCode == 0, gen.err.constData());
        QVERIFY(!gen.out.isEmpty());
        CliRun eval = cli({"eval", "--model", modelDir, "--json", m_val});
        QVERIFY2(eval.exitCode == 0, eval.err.constData());
        const QJsonArray rows = QJsonDocument::fromJson(eval.out).object()["rows"].toArray();
        QVERIFY(!rows.isEmpty());
        QCOMPARE(rows[0].toObject()["window"].toInt(), 32);
        QVERIFY(rows[0].toObject()["token_ppl"].toDouble() > 1);
        // Training a SentencePiece tokenizer is part of the run: invalid sizes are refused.
        CliRun bad = cli({"train", "--scratch", "--vocab-size", "100", "--corpus", m_corpus,
                          "--out", m_tmp.filePath("badvocab")});
        QCOMPARE(bad.exitCode, 2);

        // --tokenizer-from: a new model pretrained with that tokenizer, its size taken
        // from it (--vocab-size is left at its default).
        const QString again = m_tmp.filePath("scratch-same-tokenizer");
        CliRun same = cli({"train",    "--scratch",   "--tokenizer-from",
                           modelDir,   "--layers",    "1",
                           "--heads",  "2",           "--embd",
                           "32",       "--positions", "64",
                           "--corpus", m_corpus,      "--val",
                           m_val,      "--mode",      "baseline",
                           "--window", "32",          "--batch",
                           "2",        "--steps",     "2",
                           "--warmup", "1",           "--out",
                           again});
        QVERIFY2(same.exitCode == 0, same.err.constData());
        QCOMPARE(baton::test::readFile(again + "/model/tokenizer.model"),
                 baton::test::readFile(modelDir + "/tokenizer.model"));
        CliRun sameInfo = cli({"info", "--model", again + "/model", "--json"});
        QCOMPARE(QJsonDocument::fromJson(sameInfo.out).object()["vocab_size"].toInt(), 400);
        // A folder without a SentencePiece model is refused with the reason.
        CliRun none = cli({"train", "--scratch", "--tokenizer-from", m_tmp.filePath("nowhere"),
                           "--corpus", m_corpus, "--val", m_val, "--mode", "baseline", "--window",
                           "32", "--steps", "1", "--out", m_tmp.filePath("none")});
        QVERIFY(none.exitCode != 0);
        QVERIFY2(none.err.contains("no tokenizer files"), none.err.constData());
    }

    void cliHelpDocumentsEveryOption() {
        CliRun r = cli({"train", "--help"});
        QCOMPARE(r.exitCode, 0);
        for (const char* o : {"--scratch",
                              "--layers",
                              "--heads",
                              "--embd",
                              "--positions",
                              "--vocab-size",
                              "--tokenizer-from",
                              "--base",
                              "--mode",
                              "--corpus",
                              "--val",
                              "--window",
                              "--overlap",
                              "--bptt-windows",
                              "--curriculum",
                              "--stage-steps",
                              "--mix-shorter",
                              "--memory-tokens",
                              "--steps",
                              "--epochs",
                              "--lr",
                              "--out",
                              "--resume",
                              "--json-progress",
                              "--train",
                              "--top-blocks",
                              "--patience",
                              "--schedule",
                              "--clip",
                              "--accumulate",
                              "--seed",
                              "--slots",
                              "--pool-last",
                              "--sink",
                              "--no-unwrap",
                              "--module-lr-scale",
                              "--val-works",
                              "--held-out",
                              "--tokenizer-sample-mb"})
            QVERIFY2(r.out.contains(o), o);
        CliRun noOut = cli({"train", "--base", baton::test::fixtureDir(), "--corpus", m_corpus});
        QCOMPARE(noOut.exitCode, 2);
        QVERIFY(noOut.err.contains("--out"));
        CliRun nothing = cli({"train", "--out", m_tmp.filePath("nothing"), "--resume"});
        QCOMPARE(nothing.exitCode, 1);
        QVERIFY(nothing.err.contains("nothing to resume"));
    }
};

QTEST_GUILESS_MAIN(TestTraining)
#include "tst_training.moc"
