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
#include <utility>
#include <vector>

namespace baton::engine {

class Model;
class Tokenizer;

// Which state each window of a recurrent model receives: the true one, or one of the
// ablations that show what the state carries. Window 0 never has a state.
enum class StateSource {
    On,       // the state pooled from the previous window
    Off,      // none: the same weights with no extra key and value
    Mean,     // the mean of the true states over the text, in every window
    Far,      // the true state of the window half the text away (cyclically)
    Shuffled, // the true states permuted so that no window keeps its own
};
const char* stateSourceName(StateSource source); // "on", "off", "mean", "far", "shuffled"
Result<StateSource> parseStateSource(std::string_view name);

struct ScoreOptions {
    WindowSettings windows; // see resolveWindows(): window 0 = the model's default
    // Off switches a recurrent model's state off (same weights, no extra key and
    // value); Mean, Far and Shuffled first compute the true states, then score with
    // the replacements. Ignored for a baseline model.
    StateSource state = StateSource::On;
    uint64_t shuffleSeed = 1; // the permutation of Shuffled
    bool keepPerToken = true;
    // With keepPerToken: the most likely tokens at each scored position, with their
    // log-probabilities (0-20; 0: none).
    int topAlternatives = 0;
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
    // ScoreOptions::topAlternatives most likely tokens there, most likely first.
    std::vector<std::pair<int32_t, float>> top;
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

// One window's share of the score: the unit of paired comparisons.
struct WindowScore {
    int64_t index = 0;
    int64_t scored = 0;
    double nllSum = 0;
    std::vector<double> bandNll;     // by position band, as ScoreResult::bands
    std::vector<int64_t> bandTokens; // idem
};

struct ScoreResult {
    WindowSettings windows;
    StateSource state = StateSource::On;
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
    std::vector<WindowScore> perWindow;
};

// a - b in mean NLL per scored token (nats) over the same windows of the same text,
// with the standard error of that difference from the spread of the per-window
// differences (a ratio estimator: windows of unequal size weigh by their tokens).
struct PairedDifference {
    double mean = 0;
    double stdError = 0;
    int64_t windows = 0; // windows with scored tokens in this band
    int64_t tokens = 0;
};
struct PairedComparison {
    PairedDifference all;
    std::vector<PairedDifference> bands; // as ScoreResult::bands
};
// InvalidArgument when the two do not cover the same windows with the same tokens.
Result<PairedComparison> comparePaired(const std::vector<WindowScore>& a,
                                       const std::vector<WindowScore>& b);

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
// (windows of T with overlap o, state on), or over the windows `spans` gives (each at
// most T tokens). InvalidArgument for a baseline model. progress(windows done, windows
// in all) may return false to cancel.
Result<std::vector<StateReading>>
readStates(const Model& model, const std::vector<int32_t>& ids, const WindowSettings& windows,
           int top, const CancelToken& cancel = {},
           const std::function<bool(int64_t, int64_t)>& progress = {},
           const std::vector<WindowSpan>& spans = {});

// Whitespace-separated pieces of a text (the word count of word-level perplexity).
int64_t countWords(std::string_view text);

// The per-token losses of a scored text, for colouring the text and drawing its
// windows: token i ends at byte byteEnd[i] of the text and cost nll[i] nats (token 0
// is never predicted: NaN).
struct TokenLosses {
    WindowSettings windows;
    bool withState = true;
    std::vector<int64_t> byteEnd;
    std::vector<float> nll;
};

// The TokenLosses of a text scored with ScoreOptions::keepPerToken: ids are the text's
// tokens (the tokenizer's encoding of its textBytes bytes).
TokenLosses tokenLosses(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                        const ScoreResult& scored, size_t textBytes);

// Pairing across tokenizers: the text cut into spans of spanBytes bytes (the last one
// shorter), each predicted token's NLL counted in the span that holds its last byte. Two
// models' spans of one text pair whatever their tokens; the only mismatch is each
// text's first token, which no window predicts (a few bytes of the first span).
struct ByteSpanScore {
    int64_t bytes = 0; // bytes of text in the span
    double nllSum = 0; // nats, of the tokens that end in it
};
std::vector<ByteSpanScore> scoreByteSpans(const TokenLosses& losses, int64_t textBytes,
                                          int64_t spanBytes);
// a - b in nats per byte over the same spans, with its standard error as comparePaired
// computes it (PairedDifference::windows counts spans, ::tokens bytes). InvalidArgument
// when the two do not cut the same text the same way.
Result<PairedDifference> comparePairedSpans(const std::vector<ByteSpanScore>& a,
                                            const std::vector<ByteSpanScore>& b);

// A text under several settings (the app's Compare page and its loss view).
struct EvaluateRequest {
    std::string text;
    std::vector<WindowSettings> settings; // one row per setting
    bool alsoWithoutState = false;        // recurrent models: each setting again, state off
    bool keepPerToken = false;            // each row with its TokenLosses
};
struct EvaluationRow {
    ScoreResult score;
    bool withState = true;
    TokenLosses losses; // keepPerToken only
};
// Scores the text under each setting in order, calling row() as each is done.
Result<void> evaluate(const Model& model, const EvaluateRequest& request,
                      const std::function<void(EvaluationRow)>& row, const CancelToken& cancel = {},
                      const JobProgress& progress = {});

Result<ScoreResult> scoreTokens(const Model& model, const std::vector<int32_t>& ids,
                                const ScoreOptions& options);
// Tokenizes the text with the model's tokenizer and counts its words.
Result<ScoreResult> scoreText(const Model& model, std::string_view text,
                              const ScoreOptions& options);

} // namespace baton::engine
