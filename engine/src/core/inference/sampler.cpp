#include "baton/engine/sampling.h"

#include "baton/engine/sampler_settings.h"
#include "baton/engine/tokenizer.h"
#include "inference/logit_order.h"
#include "inference/sampler_stages.h"
#include "util/utf8.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>

namespace baton::engine {

uint64_t drawSeed() {
    std::random_device device;
    return uint64_t(device()) & 0x7fffffffu;
}

Result<void> validateSampling(const SamplingOptions& o) {
    auto bad = [](const std::string& what) {
        return makeError(ErrorCode::InvalidArgument, "invalid sampling setting: " + what);
    };
    for (const SamplerSetting& setting : samplerSettings())
        if (const std::string why = setting.check(setting.get(o)); !why.empty())
            return bad(why);
    if (o.logprobs < -1 || o.logprobs > 20)
        return bad("logprobs must be in [0, 20] (or -1: none)");
    if (o.maxTokens < 0 || o.maxTokens > 1000000)
        return bad("max tokens must be in [0, 1000000]");
    for (const auto& s : o.stopStrings)
        if (s.empty())
            return bad("stop strings must not be empty");
    for (const auto& s : o.drySequenceBreakers)
        if (s.empty())
            return bad("DRY sequence breakers must not be empty");
    if (o.drySequenceBreakers.size() > 64)
        return bad("at most 64 DRY sequence breakers");
    for (const auto& [id, bias] : o.logitBias)
        if (id < 0 || !std::isfinite(bias) || bias < -100 || bias > 100)
            return bad("a logit bias needs a token id >= 0 and a bias in [-100, 100]");
    if (o.bannedPhrases.size() > 64)
        return bad("at most 64 banned phrases");
    for (const auto& p : o.bannedPhrases)
        if (p.empty() || p.size() > 256 || !utf8::isValid(p))
            return bad("a banned phrase needs 1 to 256 bytes of UTF-8");
    if (o.textBias.size() > 256)
        return bad("at most 256 texts with a logit bias");
    for (const auto& [text, bias] : o.textBias)
        if (text.empty() || text.size() > 256 || !utf8::isValid(text) || !std::isfinite(bias) ||
            bias < -100 || bias > 100)
            return bad("a text logit bias needs a text of 1 to 256 bytes of UTF-8 and a bias in "
                       "[-100, 100]");
    const auto& names = samplerStageNames();
    for (size_t i = 0; i < o.samplerOrder.size(); ++i) {
        const std::string& s = o.samplerOrder[i];
        if (std::find(names.begin(), names.end(), s) == names.end())
            return bad("unknown sampler '" + s + "' in the sampler order");
        if (std::find(o.samplerOrder.begin(), o.samplerOrder.begin() + long(i), s) !=
            o.samplerOrder.begin() + long(i))
            return bad("'" + s + "' appears twice in the sampler order");
    }
    return {};
}

namespace {
enum Stage { TopNSigma, TopK, TailFree, Typical, TopP, MinP, TopA, Xtc, Temperature };
} // namespace

const std::vector<std::string>& samplerStageNames() {
    // Indexed by Stage.
    static const std::vector<std::string> names = {"top_n_sigma", "top_k", "tail_free",
                                                   "typical_p",   "top_p", "min_p",
                                                   "top_a",       "xtc",   "temperature"};
    return names;
}

std::vector<int32_t> dryBreakerTokens(const Tokenizer& tokenizer,
                                      const std::vector<std::string>& breakers) {
    std::vector<int32_t> out;
    for (const std::string& b : breakers) {
        const std::vector<int32_t> ids = tokenizer.encode("a" + b);
        if (!ids.empty())
            out.push_back(ids.back());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::pair<int32_t, float>>
textBiasTokens(const Tokenizer& tokenizer,
               const std::vector<std::pair<std::string, float>>& textBias) {
    std::vector<std::pair<int32_t, float>> out;
    for (const auto& [text, bias] : textBias)
        for (int32_t id : tokenizer.encode(text))
            out.emplace_back(id, bias);
    return out;
}

namespace {

uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

} // namespace

Rng::Rng(uint64_t seed) {
    for (auto& s : m_s)
        s = splitmix64(seed);
}

uint64_t Rng::next() {
    const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
}

double Rng::uniform() {
    return double(next() >> 11) * (1.0 / 9007199254740992.0);
}

std::vector<uint64_t> Rng::state() const {
    return {m_s[0], m_s[1], m_s[2], m_s[3]};
}

void Rng::setState(const std::vector<uint64_t>& state) {
    for (size_t i = 0; i < 4 && i < state.size(); ++i)
        m_s[i] = state[i];
}

Sampler::Sampler(const SamplingOptions& options, std::vector<int32_t> dryBreakers)
    : m_options(options)
    , m_dryBreakers(std::move(dryBreakers))
    , m_rng(options.seed)
    , m_mu(2 * options.mirostatTau) {
    std::sort(m_dryBreakers.begin(), m_dryBreakers.end());
    const auto& names = samplerStageNames();
    for (const std::string& stage : options.samplerOrder)
        m_stages.push_back(int(std::find(names.begin(), names.end(), stage) - names.begin()));
    if (options.samplerOrder.empty()) {
        m_stages = {TopNSigma, TopK};
        if (!options.temperatureLast)
            m_stages.push_back(Temperature);
        for (int stage : {TailFree, Typical, TopP, MinP, TopA, Xtc})
            m_stages.push_back(stage);
        if (options.temperatureLast)
            m_stages.push_back(Temperature);
    }
}

bool Sampler::extended() const {
    const SamplingOptions& o = m_options;
    return o.minP > 0 || o.typicalP < 1 || o.tailFree < 1 || o.topA > 0 || o.topNSigma > 0 ||
           o.xtcProbability > 0 || o.dynatempRange > 0 || o.temperatureLast != 0 ||
           o.mirostat == 2 || !o.samplerOrder.empty();
}

namespace {

// The longest repeat DRY measures (text-generation-webui's cap): it bounds both the
// time per token and the penalty (base^48 stays finite).
constexpr int64_t kDryMaxMatch = 50;
// The largest penalty DRY subtracts: out of reach of any candidate, and finite in a float
// whatever the base.
constexpr double kDryMaxPenalty = 1e30;

} // namespace

void Sampler::applyPenalties(std::vector<float>& logits, const std::vector<int32_t>& recent) {
    const auto n = static_cast<int32_t>(logits.size());
    const SamplingOptions& o = m_options;
    for (const auto& [id, bias] : o.logitBias)
        if (id < n)
            logits[size_t(id)] += bias;
    const size_t range =
        o.repetitionRange > 0 ? std::min(recent.size(), size_t(o.repetitionRange)) : recent.size();
    if (o.repetitionPenalty != 1.0) {
        const float p = static_cast<float>(o.repetitionPenalty);
        m_seen.assign(logits.size(), 0);
        for (size_t i = recent.size() - range; i < recent.size(); ++i) {
            const int32_t id = recent[i];
            if (id < 0 || id >= n || m_seen[id])
                continue;
            m_seen[id] = 1;
            logits[id] = logits[id] > 0 ? logits[id] / p : logits[id] * p;
        }
    }
    // OpenAI's presence and frequency penalties (llama.cpp's penalties sampler).
    if (o.presencePenalty != 0 || o.frequencyPenalty != 0) {
        std::unordered_map<int32_t, int> counts;
        for (size_t i = recent.size() - range; i < recent.size(); ++i)
            if (recent[i] >= 0 && recent[i] < n)
                ++counts[recent[i]];
        for (const auto& [id, count] : counts)
            logits[size_t(id)] -=
                float(count * o.frequencyPenalty + (count > 0 ? o.presencePenalty : 0.0));
    }
    // DRY, as text-generation-webui defines it (modules/sampler_hijack.py,
    // DRYLogitsProcessor): for each earlier place of the last token, the repeat that ends
    // there (not crossing a breaker) and the token that followed it; a token that would
    // extend a repeat of at least the allowed length loses multiplier * base^(length -
    // allowed).
    if (o.dryMultiplier > 0) {
        const size_t dryRange =
            o.dryRange > 0 ? std::min(recent.size(), size_t(o.dryRange)) : recent.size();
        const int32_t* t = recent.data() + (recent.size() - dryRange);
        const auto len = static_cast<int64_t>(dryRange);
        auto breaker = [&](int32_t id) {
            return std::binary_search(m_dryBreakers.begin(), m_dryBreakers.end(), id);
        };
        if (len >= 2 && !breaker(t[len - 1])) {
            std::unordered_map<int32_t, int64_t> longest;
            for (int64_t i = 0; i + 1 < len; ++i) {
                if (t[i] != t[len - 1] || breaker(t[i + 1]))
                    continue;
                int64_t match = 1; // at most 50, as text-generation-webui stops there
                while (match < kDryMaxMatch && i - match >= 0 && !breaker(t[i - match]) &&
                       t[i - match] == t[len - 1 - match])
                    ++match;
                int64_t& best = longest[t[i + 1]];
                best = std::max(best, match);
            }
            for (const auto& [id, match] : longest)
                if (match >= o.dryAllowedLength && id >= 0 && id < n)
                    logits[size_t(id)] -= float(std::min(
                        kDryMaxPenalty,
                        o.dryMultiplier * std::pow(o.dryBase, double(match - o.dryAllowedLength))));
        }
    }
}

int32_t Sampler::sample(std::vector<float>& logits, const std::vector<int32_t>& recent) {
    applyPenalties(logits, recent);
    const bool recording = m_options.logprobsAfterSampling && m_options.logprobs >= 0;
    if (m_options.greedy()) {
        const auto best =
            static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        if (recording)
            record({{best, 1.0}}, 1.0, best);
        return best;
    }
    if (!extended())
        return sampleClassic(logits);
    std::vector<Candidate> candidates;
    truncate(logits, candidates);
    const int32_t chosen = draw(candidates);
    if (recording) {
        m_kept.clear();
        double total = 0;
        for (const Candidate& c : candidates) {
            m_kept.emplace_back(c.id, c.p);
            total += c.p;
        }
        record(m_kept, total, chosen);
    }
    return chosen;
}

void Sampler::record(const std::vector<std::pair<int32_t, double>>& kept, double total,
                     int32_t chosen) {
    m_lastChosen = 0;
    m_lastTop = kept;
    for (auto& [id, p] : m_lastTop) {
        p /= total;
        if (id == chosen)
            m_lastChosen = p;
    }
    const size_t n = std::min(m_lastTop.size(), size_t(std::max(m_options.logprobs, 0)));
    std::partial_sort(m_lastTop.begin(), m_lastTop.begin() + std::ptrdiff_t(n), m_lastTop.end(),
                      [](const auto& a, const auto& b) {
                          return a.second != b.second ? a.second > b.second : a.first < b.first;
                      });
    m_lastTop.resize(n);
}

std::vector<std::pair<int32_t, double>> Sampler::distribution(std::vector<float>& logits,
                                                              const std::vector<int32_t>& recent) {
    applyPenalties(logits, recent);
    if (m_options.greedy())
        return {
            {static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()),
             1.0}};
    std::vector<Candidate> candidates;
    truncate(logits, candidates);
    double total = 0;
    for (const Candidate& c : candidates)
        total += c.p;
    std::vector<std::pair<int32_t, double>> out;
    for (const Candidate& c : candidates)
        out.emplace_back(c.id, c.p / total);
    return out;
}

using namespace stages; // inference/sampler_stages.h

void Sampler::truncate(std::vector<float>& logits, std::vector<Candidate>& c) {
    const SamplingOptions& o = m_options;
    const auto n = static_cast<int32_t>(logits.size());
    size_t first = 0;
    if (!m_stages.empty() && m_stages[0] == TopNSigma) {
        if (o.topNSigma > 0 && o.mirostat != 2)
            topNSigma(logits, o.topNSigma);
        first = 1;
    }
    // Candidates: the tokens within e^-40 of the best at the highest temperature used;
    // the others carry less than 1e-12 of the mass together.
    const double hottest = std::max(1.0, o.temperature + o.dynatempRange);
    float best = -std::numeric_limits<float>::infinity();
    int32_t bestId = 0;
    for (int32_t i = 0; i < n; ++i)
        if (std::isfinite(logits[size_t(i)]) && logits[size_t(i)] > best) {
            best = logits[size_t(i)];
            bestId = i;
        }
    c.clear();
    if (!std::isfinite(best)) { // no finite logit at all: the first token, as argmax would
        c.push_back({bestId, 0.f, 1.0});
        return;
    }
    const double floor = best - 40.0 * hottest;
    for (int32_t i = 0; i < n; ++i)
        if (std::isfinite(logits[size_t(i)]) && logits[size_t(i)] >= floor)
            c.push_back({i, logits[size_t(i)], 0.0});
    softmax(c, 1.0); // sorted
    // The temperature, or with dynatempRange the dynamic one (llama.cpp's
    // llama_sampler_temp_ext_apply): from T - range to T + range by the normalised
    // entropy of the candidates it applies to, raised to the exponent.
    auto temperatureFor = [&](Candidates& cands) {
        if (o.dynatempRange <= 0 || cands.size() < 2)
            return o.temperature;
        softmax(cands, 1.0);
        const double norm = entropyOf(cands) / std::log(double(cands.size()));
        const double lo = std::max(0.0, o.temperature - o.dynatempRange);
        const double hi = o.temperature + o.dynatempRange;
        return lo + (hi - lo) * std::pow(norm, o.dynatempExponent);
    };
    double applied = 1.0; // the temperature the candidates' probabilities are at
    auto applyTemperature = [&](Candidates& cands) {
        const double t = temperatureFor(cands);
        if (t <= 0) { // greedy
            softmax(cands, 1.0);
            cands.resize(1);
            cands[0].p = 1;
        } else {
            softmax(cands, t);
        }
        applied = std::max(t, 1e-9);
    };
    if (o.mirostat == 2) {
        // Mirostat v2 (llama.cpp's llama_sampler_mirostat_v2_apply), after the
        // temperature and instead of the truncations: tokens more surprising than mu
        // bits are out; draw() moves mu toward tau.
        applyTemperature(c);
        size_t keep = 0;
        while (keep < c.size() && -std::log2(c[keep].p) <= m_mu)
            ++keep;
        c.resize(std::max<size_t>(1, keep));
        renormalise(c);
        return;
    }
    for (size_t i = first; i < m_stages.size(); ++i) {
        switch (m_stages[i]) {
        case TopNSigma: // later in the chain: over the candidates left
            if (o.topNSigma > 0 && c.size() > 1) {
                std::vector<float> kept;
                for (const auto& x : c)
                    kept.push_back(x.logit);
                topNSigma(kept, o.topNSigma);
                size_t j = 0;
                for (size_t k = 0; k < c.size(); ++k)
                    if (std::isfinite(kept[k]))
                        c[j++] = c[k];
                c.resize(std::max<size_t>(1, j));
                softmax(c, applied);
            }
            break;
        case TopK: // and the probabilities anew over the tokens kept
            if (o.topK > 0 && size_t(o.topK) < c.size())
                c.resize(size_t(o.topK));
            softmax(c, applied);
            break;
        case TailFree:
            tailFree(c, o.tailFree);
            break;
        case Typical:
            typical(c, o.typicalP);
            break;
        case TopP:
            topP(c, o.topP);
            break;
        case MinP: // min-p (llama.cpp's): p >= min_p times the likeliest token's
            if (o.minP > 0)
                keepAtLeast(c, o.minP * c.front().p);
            break;
        case TopA: // top-a (KoboldCpp's sample_top_a): p >= a times the best p squared
            if (o.topA > 0)
                keepAtLeast(c, o.topA * c.front().p * c.front().p);
            break;
        case Xtc:
            // XTC (llama.cpp's llama_sampler_xtc_apply): with this probability, every
            // token at least as likely as the threshold goes but the least likely.
            if (o.xtcProbability > 0 && o.xtcThreshold <= 0.5 && c.size() >= 2 &&
                m_rng.uniform() <= o.xtcProbability) {
                size_t last = 0;
                for (size_t k = 0; k < c.size() && c[k].p >= o.xtcThreshold; ++k)
                    last = k;
                if (last > 0) {
                    c.erase(c.begin(), c.begin() + long(last));
                    renormalise(c);
                }
            }
            break;
        case Temperature:
            applyTemperature(c);
            break;
        }
    }
}

int32_t Sampler::draw(const std::vector<Candidate>& c) {
    double u = m_rng.uniform();
    size_t chosen = c.size() - 1;
    for (size_t i = 0; i < c.size(); ++i) {
        u -= c[i].p;
        if (u < 0) {
            chosen = i;
            break;
        }
    }
    if (m_options.mirostat == 2) {
        const double surprise = -std::log2(c[chosen].p);
        m_mu -= m_options.mirostatEta * (surprise - m_options.mirostatTau);
    }
    return c[chosen].id;
}

int32_t Sampler::sampleClassic(std::vector<float>& logits) {
    const auto n = static_cast<int32_t>(logits.size());
    // Candidates: every token, or for top-k the k best, or for top-p (which needs
    // them in order) those within e^-40 of the best: the tokens left out carry less
    // than 1e-12 of the mass together, far below any cut top-p can make.
    auto byLogit = [&](int32_t a, int32_t b) {
        return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    };
    const float best = *std::max_element(logits.begin(), logits.end());
    m_order.clear();
    int32_t keep = n;
    if (m_options.topK > 0 && m_options.topK < n) {
        m_order.resize(logits.size());
        std::iota(m_order.begin(), m_order.end(), 0);
        keep = m_options.topK;
        std::partial_sort(m_order.begin(), m_order.begin() + keep, m_order.end(), byLogit);
    } else if (m_options.topP < 1.0) {
        // Sorted as (logit, id) pairs side by side: the same order as byLogit (a total
        // order: ids differ), without looking every comparison's logits up.
        const float floor = best - static_cast<float>(40.0 * m_options.temperature);
        m_sorted.clear();
        for (int32_t i = 0; i < n; ++i)
            if (logits[i] >= floor)
                m_sorted.emplace_back(logits[i], i);
        sortByLogit(
            m_sorted, [](const auto& x) { return x.first; },
            [](const auto& x) { return x.second; });
        for (const auto& [logit, id] : m_sorted)
            m_order.push_back(id);
        keep = static_cast<int32_t>(m_order.size());
    } else {
        m_order.resize(logits.size());
        std::iota(m_order.begin(), m_order.end(), 0);
    }
    const double invT = 1.0 / m_options.temperature;
    const double top = best;
    m_probs.resize(static_cast<size_t>(keep));
    double total = 0;
    for (int32_t i = 0; i < keep; ++i) {
        const double p = std::exp((logits[m_order[i]] - top) * invT);
        m_probs[i] = static_cast<float>(p);
        total += p;
    }
    if (m_options.topP < 1.0) {
        double cum = 0;
        int32_t cut = keep;
        for (int32_t i = 0; i < keep; ++i) {
            cum += m_probs[i] / total;
            if (cum >= m_options.topP) {
                cut = i + 1;
                break;
            }
        }
        keep = cut;
        total = 0;
        for (int32_t i = 0; i < keep; ++i)
            total += m_probs[i];
    }
    double u = m_rng.uniform() * total;
    int32_t chosen = m_order[keep - 1];
    for (int32_t i = 0; i < keep; ++i) {
        u -= m_probs[i];
        if (u < 0) {
            chosen = m_order[i];
            break;
        }
    }
    if (m_options.logprobsAfterSampling && m_options.logprobs >= 0) {
        m_kept.clear();
        for (int32_t i = 0; i < keep; ++i)
            m_kept.emplace_back(m_order[i], double(m_probs[i]));
        record(m_kept, total, chosen);
    }
    return chosen;
}

} // namespace baton::engine
