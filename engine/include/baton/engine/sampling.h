// Turning logits into the next token: greedy, temperature, top-k, top-p and a
// repetition penalty, reproducible from a seed on every platform.
#pragma once

#include "baton/engine/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

struct SamplingOptions {
    double temperature = 0.8;             // 0 = greedy (argmax); otherwise in (0, 10]
    int topK = 0;                         // keep the k most likely tokens; 0 = all
    double topP = 1.0;                    // keep the smallest set with this much mass; 1 = all
    double repetitionPenalty = 1.0;       // >= 1; CTRL-style, over the open window's tokens
    int repetitionRange = 0;              // the penalty sees the last this many; 0 = the window
    int maxTokens = 200;                  // >= 0
    uint64_t seed = 0;                    // same seed, same settings, same context: same text
    std::vector<std::string> stopStrings; // stop before any of these would be emitted
    bool stopAtEndOfText = true;          // stop when the model emits its end-of-text token
    // >= 0: every generated token's event carries its log-probability under the model
    // (before temperature, penalty and truncation) and the this many most likely tokens
    // with theirs; -1: none (costs nothing). At most 20.
    int logprobs = -1;

    bool greedy() const { return temperature == 0.0; }
};

// InvalidArgument with the offending setting named, or success.
Result<void> validateSampling(const SamplingOptions& options);

// The seed of a generation that has no fixed one: drawn from the system's entropy, in
// [0, 2^31) so that every place a seed is shown or typed back (the app's seed field,
// JSON numbers in any client, the story's history) holds it exactly.
uint64_t drawSeed();

// A small, fast generator with the same sequence on every platform (xoshiro256**
// seeded through splitmix64).
class Rng {
public:
    explicit Rng(uint64_t seed = 0);
    uint64_t next();
    double uniform(); // [0, 1)
    // The complete state, to save and restore a generation mid-way.
    std::vector<uint64_t> state() const;
    void setState(const std::vector<uint64_t>& state);

private:
    uint64_t m_s[4];
};

class Sampler {
public:
    explicit Sampler(const SamplingOptions& options);

    // Picks a token from `logits` (modified in place). `recent` are the tokens the
    // repetition penalty applies to.
    int32_t sample(std::vector<float>& logits, const std::vector<int32_t>& recent);

    Rng& rng() { return m_rng; }

private:
    SamplingOptions m_options;
    Rng m_rng;
    std::vector<int32_t> m_order;
    std::vector<float> m_probs;
    std::vector<uint8_t> m_seen;
};

} // namespace baton::engine
