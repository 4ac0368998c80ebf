#include "baton/engine/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace baton::engine {

uint64_t drawSeed() {
    std::random_device device;
    return uint64_t(device()) & 0x7fffffffu;
}

Result<void> validateSampling(const SamplingOptions& o) {
    auto bad = [](const std::string& what) {
        return makeError(ErrorCode::InvalidArgument, "invalid sampling setting: " + what);
    };
    if (!std::isfinite(o.temperature) || o.temperature < 0 || o.temperature > 10)
        return bad("temperature must be 0 (greedy) or in (0, 10]");
    if (o.topK < 0)
        return bad("top-k must be >= 0 (0 turns it off)");
    if (!std::isfinite(o.topP) || o.topP <= 0 || o.topP > 1)
        return bad("top-p must be in (0, 1]");
    if (!std::isfinite(o.repetitionPenalty) || o.repetitionPenalty < 1 || o.repetitionPenalty > 10)
        return bad("repetition penalty must be in [1, 10]");
    if (o.repetitionRange < 0)
        return bad("repetition range must be >= 0 (0: the whole window)");
    if (o.logprobs < -1 || o.logprobs > 20)
        return bad("logprobs must be in [0, 20] (or -1: none)");
    if (o.maxTokens < 0 || o.maxTokens > 1000000)
        return bad("max tokens must be in [0, 1000000]");
    for (const auto& s : o.stopStrings)
        if (s.empty())
            return bad("stop strings must not be empty");
    return {};
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

Sampler::Sampler(const SamplingOptions& options)
    : m_options(options)
    , m_rng(options.seed) {}

int32_t Sampler::sample(std::vector<float>& logits, const std::vector<int32_t>& recent) {
    const auto n = static_cast<int32_t>(logits.size());
    if (m_options.repetitionPenalty != 1.0) {
        const float p = static_cast<float>(m_options.repetitionPenalty);
        m_seen.assign(logits.size(), 0);
        const size_t range = m_options.repetitionRange > 0
                                 ? std::min(recent.size(), size_t(m_options.repetitionRange))
                                 : recent.size();
        for (size_t i = recent.size() - range; i < recent.size(); ++i) {
            const int32_t id = recent[i];
            if (id < 0 || id >= n || m_seen[id])
                continue;
            m_seen[id] = 1;
            logits[id] = logits[id] > 0 ? logits[id] / p : logits[id] * p;
        }
    }
    if (m_options.greedy())
        return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) -
                                    logits.begin());

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
        const float floor = best - static_cast<float>(40.0 * m_options.temperature);
        for (int32_t i = 0; i < n; ++i)
            if (logits[i] >= floor)
                m_order.push_back(i);
        std::sort(m_order.begin(), m_order.end(), byLogit);
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
    for (int32_t i = 0; i < keep; ++i) {
        u -= m_probs[i];
        if (u < 0)
            return m_order[i];
    }
    return m_order[keep - 1];
}

} // namespace baton::engine
