// The samplers beyond temperature, top-k and top-p, each against a distribution
// computed by hand on a vocabulary of a few tokens (the numbers in the comments), and
// the table of settings every part of Baton reads them from. Torch-free.
#include "inference/phrase_bans.h"
#include "test_support.h"
#include "verify_ok.h"

#include <baton/engine/sampler_settings.h>
#include <baton/engine/sampling.h>
#include <baton/engine/tokenizer.h>

#include <QtTest>

#include <cmath>
#include <limits>
#include <map>
#include <set>

using namespace baton::engine;

namespace {

// Logits whose softmax (at temperature 1) is exactly these probabilities.
std::vector<float> logitsOf(const std::vector<double>& probs) {
    std::vector<float> l;
    for (double p : probs)
        l.push_back(float(std::log(p)));
    return l;
}

const std::vector<double> kProbs = {0.5, 0.2, 0.15, 0.1, 0.05};

SamplingOptions at1() {
    SamplingOptions o;
    o.temperature = 1;
    return o;
}

std::map<int32_t, double> distribution(const SamplingOptions& o, std::vector<float> logits,
                                       const std::vector<int32_t>& recent = {}) {
    Sampler s(o);
    std::map<int32_t, double> out;
    for (const auto& [id, p] : s.distribution(logits, recent))
        out[id] = p;
    return out;
}

// The distribution has exactly these tokens with these probabilities (to 1e-5).
bool isDistribution(const std::map<int32_t, double>& got, const std::map<int32_t, double>& want) {
    if (got.size() != want.size()) {
        qWarning("%zu tokens, not %zu", got.size(), want.size());
        return false;
    }
    for (const auto& [id, p] : want) {
        const auto it = got.find(id);
        if (it == got.end() || std::abs(it->second - p) > 1e-5) {
            qWarning("token %d: %f, not %f", id, it == got.end() ? -1.0 : it->second, p);
            return false;
        }
    }
    return true;
}

} // namespace

