// Turning logits into the next token, reproducible from a seed on every platform:
// greedy, temperature (first or last, or dynamic), top-k, top-p, min-p, typical-p,
// tail-free, top-a, top-n-sigma, XTC and Mirostat v2; the repetition, presence,
// frequency and DRY penalties and a logit bias. Every numeric setting is described once
// in sampler_settings.h (its range, default, API field names and meaning).
//
// The order, as llama.cpp's default chain (src/llama-sampling.cpp) with KoboldCpp's
// tail-free and top-a where KoboldCpp runs them: logit bias, the penalties (repetition,
// presence and frequency, DRY), then top-n-sigma, top-k, tail-free, typical-p, top-p,
// min-p, top-a, XTC, and temperature (or Mirostat v2, alone, after the temperature).
// Baton applies the temperature first unless temperatureLast is set (its truncations
// then see the tempered distribution, as Baton's top-p always has); llama.cpp and
// KoboldCpp apply it last. SamplingOptions::samplerOrder replaces that chain by the
// stages it names, in its order (llama.cpp's `samplers`, KoboldCpp's `sampler_order`).
#pragma once

#include "baton/engine/error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace baton::engine {

struct SamplingOptions {
    double temperature = 0.8;       // 0 = greedy (argmax); otherwise in (0, 10]
    int topK = 0;                   // keep the k most likely tokens; 0 = all
    double topP = 1.0;              // keep the smallest set with this much mass; 1 = all
    double repetitionPenalty = 1.0; // >= 1; CTRL-style, over the open window's tokens
    int repetitionRange = 0;        // the penalty sees the last this many; 0 = the window
    // The samplers below are off at these values (sampler_settings.h says what each
    // does). With all of them off, a seed gives the text it gave before they existed.
    double minP = 0;
    double typicalP = 1;
    double tailFree = 1;
    double topA = 0;
    double topNSigma = 0;
    double xtcThreshold = 0.1;
    double xtcProbability = 0;
    double dynatempRange = 0;
    double dynatempExponent = 1;
    int temperatureLast = 0; // 1: the temperature after the truncations
    int mirostat = 0;        // 2: Mirostat v2 (the only version offered)
    double mirostatTau = 5;
    double mirostatEta = 0.1;
    double presencePenalty = 0;  // OpenAI's: minus this for every token seen (in range)
    double frequencyPenalty = 0; // OpenAI's: minus this per time a token was seen
    double dryMultiplier = 0;
    double dryBase = 1.75;
    int dryAllowedLength = 2;
    int dryRange = 0; // DRY looks at the last this many tokens; 0 = the window
    // DRY does not extend a repeat across these (text-generation-webui's defaults).
    std::vector<std::string> drySequenceBreakers = {"\n", ":", "\"", "*"};
    // Added to these tokens' logits before anything else (-100 bans a token).
    std::vector<std::pair<int32_t, float>> logitBias;
    // Texts whose tokens get a bias: every token of the text's encoding by the model's
    // tokenizer, as SillyTavern's logit bias list treats a text (textBiasTokens). Write
    // " word" for the word after a space.
    std::vector<std::pair<std::string, float>> textBias;
    // The truncations and the temperature, in this order, after the penalties (which
    // always come first); a stage not named does not run. Empty: Baton's chain above.
    // Names: samplerStageNames(). Mirostat v2 ignores it (it replaces the chain).
    std::vector<std::string> samplerOrder;
    int maxTokens = 200;                  // >= 0
    uint64_t seed = 0;                    // same seed, same settings, same context: same text
    std::vector<std::string> stopStrings; // stop before any of these would be emitted
    // Texts that never appear in what is generated (ASCII case ignored): the generator
    // goes back to where one began and samples again without the token it began with.
    // The stream handed out never shows what was taken back. A phrase matches as a
    // whole word (where it begins or ends with a letter or digit, not inside a longer
    // word: "her" bans "her," but not "there"), or anywhere with bannedInsideWords.
    std::vector<std::string> bannedPhrases;
    bool bannedInsideWords = false;
    bool stopAtEndOfText = true; // stop when the model emits its end-of-text token
    // >= 0: every generated token's event carries its log-probability under the model
    // (before temperature, penalty and truncation) and the this many most likely tokens
    // with theirs; -1: none (costs nothing). At most 20.
    int logprobs = -1;
    // With logprobs: the log-probabilities the token was drawn with instead, after the
    // penalties, the bans, the truncations and the temperature, over the tokens kept
    // (llama.cpp's post_sampling_probs): as many alternatives as were kept, at most
    // `logprobs`; greedy keeps one, at probability 1.
    bool logprobsAfterSampling = false;

