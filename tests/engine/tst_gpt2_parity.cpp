// GPT-2 computes exactly what an independent implementation computes on the
// fixture checkpoint (../shared/fixtures/gpt2-tiny-random/reference.json).
#include "test_support.h"
#include "verify_ok.h"

#include "kernels/batched_products.h"
#include "kernels/weight_matrix.h"
#include "model/model_impl.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/scoring.h>

#include <QJsonArray>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace baton::engine;

namespace {

std::vector<double> logSoftmaxRow(const std::vector<float>& logits, size_t row, size_t vocab) {
    const float* r = logits.data() + row * vocab;
    double mx = *std::max_element(r, r + vocab);
    double sum = 0;
    for (size_t i = 0; i < vocab; ++i)
        sum += std::exp(double(r[i]) - mx);
    std::vector<double> out(vocab);
    for (size_t i = 0; i < vocab; ++i)
        out[i] = double(r[i]) - mx - std::log(sum);
    return out;
}

std::vector<int32_t> toIds(const QJsonArray& a) {
    std::vector<int32_t> ids;
    for (const auto v : a)
        ids.push_back(v.toInt());
    return ids;
}

} // namespace

class TestGpt2Parity : public QObject {
    Q_OBJECT
    std::shared_ptr<Model> m_model;
    QJsonObject m_ref;
    std::vector<int32_t> m_ids;
    std::vector<float> m_logits; // [128, V]
    size_t m_vocab = 0;

    void checkAgainstReference(const std::vector<float>& logits, double tolerance) {
        const QJsonArray expected = m_ref["next_token_logprob"].toArray();
        QCOMPARE(expected.size(), 127);
        double worst = 0;
        for (int i = 0; i < 127; ++i) {
            const auto lp = logSoftmaxRow(logits, size_t(i), m_vocab);
            worst = std::max(worst,
                             std::abs(lp[size_t(m_ids[size_t(i) + 1])] - expected[i].toDouble()));
        }
        QVERIFY2(
            worst <= tolerance,
            qPrintable(QString("worst log-prob difference %1 > %2").arg(worst).arg(tolerance)));
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        const QString refPath = baton::test::fixtureDir() + "/reference.json";
        QVERIFY2(QFile::exists(refPath), qPrintable(baton::test::missingMessage(refPath)));
        m_ref = baton::test::readJsonObject(refPath);
        m_ids = toIds(m_ref["ids"].toArray());
        QCOMPARE(m_ids.size(), size_t(128));
        auto model = Model::load(baton::test::fixture());
        BATON_VERIFY_OK(model);
        m_model = *model;
        m_vocab = size_t(m_model->config().vocabSize);
        auto logits = m_model->windowLogits(m_ids);
        QVERIFY(logits.ok());
        m_logits = *logits;
    }

    void tokenizerGivesTheReferenceIds() {
        const QByteArray text = baton::test::readFile(baton::test::fixtureDir() + "/text.txt");
        QCOMPARE(m_model->tokenizer()->encode(text.toStdString()), m_ids);
    }

    void nextTokenLogProbs() { checkAgainstReference(m_logits, 1e-4); }

    void nllSum() {
        ScoreOptions options;
        auto r = scoreTokens(*m_model, m_ids, options);
        QVERIFY(r.ok());
        QCOMPARE(r->scoredTokens, int64_t(127));
        QVERIFY(std::abs(r->nllSum - m_ref["nll_sum"].toDouble()) < 1e-3);
    }