class TestSamplers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { baton::test::initTestProcess(); }

    // Min-p 0.25 keeps p >= 0.125: 0.5, 0.2, 0.15 of 0.85.
    void minP() {
        SamplingOptions o = at1();
        o.minP = 0.25;
        QVERIFY(isDistribution(distribution(o, logitsOf(kProbs)),
                               {{0, 0.5 / 0.85}, {1, 0.2 / 0.85}, {2, 0.15 / 0.85}}));
    }

    // Top-a 0.5 keeps p >= 0.5 * 0.5^2 = 0.125: the same three.
    void topA() {
        SamplingOptions o = at1();
        o.topA = 0.5;
        QVERIFY(isDistribution(distribution(o, logitsOf(kProbs)),
                               {{0, 0.5 / 0.85}, {1, 0.2 / 0.85}, {2, 0.15 / 0.85}}));
    }

    // Entropy H = 1.33308 nats; |-ln p - H| = 0.640, 0.276, 0.564, 0.970, 1.663: by
    // that, tokens 1 (0.2), 2 (0.15): 0.35 > 0.3, so those two.
    void typicalP() {
        SamplingOptions o = at1();
        o.typicalP = 0.3;
        QVERIFY(
            isDistribution(distribution(o, logitsOf(kProbs)), {{1, 0.2 / 0.35}, {2, 0.15 / 0.35}}));
        o.typicalP = 0.5; // 0.2, 0.35, then token 0: 0.85 > 0.5
        QVERIFY(isDistribution(distribution(o, logitsOf(kProbs)),
                               {{0, 0.5 / 0.85}, {1, 0.2 / 0.85}, {2, 0.15 / 0.85}}));
    }

    // p = 0.3, 0.25, 0.2, 0.15, 0.07, 0.03: first differences 0.05, 0.05, 0.05, 0.08,
    // 0.04; second |.| 0, 0, 0.03, 0.04, normalised 0, 0, 0.4286, 0.5714. z = 0.5 is
    // passed at index 3: three tokens; z = 0.4 at index 2: two.
    void tailFree() {
        const std::vector<double> p = {0.3, 0.25, 0.2, 0.15, 0.07, 0.03};
        SamplingOptions o = at1();
        o.tailFree = 0.5;
        QVERIFY(isDistribution(distribution(o, logitsOf(p)),
                               {{0, 0.3 / 0.75}, {1, 0.25 / 0.75}, {2, 0.2 / 0.75}}));
        o.tailFree = 0.4;
        QVERIFY(isDistribution(distribution(o, logitsOf(p)), {{0, 0.3 / 0.55}, {1, 0.25 / 0.55}}));
    }

    // Logits 3, 2, 1, 0, -1: mean 1, standard deviation sqrt(2); n = 1 keeps logits >=
    // 3 - 1.414: 3 and 2, e^3 : e^2.
    void topNSigma() {
        SamplingOptions o = at1();
        o.topNSigma = 1;
        const double e = std::exp(1.0);
        QVERIFY(isDistribution(distribution(o, {3, 2, 1, 0, -1}),
                               {{0, e / (e + 1)}, {1, 1 / (e + 1)}}));
    }

    // XTC with threshold 0.09 always applied: 0.5, 0.2, 0.15 and 0.1 reach it; all but
    // the least likely of them go: 0.1 and 0.05 are left.
    void xtc() {
        SamplingOptions o = at1();
        o.xtcProbability = 1;
        o.xtcThreshold = 0.09;
        QVERIFY(
            isDistribution(distribution(o, logitsOf(kProbs)), {{3, 0.1 / 0.15}, {4, 0.05 / 0.15}}));
        o.xtcThreshold = 0.6; // above 0.5: off, as llama.cpp
        QCOMPARE(distribution(o, logitsOf(kProbs)).size(), size_t(5));
        // With probability 0.5, about half the draws keep the likeliest token's share.
        o.xtcThreshold = 0.09;
        o.xtcProbability = 0.5;
        Sampler s(o);
        int removed = 0;
        for (int i = 0; i < 2000; ++i) {
            auto l = logitsOf(kProbs);
            removed += s.distribution(l, {}).size() == 2;
        }
        QVERIFY2(removed > 900 && removed < 1100, qPrintable(QString::number(removed)));
    }

    // The temperature before or after min-p 0.35 (T = 2): before, p is proportional to
    // sqrt(p) (0.7071, 0.4472, 0.3873, 0.3162, 0.2236), the floor 0.2475 keeps four; after,
    // the floor 0.175 keeps 0.5 and 0.2, tempered to sqrt: 0.7071 : 0.4472.
    void temperatureFirstOrLast() {
        SamplingOptions o = at1();
        o.temperature = 2;
        o.minP = 0.35;
        QCOMPARE(distribution(o, logitsOf(kProbs)).size(), size_t(4));
        o.temperatureLast = 1;
        const double a = std::sqrt(0.5), b = std::sqrt(0.2);
        QVERIFY(isDistribution(distribution(o, logitsOf(kProbs)),
                               {{0, a / (a + b)}, {1, b / (a + b)}}));
    }

    // A sampler order: min-p then the temperature is temperatureLast's distribution
    // above; the temperature then min-p keeps four; stages not named do not run (top-k
    // 2 alone at T = 2 leaves 0.5 : 0.2 untempered). Names are checked.
    void samplerOrder() {
        SamplingOptions o = at1();
        o.temperature = 2;
        o.minP = 0.35;
        o.samplerOrder = {"min_p", "temperature"};
        const double a = std::sqrt(0.5), b = std::sqrt(0.2);
        QVERIFY(isDistribution(distribution(o, logitsOf(kProbs)),
                               {{0, a / (a + b)}, {1, b / (a + b)}}));
        o.samplerOrder = {"temperature", "min_p"};
        QCOMPARE(distribution(o, logitsOf(kProbs)).size(), size_t(4));
        o.topK = 2;
        o.samplerOrder = {"top_k"};
        QVERIFY(
            isDistribution(distribution(o, logitsOf(kProbs)), {{0, 0.5 / 0.7}, {1, 0.2 / 0.7}}));
        // Baton's chain, named, draws what no order draws.
        SamplingOptions d = at1();
        d.minP = 0.05;
        d.topK = 3;
        d.typicalP = 0.95;
        d.seed = 5;
        SamplingOptions named = d;
        named.samplerOrder = {"top_n_sigma", "top_k", "temperature", "tail_free", "typical_p",
                              "top_p",       "min_p", "top_a",       "xtc"};
        Sampler x(d), y(named);
        for (int i = 0; i < 100; ++i) {
            std::vector<float> l(40), m;
            for (size_t j = 0; j < l.size(); ++j)
                l[j] = float(std::sin(double(i * 5 + j)) * 3);
            m = l;
            QCOMPARE(x.sample(l, {}), y.sample(m, {}));
        }
        o.samplerOrder = {"top_k", "sideways"};
        QVERIFY(!validateSampling(o).ok());
        o.samplerOrder = {"top_k", "top_k"};
        QVERIFY(!validateSampling(o).ok());
        QCOMPARE(samplerStageNames().size(), size_t(9));
    }

    // With logprobsAfterSampling the sampler records what it drew from: the same
    // distribution distribution() gives for the same settings, the most probable first,
    // cut to `logprobs`; greedy keeps one token at probability 1.
    void theDistributionDrawnFromIsRecorded() {
        std::vector<float> logits;
        for (int i = 0; i < 200; ++i)
            logits.push_back(float(std::sin(i * 0.7) * 3));
        for (const bool classic : {true, false}) {
            SamplingOptions o = at1();
            o.temperature = 0.7;
            o.topK = 12;
            if (!classic)
                o.minP = 0.05; // the extended path
            o.logprobs = 5;
            o.logprobsAfterSampling = true;
            std::vector<float> a = logits, b = logits;
            Sampler drawing(o), looking(o);
            const int32_t token = drawing.sample(a, {});
            auto want = looking.distribution(b, {});
            std::sort(want.begin(), want.end(), [](const auto& x, const auto& y) {
                return x.second != y.second ? x.second > y.second : x.first < y.first;
            });
            const auto& top = drawing.lastTop();
            QCOMPARE(top.size(), size_t(5));
            for (size_t i = 0; i < top.size(); ++i) {
                QCOMPARE(top[i].first, want[i].first);
                QVERIFY(std::abs(top[i].second - want[i].second) < 1e-6);
            }
            double chosen = 0;
            for (const auto& [id, p] : want)
                if (id == token)
                    chosen = p;
            QVERIFY(chosen > 0);
            QVERIFY(std::abs(drawing.lastProbability() - chosen) < 1e-6);
        }
        SamplingOptions greedy;
        greedy.temperature = 0;
        greedy.logprobs = 5;
        greedy.logprobsAfterSampling = true;
        Sampler g(greedy);
        std::vector<float> c = logits;
        const int32_t best = g.sample(c, {});
        QCOMPARE(g.lastTop().size(), size_t(1));
        QCOMPARE(g.lastTop()[0].first, best);
        QCOMPARE(g.lastProbability(), 1.0);
    }

    // Banned phrases: the earliest complete one, and how much must be held back while a
    // tail could still grow into one; ASCII case ignored.
    void phraseBans() {
        const PhraseBans bans({"shivers down", "Mr. Darcy"}, false);
        QCOMPARE(bans.firstMatch("it sent Shivers down her", 0, false), size_t(8));
        QCOMPARE(bans.firstMatch("mr. darcy and shivers down", 0, true), size_t(0));
        QCOMPARE(bans.firstMatch("shivers", 0, true), std::string::npos);
        QCOMPARE(bans.holdFrom("it sent shiv", 0), size_t(8));
        QCOMPARE(bans.holdFrom("said Mr", 0), size_t(5));
        QCOMPARE(bans.holdFrom("nothing here", 0), size_t(12));
        QCOMPARE(bans.holdFrom("", 0), size_t(0));
    }

    // As a whole word by default (issue 65: banning "her" removed there, where, other,
    // father and together); inside words too when asked.
    void phraseBansMatchWholeWords() {
        const std::string words = "there, where the other father went together; ";
        const PhraseBans word({"her"}, false), anywhere({"her"}, true);
        QCOMPARE(word.firstMatch(words, 0, true), std::string::npos);
        QCOMPARE(anywhere.firstMatch(words, 0, true), size_t(1)); // t[her]e
        QCOMPARE(word.firstMatch(words + "Her hat.", 0, false), words.size());
        QCOMPARE(word.firstMatch(words + "to her,", 0, false), words.size() + 3);
        QCOMPARE(word.firstMatch("herself", 0, true), std::string::npos);
        QCOMPARE(word.firstMatch("her\u00e9", 0, true), std::string::npos); // a UTF-8 letter
        // The byte before the text counts: "her" right after "t" is inside "ther".
        QCOMPARE(word.firstMatch("her ", 't', false), std::string::npos);
        QCOMPARE(word.firstMatch("her ", ' ', false), size_t(0));
        // At the end of the text the word may go on ("hers"): complete only at the end of
        // the generation, held back until then.
        QCOMPARE(word.firstMatch("to her", 0, false), std::string::npos);
        QCOMPARE(word.firstMatch("to her", 0, true), size_t(3));
        QCOMPARE(word.holdFrom("to her", 0), size_t(3));
        QCOMPARE(word.holdFrom("to he", 0), size_t(3));
        QCOMPARE(word.holdFrom("the", 0), size_t(3)); // "he" inside "the" cannot become it
        QCOMPARE(anywhere.holdFrom("the", 0), size_t(1));
        // A phrase that begins or ends with a non-word byte needs no boundary there.
        const PhraseBans dash({"--", "Mr."}, false);
        QCOMPARE(dash.firstMatch("yes--no", 0, false), size_t(3));
        QCOMPARE(dash.firstMatch("Mr.Darcy", 0, false), size_t(0));
        QCOMPARE(dash.firstMatch("HMr.", 0, false), std::string::npos);
        QVERIFY(PhraseBans({}, false).empty());
        SamplingOptions o;
        o.bannedPhrases = {""};
        QVERIFY(!validateSampling(o).ok());
        o.bannedPhrases = {std::string(257, 'a')};
        QVERIFY(!validateSampling(o).ok());
        o.bannedPhrases = std::vector<std::string>(65, "x");
        QVERIFY(!validateSampling(o).ok());
    }

    // A text's bias goes to every token of its encoding (SillyTavern's rule).
    void textBiasTokensAreTheTextsTokens() {
        auto tok = loadTokenizer(baton::test::gpt2TokenizerDir());
        BATON_VERIFY_OK(tok);
        const auto ids = (*tok)->encode(" Elizabeth Bennet");
        QVERIFY(ids.size() >= 2);
        const auto biased = textBiasTokens(**tok, {{" Elizabeth Bennet", -7.5f}, {"!", 2.f}});
        QCOMPARE(biased.size(), ids.size() + 1);
        for (size_t i = 0; i < ids.size(); ++i)
            QCOMPARE(biased[i], std::make_pair(ids[i], -7.5f));
        QCOMPARE(biased.back(), std::make_pair((*tok)->encode("!")[0], 2.f));
    }

    // Logits 2, 1, 0: p = 0.6652, 0.2447, 0.0900, entropy 0.8324 of ln 3 = 1.0986:
    // 0.7577; T 1 +- 0.5 gives 0.5 + 1.0 * 0.7577 = 1.2577.
    void dynamicTemperature() {
        SamplingOptions o = at1();
        o.dynatempRange = 0.5;
        const std::vector<double> p = {std::exp(2.0), std::exp(1.0), 1.0};
        const double sum = p[0] + p[1] + p[2];
        double entropy = 0;
        for (double x : p)
            entropy -= x / sum * std::log(x / sum);
        const double t = 0.5 + std::pow(entropy / std::log(3.0), 1.0);
        QVERIFY(std::abs(t - 1.257681) < 1e-5);
        const double a = std::exp(2 / t), b = std::exp(1 / t), c = 1;
        QVERIFY(isDistribution(distribution(o, {2, 1, 0}),
                               {{0, a / (a + b + c)}, {1, b / (a + b + c)}, {2, c / (a + b + c)}}));
        o.dynatempExponent = 2; // 0.5 + 0.7577^2
        const double t2 = 0.5 + std::pow(entropy / std::log(3.0), 2.0);
        const double a2 = std::exp(2 / t2), b2 = std::exp(1 / t2);
        QVERIFY(isDistribution(
            distribution(o, {2, 1, 0}),
            {{0, a2 / (a2 + b2 + 1)}, {1, b2 / (a2 + b2 + 1)}, {2, 1 / (a2 + b2 + 1)}}));
    }

    // Mirostat v2 with tau 1: mu starts at 2 bits, so only p >= 0.25 stays (0.5); its
    // surprise, 0 bits after renormalising, moves mu by eta * (0 - 1): to 2.1.
    void mirostatV2() {
        SamplingOptions o = at1();
        o.mirostat = 2;
        o.mirostatTau = 1;
        o.mirostatEta = 0.1;
        QVERIFY(isDistribution(distribution(o, logitsOf(kProbs)), {{0, 1.0}}));
        Sampler s(o);
        auto l = logitsOf(kProbs);
        QCOMPARE(s.sample(l, {}), 0);
        QVERIFY(std::abs(s.mirostatMu() - 2.1) < 1e-9);
    }

    // OpenAI's penalties over the recent tokens 1, 1, 2: token 1 loses 2 * 0.25 + 0.5,
    // token 2 loses 0.25 + 0.5.
    void presenceAndFrequency() {
        SamplingOptions o = at1();
        o.presencePenalty = 0.5;
        o.frequencyPenalty = 0.25;
        const double a = 1, b = std::exp(-1.0), c = std::exp(-0.75);
        const double sum = 2 * a + b + c;
        QVERIFY(isDistribution(distribution(o, {0, 0, 0, 0}, {1, 1, 2}),
                               {{0, a / sum}, {1, b / sum}, {2, c / sum}, {3, a / sum}}));
        o.repetitionRange = 1; // only the last token seen: 2
        const double sum1 = 3 + c;
        QVERIFY(isDistribution(distribution(o, {0, 0, 0, 0}, {1, 1, 2}),
                               {{0, 1 / sum1}, {1, 1 / sum1}, {2, c / sum1}, {3, 1 / sum1}}));
    }

    // DRY over 1 2 3 4 1 2 3: the last token, 3, came before at index 2, followed by 4;
    // the repeat ending there is 1 2 3 (3 tokens), so 4 loses 0.8 * 1.75^(3 - 2) = 1.4.
    // With 2 a sequence breaker, the repeat stops at it: 1 token, under the allowed 2.
    void dry() {
        SamplingOptions o = at1();
        o.dryMultiplier = 0.8;
        const std::vector<int32_t> recent = {1, 2, 3, 4, 1, 2, 3};
        const double d = std::exp(-1.4), sum = 4 + d;
        QVERIFY(isDistribution(
            [&] {
                Sampler s(o);
                std::vector<float> l(5, 0.f);
                std::map<int32_t, double> out;
                for (const auto& [id, p] : s.distribution(l, recent))
                    out[id] = p;
                return out;
            }(),
            {{0, 1 / sum}, {1, 1 / sum}, {2, 1 / sum}, {3, 1 / sum}, {4, d / sum}}));
        Sampler broken(o, {2});
        std::vector<float> l(5, 0.f);
        for (const auto& [id, p] : broken.distribution(l, recent))
            QVERIFY(std::abs(p - 0.2) < 1e-9);
        o.dryAllowedLength = 4; // a repeat of 3 is allowed
        QVERIFY(isDistribution(distribution(o, std::vector<float>(5, 0.f), recent),
                               {{0, 0.2}, {1, 0.2}, {2, 0.2}, {3, 0.2}, {4, 0.2}}));
        o.dryAllowedLength = 2;
        o.dryRange = 4; // only 4 1 2 3: 3 is not seen before
        QCOMPARE(distribution(o, std::vector<float>(5, 0.f), recent).at(4), 0.2);
    }

    // A bias is added before anything else; -100 bans a token.
    void logitBias() {
        SamplingOptions o = at1();
        o.logitBias = {{0, -100.f}, {2, std::log(2.f)}};
        const auto d = distribution(o, {0, 0, 0});
        QVERIFY(d.count(0) == 0 || d.at(0) < 1e-40);
        QVERIFY(std::abs(d.at(2) - 2.0 / 3.0) < 1e-6);
        o.temperature = 0; // greedy sees the bias too
        Sampler s(o);
        std::vector<float> l = {0, 0, 0};
        QCOMPARE(s.sample(l, {}), 2);
    }

    // No usable logit (a model gone to infinities): a token all the same, no crash.
    void noFiniteLogit() {
        SamplingOptions o = at1();
        o.minP = 0.1;
        const float inf = std::numeric_limits<float>::infinity();
        Sampler s(o);
        std::vector<float> l = {-inf, -inf, -inf};
        QCOMPARE(s.sample(l, {}), 0);
        o.mirostat = 2;
        Sampler m(o);
        std::vector<float> nan = {std::nanf(""), -inf};
        QCOMPARE(m.sample(nan, {}), 0);
        QVERIFY(std::isfinite(m.mirostatMu()));
    }

    // DRY measures repeats up to 50 tokens (text-generation-webui's cap), and its
    // penalty stays finite: a window of one token repeated costs a bounded time and
    // leaves that token out, the others in.
    void dryRepeatsAreCapped() {
        SamplingOptions o = at1();
        o.dryMultiplier = 0.8;
        o.dryBase = 10; // 10^48 would overflow a float
        const std::vector<int32_t> recent(1000, 1);
        std::vector<float> l(3, 0.f);
        Sampler s(o);
        const auto d = s.distribution(l, recent);
        QVERIFY(std::isfinite(l[1]) && l[1] < -1e29f);
        QVERIFY(isDistribution({d.begin(), d.end()}, {{0, 0.5}, {2, 0.5}}));
    }

    // Every sampler at once is still a distribution, and a seed repeats its tokens.
    void seededRunsRepeat() {
        SamplingOptions o = at1();
        o.minP = 0.02;
        o.typicalP = 0.95;
        o.xtcProbability = 0.3;
        o.dryMultiplier = 0.8;
        o.presencePenalty = 0.2;
        o.dynatempRange = 0.3;
        o.seed = 11;
        auto run = [&] {
            Sampler s(o);
            std::vector<int32_t> recent, drawn;
            for (int i = 0; i < 200; ++i) {
                std::vector<float> l(50);
                for (size_t j = 0; j < l.size(); ++j)
                    l[j] = float(std::sin(double(i * 7 + j)) * 3);
                const int32_t t = s.sample(l, recent);
                recent.push_back(t);
                drawn.push_back(t);
            }
            return drawn;
        };
        QCOMPARE(run(), run());
    }

    // The table: unique keys and flags, defaults inside their ranges, the engine's
    // validation refusing what the table refuses.
    void theTable() {
        std::set<std::string> keys, fields;
        for (const SamplerSetting& s : samplerSettings()) {
            QVERIFY2(keys.insert(s.key).second, s.key);
            QVERIFY2(s.check(s.defaultValue()).empty(), s.key);
            QVERIFY(s.help && std::string(s.help).size() > 10);
            QVERIFY(!s.fields.empty());
            for (const char* f : s.fields)
                QVERIFY2(fields.insert(f).second, f); // one setting per field name
            QCOMPARE(findSamplerSetting(s.key), &s);
            // Just past either end is refused, by the setting and by the engine.
            for (double past : {s.loOpen ? s.lo : s.lo - 1, s.hi + 1}) {
                QVERIFY2(!s.check(past).empty(), s.key);
                SamplingOptions o;
                s.set(o, past);
                QVERIFY2(!validateSampling(o).ok(), s.key);
            }
        }
        QCOMPARE(findSamplerSetting("min_p")->flag(), std::string("min-p"));
        QVERIFY(findSamplerSetting("nothing") == nullptr);
        SamplingOptions o;
        o.mirostat = 1;
        QVERIFY(!validateSampling(o).ok()); // only version 2
        o = {};
        o.drySequenceBreakers = {""};
        QVERIFY(!validateSampling(o).ok());
        o = {};
        o.logitBias = {{3, 200.f}};
        QVERIFY(!validateSampling(o).ok());
    }
};

QTEST_GUILESS_MAIN(TestSamplers)
#include "tst_samplers.moc"