    bool greedy() const { return temperature == 0.0; }
};

// InvalidArgument with the offending setting named, or success.
Result<void> validateSampling(const SamplingOptions& options);

// The stages SamplingOptions::samplerOrder may name: top_n_sigma, top_k, tail_free,
// typical_p, top_p, min_p, top_a, xtc, temperature.
const std::vector<std::string>& samplerStageNames();

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
    // dryBreakers: the token ids that end a DRY repeat (dryBreakerTokens); none needed
    // while DRY is off.
    explicit Sampler(const SamplingOptions& options, std::vector<int32_t> dryBreakers = {});

    // Picks a token from `logits` (modified in place). `recent` are the tokens the
    // penalties apply to (the open window).
    int32_t sample(std::vector<float>& logits, const std::vector<int32_t>& recent);

    // The distribution the next token would be drawn from after every setting
    // (candidates and probabilities summing to 1), for tests and inspection; it uses
    // the generator's randomness as sample() does (XTC draws).
    std::vector<std::pair<int32_t, double>> distribution(std::vector<float>& logits,
                                                         const std::vector<int32_t>& recent);

    Rng& rng() { return m_rng; }
    double mirostatMu() const { return m_mu; }

    // With SamplingOptions::logprobsAfterSampling, what the last sample() drew from:
    // the chosen token's probability, and the most probable tokens kept (at most
    // SamplingOptions::logprobs, most probable first).
    double lastProbability() const { return m_lastChosen; }
    const std::vector<std::pair<int32_t, double>>& lastTop() const { return m_lastTop; }

    struct Candidate {
        int32_t id;
        float logit;
        double p;
    };

private:
    void applyPenalties(std::vector<float>& logits, const std::vector<int32_t>& recent);
    // The classic path (temperature, top-k, top-p only): the draw it always made.
    int32_t sampleClassic(std::vector<float>& logits);
    bool extended() const;
    // Candidates after the truncations, with probabilities, ready to draw from.
    void truncate(std::vector<float>& logits, std::vector<Candidate>& out);
    // The stages truncate() runs, in order (the option's, or Baton's chain).
    std::vector<int> m_stages;
    int32_t draw(const std::vector<Candidate>& candidates);

    SamplingOptions m_options;
    std::vector<int32_t> m_dryBreakers;
    Rng m_rng;
    double m_mu = 0; // Mirostat's running surprise bound
    std::vector<int32_t> m_order;
    std::vector<std::pair<float, int32_t>> m_sorted;
    std::vector<float> m_probs;
    std::vector<uint8_t> m_seen;
    // logprobsAfterSampling: the kept tokens' probabilities (of `total`) and the pick.
    void record(const std::vector<std::pair<int32_t, double>>& kept, double total, int32_t chosen);
    std::vector<std::pair<int32_t, double>> m_kept, m_lastTop;
    double m_lastChosen = 0;
};

// The tokens that end a DRY repeat: for each breaker string, the last token of the text
// "a" + breaker (text-generation-webui's rule, modules/sampler_hijack.py), so that a
// breaker at the start of a word is found as the tokenizer writes it there.
class Tokenizer;
std::vector<int32_t> dryBreakerTokens(const Tokenizer& tokenizer,
                                      const std::vector<std::string>& breakers);

// SamplingOptions::textBias as token biases: each token of each text's encoding, with
// that text's bias (a token in several texts gets each of their biases).
std::vector<std::pair<int32_t, float>>
textBiasTokens(const Tokenizer& tokenizer,
               const std::vector<std::pair<std::string, float>>& textBias);

} // namespace baton::engine