    void top5Ids() {
        const QJsonArray ids = m_ref["top5_ids_per_position"].toArray();
        const QJsonArray logits = m_ref["top5_logits_per_position"].toArray();
        int compared = 0;
        for (int p = 0; p < ids.size(); ++p) {
            const float* row = m_logits.data() + size_t(p) * m_vocab;
            std::vector<int32_t> order(m_vocab);
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                              [&](int32_t a, int32_t b) { return row[a] > row[b]; });
            const QJsonArray refIds = ids[p].toArray(), refLogits = logits[p].toArray();
            for (int j = 0; j < 5; ++j) {
                // Compare the order only where the neighbours are not near-ties.
                const double v = refLogits[j].toDouble();
                const bool tieBefore = j > 0 && std::abs(refLogits[j - 1].toDouble() - v) <= 1e-3;
                const bool tieAfter = j < 4 && std::abs(refLogits[j + 1].toDouble() - v) <= 1e-3;
                QVERIFY(std::abs(row[refIds[j].toInt()] - v) < 1e-4);
                if (tieBefore || tieAfter)
                    continue;
                QCOMPARE(order[size_t(j)], refIds[j].toInt());
                ++compared;
            }
        }
        QVERIFY(compared > 500);
    }

    // Scoring's alternatives (the OpenAI server's echo with logprobs) are the
    // reference's top five at each position, with log-probabilities of the same logits.
    void scoredAlternatives() {
        ScoreOptions options;
        options.topAlternatives = 5;
        auto r = scoreTokens(*m_model, m_ids, options);
        BATON_VERIFY_OK(r);
        QCOMPARE(r->perToken.size(), size_t(127));
        const QJsonArray ids = m_ref["top5_ids_per_position"].toArray();
        const QJsonArray logits = m_ref["top5_logits_per_position"].toArray();
        int compared = 0;
        for (const TokenScore& s : r->perToken) {
            QCOMPARE(s.top.size(), size_t(5));
            const int p = int(s.index) - 1; // the position that predicted it
            const float* row = m_logits.data() + size_t(p) * m_vocab;
            double logZ = 0;
            for (size_t v = 0; v < m_vocab; ++v)
                logZ += std::exp(double(row[v]));
            logZ = std::log(logZ);
            QVERIFY(std::abs(s.logprob - (row[s.id] - logZ)) < 1e-4);
            const QJsonArray refIds = ids[p].toArray(), refLogits = logits[p].toArray();
            for (int j = 0; j < 5; ++j) {
                QVERIFY(j == 0 || s.top[size_t(j)].second <= s.top[size_t(j - 1)].second);
                QVERIFY(std::abs(s.top[size_t(j)].second - (row[s.top[size_t(j)].first] - logZ)) <
                        1e-4);
                const double v = refLogits[j].toDouble();
                if ((j > 0 && std::abs(refLogits[j - 1].toDouble() - v) <= 1e-3) ||
                    (j < 4 && std::abs(refLogits[j + 1].toDouble() - v) <= 1e-3))
                    continue;
                QCOMPARE(s.top[size_t(j)].first, refIds[j].toInt());
                ++compared;
            }
        }
        QVERIFY(compared > 500);
        options.topAlternatives = 21;
        QCOMPARE(scoreTokens(*m_model, m_ids, options).error().code, ErrorCode::InvalidArgument);
    }

    void lastPositionLogits() {
        const QJsonArray first16 = m_ref["last_position_logits_first16"].toArray();
        for (int i = 0; i < 16; ++i)
            QVERIFY(std::abs(m_logits[127 * m_vocab + size_t(i)] - first16[i].toDouble()) < 1e-4);
    }

    void greedyContinuation() {
        const int promptLen = m_ref["greedy_prompt_len"].toInt();
        const auto expected = toIds(m_ref["greedy_ids"].toArray());
        auto gen = Generator::create(m_model);
        QVERIFY(gen.ok());
        QVERIFY((*gen)
                    ->append(std::vector<int32_t>(expected.begin(), expected.begin() + promptLen))
                    .ok());
        SamplingOptions greedy;
        greedy.temperature = 0;
        greedy.maxTokens = int(expected.size()) - promptLen;
        auto r = (*gen)->generate(greedy);
        QVERIFY(r.ok());
        QCOMPARE(r->tokens, std::vector<int32_t>(expected.begin() + promptLen, expected.end()));
    }

    void causality() {
        for (int t : {0, 10, 63, 126}) {
            auto changed = m_ids;
            changed[size_t(t) + 1] = (changed[size_t(t) + 1] + 1000) % int32_t(m_vocab);
            auto logits = m_model->windowLogits(changed);
            QVERIFY(logits.ok());
            double before = 0, after = 0;
            for (size_t i = 0; i < (size_t(t) + 1) * m_vocab; ++i)
                before = std::max(before, double(std::abs((*logits)[i] - m_logits[i])));
            for (size_t i = (size_t(t) + 1) * m_vocab; i < (size_t(t) + 2) * m_vocab; ++i)
                after = std::max(after, double(std::abs((*logits)[i] - m_logits[i])));
            QVERIFY2(before < 1e-5, "an earlier position saw a later token");
            QVERIFY2(after > 1e-3, "the changed token had no effect on its own position");
        }
    }

    // The KV-cache decode path (the raw CPU decoder for f32) gives the logits that
    // a full recomputation of the window gives, token after token.
    void kvCacheEqualsRecomputation() {
        auto gen = Generator::create(m_model);
        QVERIFY(gen.ok());
        std::vector<int32_t> stream(m_ids.begin(), m_ids.begin() + 8);
        QVERIFY((*gen)->append(stream).ok());
        SamplingOptions options;
        options.temperature = 0.9;
        options.seed = 7;
        options.maxTokens = 1;
        options.stopAtEndOfText = false;
        for (int step = 0; step < 60; ++step) {
            auto full = m_model->windowLogits(stream);
            QVERIFY(full.ok());
            const auto& next = (*gen)->nextLogits();
            double worst = 0;
            for (size_t i = 0; i < m_vocab; ++i)
                worst = std::max(
                    worst, double(std::abs(next[i] - (*full)[(stream.size() - 1) * m_vocab + i])));
            QVERIFY2(worst < 1e-4,
                     qPrintable(QString("step %1: difference %2").arg(step).arg(worst)));
            auto r = (*gen)->generate(options);
            QVERIFY(r.ok());
            QCOMPARE(r->tokens.size(), size_t(1));
            stream.push_back(r->tokens[0]);
        }
    }

    void windowedTotals() {
        const QJsonObject sums = m_ref["windowed_nll_sum"].toObject();
        QVERIFY(sums.size() >= 4);
        for (auto it = sums.begin(); it != sums.end(); ++it) {
            const auto parts = it.key().split(':');
            ScoreOptions options;
            options.windows.window = parts[0].toInt();
            options.windows.overlap = parts[1].toInt();
            auto r = scoreTokens(*m_model, m_ids, options);
            QVERIFY(r.ok());
            QCOMPARE(r->scoredTokens, int64_t(127));
            QVERIFY2(std::abs(r->nllSum - it.value().toDouble()) < 1e-3,
                     qPrintable(it.key() + ": " + QString::number(r->nllSum, 'f', 6) + " vs " +
                                QString::number(it.value().toDouble(), 'f', 6)));
        }
    }

    // Every weight format (--weights) computes GPT-2 within its precision, through the
    // batched path and through the KV-cache decoder alike, and really holds the
    // weights in that format (the logits move).
    void weightFormats_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<double>("tolerance"); // worst next-token log-prob difference
        QTest::newRow("f16") << "f16" << 0.01;
        QTest::newRow("bf16") << "bf16" << 0.1;
        QTest::newRow("int8") << "int8" << 0.1;
        QTest::newRow("q4") << "q4" << 0.5;
    }
    void weightFormats() {
        QFETCH(QString, format);
        QFETCH(double, tolerance);
        LoadOptions o;
        o.weights = *parseWeightFormat(format.toStdString());
        auto model = Model::load(baton::test::fixture(), o);
        BATON_VERIFY_OK(model);
        QCOMPARE((*model)->info().weights, o.weights);
        QCOMPARE((*model)->info().parameterCount, m_model->info().parameterCount);
        auto logits = (*model)->windowLogits(m_ids);
        QVERIFY(logits.ok());
        checkAgainstReference(*logits, tolerance);
        double worst = 0, meanAbs = 0;
        for (size_t i = 0; i < logits->size(); ++i)
            worst = std::max(worst, double(std::abs((*logits)[i] - m_logits[i])));
        const QJsonArray expected = m_ref["next_token_logprob"].toArray();
        for (int i = 0; i < 127; ++i)
            meanAbs +=
                std::abs(logSoftmaxRow(*logits, size_t(i), m_vocab)[size_t(m_ids[size_t(i) + 1])] -
                         expected[i].toDouble());
        qInfo("%s: mean |d log p(next token)| = %.2e nats, worst logit difference %.2e",
              qPrintable(format), meanAbs / 127, worst);
        QVERIFY2(worst > 1e-6, "bit-identical logits: the weights are not held in this format");
        // The decoder reads the same packed weights: its logits after each token are
        // the batched path's.
        auto gen = Generator::create(*model);
        QVERIFY(gen.ok());
        std::vector<int32_t> stream(m_ids.begin(), m_ids.begin() + 16);
        QVERIFY((*gen)->append(stream).ok());
        SamplingOptions greedy;
        greedy.temperature = 0;
        greedy.maxTokens = 1;
        greedy.stopAtEndOfText = false;
        double decoderWorst = 0;
        for (int step = 0; step < 8; ++step) {
            auto full = (*model)->windowLogits(stream);
            QVERIFY(full.ok());
            const auto& next = (*gen)->nextLogits();
            double diff = 0;
            for (size_t i = 0; i < m_vocab; ++i)
                diff = std::max(
                    diff, double(std::abs(next[i] - (*full)[(stream.size() - 1) * m_vocab + i])));
            // In float32 steps the batched path computes what the decoder does (in
            // another order), but for int8 and q4 weights, whose decoder rounds
            // activations to 8 bits. In bfloat16 pairs it rounds activations and weights
            // to bf16, and in 8-bit quads activations to 8 bits, as those decoders do:
            // their sums are the decoder's.
            const bool batched = cpu::batchedProducts(o.weights);
            const auto steps = cpu::productSteps(o.weights);
            const bool eightBit = o.weights == WeightFormat::Int8 || o.weights == WeightFormat::Q4;
            const double allowed = !batched || steps == cpu::ProductSteps::Float32
                                       ? (eightBit ? 0.05 : 1e-4)
                                   : steps == cpu::ProductSteps::Int8Quads ? 1e-3
                                                                           : 0.05;
            QVERIFY2(diff < allowed, qPrintable(QString("step %1: %2").arg(step).arg(diff)));
            decoderWorst = std::max(decoderWorst, diff);
            auto r = (*gen)->generate(greedy);
            QVERIFY(r.ok());
            stream.push_back(r->tokens[0]);
        }
        qInfo("%s: decoder against batched logits (%s): worst difference %.2e", qPrintable(format),
              cpu::productStepsName(cpu::productSteps(o.weights)), decoderWorst);
    }

    // On an AVX-512 CPU the batched paths multiply packed weights as they are held (no
    // unpacking, kernels/batched_products.h); their logits agree with the float32 path
    // (the AVX2 path unpacks) within the rounding of their steps.
    void packedWeightsMultipliedAsHeld() {
        for (WeightFormat f :
             {WeightFormat::F16, WeightFormat::BF16, WeightFormat::Int8, WeightFormat::Q4}) {
            LoadOptions o;
            o.weights = f;
            auto model = Model::load(baton::test::fixture(), o);
            BATON_VERIFY_OK(model);
            if (!cpu::batchedProducts(f))
                QSKIP("this CPU has no AVX-512: the batched paths unpack to float32");
            auto native = (*model)->windowLogits(m_ids);
            cpu::setIsa(cpu::Isa::Avx2);
            QVERIFY(!cpu::batchedProducts(f));
            auto unpacked = (*model)->windowLogits(m_ids);
            cpu::setIsa(cpu::bestIsa());
            QVERIFY(native.ok() && unpacked.ok());
            double worst = 0;
            for (size_t i = 0; i < native->size(); ++i)
                worst = std::max(worst, double(std::abs((*native)[i] - (*unpacked)[i])));
            qInfo("%s: products of the packed weights (%s) against unpacked ones: worst logit "
                  "difference %.2e",
                  weightFormatName(f), cpu::productStepsName(cpu::productSteps(f)), worst);
            // Float32 steps are the unpacked weights' products (LibTorch's may sum in the
            // same order: equal bits); the others round, and differ.
            const bool exact = cpu::productSteps(f) == cpu::ProductSteps::Float32;
            QVERIFY2(exact ? worst < 1e-4 : worst > 0 && worst < 0.1,
                     qPrintable(QString("%1: %2").arg(weightFormatName(f)).arg(worst)));
        }
    }
};

QTEST_GUILESS_MAIN(TestGpt2Parity)
#include "tst_gpt2_parity.moc"
