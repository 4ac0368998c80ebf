// Sampling: the empirical distribution matches the one each setting defines, and
// a seed reproduces its sequence exactly.
#include "test_support.h"

#include "inference/logit_order.h"

#include <baton/engine/sampling.h>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

using namespace baton::engine;

namespace {

const std::vector<float> kLogits = {2.f, 1.f, 0.f, -1.f, -3.f};

std::vector<double> softmax(std::vector<float> logits, double temperature) {
    double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
    std::vector<double> p(logits.size());
    for (size_t i = 0; i < p.size(); ++i)
        sum += p[i] = std::exp((logits[i] - mx) / temperature);
    for (auto& x : p)
        x /= sum;
    return p;
}

std::vector<double> frequencies(SamplingOptions o, int draws,
                                const std::vector<int32_t>& recent = {}) {
    Sampler s(o);
    std::vector<double> f(kLogits.size(), 0);
    for (int i = 0; i < draws; ++i) {
        auto l = kLogits;
        f[size_t(s.sample(l, recent))] += 1;
    }
    for (auto& x : f)
        x /= draws;
    return f;
}

// Each frequency within 4.5 standard errors of its expected probability.
bool matches(const std::vector<double>& f, const std::vector<double>& p, int draws, QString& why) {
    for (size_t i = 0; i < p.size(); ++i) {
        const double se = std::sqrt(std::max(p[i] * (1 - p[i]), 1e-12) / draws);
        if (std::abs(f[i] - p[i]) > 4.5 * se + 1e-9) {
            why = QString("token %1: frequency %2, expected %3").arg(i).arg(f[i]).arg(p[i]);
            return false;
        }
    }
    return true;
}

} // namespace

class TestSampler : public QObject {
    Q_OBJECT
    const int kDraws = 40000;

private Q_SLOTS:
    void temperatureFollowsSoftmax_data() {
        QTest::addColumn<double>("temperature");
        QTest::newRow("1.0") << 1.0;
        QTest::newRow("0.5") << 0.5;
        QTest::newRow("2.0") << 2.0;
    }
    void temperatureFollowsSoftmax() {
        QFETCH(double, temperature);
        SamplingOptions o;
        o.temperature = temperature;
        o.seed = 11;
        QString why;
        QVERIFY2(matches(frequencies(o, kDraws), softmax(kLogits, temperature), kDraws, why),
                 qPrintable(why));
    }

    void topKKeepsTheBestK() {
        SamplingOptions o;
        o.temperature = 1.0;
        o.topK = 2;
        auto p = softmax({2.f, 1.f}, 1.0);
        p.resize(5, 0.0);
        QString why;
        QVERIFY2(matches(frequencies(o, kDraws), p, kDraws, why), qPrintable(why));
    }

    void topPKeepsTheSmallestSufficientSet() {
        SamplingOptions o;
        o.temperature = 1.0;
        o.topP = 0.7; // softmax mass: 0.636, 0.234, ... -> the first two tokens
        auto p = softmax({2.f, 1.f}, 1.0);
        p.resize(5, 0.0);
        QString why;
        QVERIFY2(matches(frequencies(o, kDraws), p, kDraws, why), qPrintable(why));
    }

    void repetitionPenalty() {
        SamplingOptions o;
        o.temperature = 1.0;
        o.repetitionPenalty = 2.0;
        // Token 0's positive logit is divided, token 3's negative logit multiplied.
        const auto p = softmax({1.f, 1.f, 0.f, -2.f, -3.f}, 1.0);
        QString why;
        QVERIFY2(matches(frequencies(o, kDraws, {0, 3, 3}), p, kDraws, why), qPrintable(why));
    }

    void greedyTakesTheArgmax() {
        SamplingOptions o;
        o.temperature = 0;
        Sampler s(o);
        auto l = kLogits;
        QCOMPARE(s.sample(l, {}), 0);
        std::vector<float> tie = {0.f, 3.f, 3.f};
        QCOMPARE(s.sample(tie, {}), 1); // ties go to the lowest id
        o.repetitionPenalty = 3.0;
        Sampler penalised(o);
        auto l2 = kLogits;
        QCOMPARE(penalised.sample(l2, {0}), 1);
        // With a range, only the last tokens are penalised: token 0 is out of it.
        o.repetitionRange = 2;
        Sampler ranged(o);
        auto l3 = kLogits;
        QCOMPARE(ranged.sample(l3, {0, 3, 4}), 0);
        auto l4 = kLogits;
        QCOMPARE(ranged.sample(l4, {3, 0, 4}), 1);
    }

