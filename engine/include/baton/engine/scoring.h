// Windowed scoring: the log-probability of every token but the first, computed in
// windows of T with overlap o, for baseline and recurrent models.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/windows.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::engine {

class Model;

struct ScoreOptions {
    WindowSettings windows; // see resolveWindows(): window 0 = the model's default
    // false switches a recurrent model's state off (same weights, no extra key and
    // value): the diagnostic that shows what the state contributes.
    bool useState = true;
    bool keepPerToken = true;
    CancelToken cancel;
    // Called after each window with (windows done, windows in all); false cancels.
    std::function<bool(int64_t, int64_t)> progress;
};

struct TokenScore {
    int64_t index = 0; // position in the token stream
    int32_t id = 0;
    float logprob = 0;    // natural log-probability of this token
    int32_t window = 0;   // the window that scored it
    int32_t position = 0; // the window position whose output predicted it
};

// Statistics over the scored predictions made at window positions [first, last].
struct PositionBand {
    int first = 0;
    int last = 0; // inclusive; INT32_MAX for "the rest"
    int64_t tokens = 0;
    double nllSum = 0;
    // Attention probability on the state slot (insert block, mean over heads),
    // summed over the predictions whose window had a slot.
    double slotMassSum = 0;
    int64_t slotMassCount = 0;

    double meanNll() const { return tokens ? nllSum / double(tokens) : 0.0; }
    double meanSlotMass() const {
        return slotMassCount ? slotMassSum / double(slotMassCount) : 0.0;
    }
};

struct ScoreResult {
    WindowSettings windows;
    int64_t tokens = 0;       // tokens in the text
    int64_t scoredTokens = 0; // tokens - 1
    int64_t words = 0;        // whitespace-separated pieces of the text
    int64_t windowCount = 0;
    double nllSum = 0; // nats
    double tokenPerplexity = 0;
    double wordPerplexity = 0;
    double seconds = 0;
    bool recurrent = false;          // a recurrent model scored with its state on
    std::vector<PositionBand> bands; // window positions 0-15, 16-63 and the rest
    std::vector<std::string> warnings;
    std::vector<TokenScore> perToken;
};

// What a recurrent model's state carries (the app's topics view): the state h_prev
// handed to each window after the first, projected through the final layer norm and
// the LM head (the tied embedding), as its most probable tokens.
struct StateReading {
    int64_t window = 0;       // the window that receives the state (>= 1)
    int64_t firstToken = 0;   // where that window starts in the token stream
    std::vector<int32_t> ids; // the top tokens, most probable first
    std::vector<float> probs; // their probabilities under softmax over the vocabulary
};

// One reading per window after the first, computed as scoring computes the states
// (windows of T with overlap o, state on). InvalidArgument for a baseline model.
// progress(windows done, windows in all) may return false to cancel.
Result<std::vector<StateReading>>
readStates(const Model& model, const std::vector<int32_t>& ids, const WindowSettings& windows,
           int top, const CancelToken& cancel = {},
           const std::function<bool(int64_t, int64_t)>& progress = {});

// Whitespace-separated pieces of a text (the word count of word-level perplexity).
int64_t countWords(std::string_view text);

Result<ScoreResult> scoreTokens(const Model& model, const std::vector<int32_t>& ids,
                                const ScoreOptions& options);
// Tokenizes the text with the model's tokenizer and counts its words.
Result<ScoreResult> scoreText(const Model& model, std::string_view text,
                              const ScoreOptions& options);

} // namespace baton::engine