    // The samplers' order (inference/logit_order.h) is the comparison's, logit by logit
    // and id by id, for every size around the radix sort's threshold and every kind of
    // logit: ties, both zeros, infinities, the extremes of the float range; and when
    // equal logits do not come in id order.
    void logitOrderIsTheComparisonsOrder() {
        using Item = std::pair<float, int32_t>;
        auto logit = [](const Item& x) { return x.first; };
        auto id = [](const Item& x) { return x.second; };
        std::mt19937 rng(7);
        std::normal_distribution<float> normal(0.f, 3.f);
        const float specials[] = {0.f,
                                  -0.f,
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::max(),
                                  -std::numeric_limits<float>::max(),
                                  std::numeric_limits<float>::denorm_min(),
                                  -std::numeric_limits<float>::denorm_min(),
                                  1.f,
                                  -1.f};
        for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(255), size_t(256), size_t(257),
                         size_t(3000), size_t(50257)})
            for (int kind = 0; kind < 4; ++kind) {
                std::vector<Item> items(n);
                for (size_t i = 0; i < n; ++i) {
                    float v = normal(rng);
                    if (kind == 1) // many ties
                        v = std::round(v * 2.f) / 2.f;
                    if (kind == 2 && i % 7 == 0)
                        v = specials[(i / 7) % std::size(specials)];
                    if (kind == 3) // one value: every pass skipped
                        v = 1.5f;
                    items[i] = {v, int32_t(i)};
                }
                for (bool shuffled : {false, true}) {
                    if (shuffled)
                        std::shuffle(items.begin(), items.end(), rng);
                    auto expected = items;
                    std::sort(expected.begin(), expected.end(), [](const Item& a, const Item& b) {
                        return a.first != b.first ? a.first > b.first : a.second < b.second;
                    });
                    auto sorted = items;
                    baton::engine::sortByLogit(sorted, logit, id);
                    bool same = sorted.size() == expected.size();
                    for (size_t i = 0; same && i < sorted.size(); ++i)
                        same = sorted[i].second == expected[i].second;
                    QVERIFY2(same, qPrintable(QString("%1 items, kind %2%3")
                                                  .arg(n)
                                                  .arg(kind)
                                                  .arg(shuffled ? ", shuffled" : "")));
                }
            }
    }

    void sameSeedSameSequence() {
        SamplingOptions o;
        o.temperature = 1.0;
        o.topP = 0.9;
        o.seed = 123;
        Sampler a(o), b(o);
        o.seed = 124;
        Sampler c(o);
        int differ = 0;
        for (int i = 0; i < 200; ++i) {
            auto l1 = kLogits, l2 = kLogits, l3 = kLogits;
            const int32_t x = a.sample(l1, {});
            QCOMPARE(b.sample(l2, {}), x);
            differ += c.sample(l3, {}) != x;
        }
        QVERIFY(differ > 20);
    }

    void rngIsPinned() {
        // xoshiro256** seeded by splitmix64: the same numbers on every platform.
        Rng r(42);
        const uint64_t first = r.next(), second = r.next();
        Rng again(42);
        QCOMPARE(again.next(), first);
        QCOMPARE(again.next(), second);
        const auto state = again.state();
        const uint64_t third = again.next();
        Rng restored(0);
        restored.setState(state);
        QCOMPARE(restored.next(), third);
        for (int i = 0; i < 1000; ++i) {
            const double u = r.uniform();
            QVERIFY(u >= 0 && u < 1);
        }
    }

    // A drawn seed fits the app's seed field (31 bits) and differs from draw to draw.
    void drawnSeedsFitEveryField() {
        std::set<uint64_t> seen;
        for (int i = 0; i < 64; ++i) {
            const uint64_t seed = drawSeed();
            QVERIFY(seed <= uint64_t(2147483647));
            seen.insert(seed);
        }
        QVERIFY(seen.size() > 60);
    }

    void outOfRangeSettingsAreRefused() {
        auto bad = [](auto edit) {
            SamplingOptions o;
            edit(o);
            auto r = validateSampling(o);
            return !r.ok() && r.error().code == ErrorCode::InvalidArgument;
        };
        QVERIFY(validateSampling(SamplingOptions{}).ok());
        QVERIFY(bad([](SamplingOptions& o) { o.temperature = -1; }));
        QVERIFY(bad([](SamplingOptions& o) { o.temperature = NAN; }));
        QVERIFY(bad([](SamplingOptions& o) { o.topP = 0; }));
        QVERIFY(bad([](SamplingOptions& o) { o.topP = 1.5; }));
        QVERIFY(bad([](SamplingOptions& o) { o.topK = -3; }));
        QVERIFY(bad([](SamplingOptions& o) { o.repetitionPenalty = 0.5; }));
        QVERIFY(bad([](SamplingOptions& o) { o.maxTokens = -1; }));
        QVERIFY(bad([](SamplingOptions& o) { o.stopStrings = {""}; }));
        QVERIFY(bad([](SamplingOptions& o) { o.repetitionRange = -1; }));
        QVERIFY(bad([](SamplingOptions& o) { o.logprobs = 21; }));
        QVERIFY(bad([](SamplingOptions& o) { o.logprobs = -2; }));
    }
};

QTEST_GUILESS_MAIN(TestSampler)
#include "tst_sampler.moc"
