// Streaming generation in windows (../shared/docs/method.md section 4): tokens are
// appended to the open window with a KV cache; a full window rolls over, keeping
// its last o tokens, so the cost per token stays flat however long the text grows.
//
// Thread-safety: a Generator is used by one thread at a time (a model queue's job);
// its CancelToken may be fired from any thread. Its Model may be shared.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/sampling.h"
#include "baton/engine/windows.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton::engine {

class Model;

struct GenerationEvent {
    int32_t token = 0;
    std::string text;         // complete UTF-8 that became final with this token
    int64_t generated = 0;    // tokens generated so far in this call
    int64_t streamLength = 0; // tokens in the whole stream
    int windowFill = 0; // positions of the open window in use (pinned tokens and guidance included)
    int64_t windowIndex = 0; // windows rolled over before the open one
    // With SamplingOptions::logprobs >= 0 (NaN otherwise): log p(token) under the
    // model, and the most likely tokens with theirs, most likely first.
    float logprob = std::numeric_limits<float>::quiet_NaN();
    std::vector<std::pair<int32_t, float>> topLogprobs;
};

// BannedPhrase: a banned phrase came back more times than the generator goes back for
// (256 in one generation); it ends before the phrase.
enum class StopReason { MaxTokens, StopString, EndOfText, Cancelled, Callback, BannedPhrase };
const char* stopReasonName(StopReason reason);

struct GenerationResult {
    std::string text;
    std::vector<int32_t> tokens;
    StopReason reason = StopReason::MaxTokens;
    double seconds = 0;
    double tokensPerSecond = 0;
    int64_t rollovers = 0;
    std::string stopString; // reason StopString: the stop string that ended it
};

// The version of the state blobs exportState() writes. importState reads it and
// versions 1 (one state slot) and 2 (no count of pinned tokens), and refuses others.
// Version 3 came with guidance (setGuide): a window may roll over early, so the count
// of pinned tokens is recorded instead of inferred from where windows start.
constexpr uint32_t kStateFormatVersion = 3;

// What a state blob says about its stream, read without a model (a story's context
// view shows where it resumes from).
struct StateSummary {
    bool hasState = false;             // a recurrent state enters the open window
    int64_t windowIndex = 0;           // windows rolled over before the open one
    int64_t windowStart = 0;           // where the open window's stream tokens begin
    int64_t streamLength = 0;          // tokens in the stream
    std::vector<int32_t> windowTokens; // the open window's stream tokens
};
// Checks the blob's structure (not which model it belongs to).
Result<StateSummary> summariseState(const std::vector<uint8_t>& blob);

// A generation from a prompt alone (the Compare page's continuations, baton-cli
// generate): a new generator, the prompt read with appendPrompt, then generate().
struct GenerateRequest {
    std::string prompt;
    SamplingOptions sampling;
    WindowSettings windows; // window 0: the model's default
    bool useState = true;   // false: a recurrent model with its state switched off
};
Result<GenerationResult> generateFrom(std::shared_ptr<const Model> model,
                                      const GenerateRequest& request,
                                      const std::function<bool(const GenerationEvent&)>& onToken,
                                      const CancelToken& cancel = {});

class Generator {
public:
    // windows: see resolveWindows(). useState = false runs a recurrent model with its
    // state switched off (same weights, no extra key and value): a diagnostic.
    static Result<std::unique_ptr<Generator>> create(std::shared_ptr<const Model> model,
                                                     const WindowSettings& windows = {},
                                                     bool useState = true);
    // A generator that continues exactly where an exported one stopped: the state
    // blob carries the open window's tokens, h_prev, the running pool, the offset,
    // T, o and the model's identity. Refuses blobs of another model, another T or o,
    // another format version, or damaged ones. Re-encodes at most the T tokens of
    // the open window.
    // `expected` are the windows the caller runs with (resolved as in create()): a
    // blob made with another T or o is refused. `pinned` must be the tokens the exported
    // generator had pinned (the blob does not hold them: a story's storage keys its
    // states by layout and drops them when the memory changes).
    static Result<std::unique_ptr<Generator>> importState(std::shared_ptr<const Model> model,
                                                          const std::vector<uint8_t>& blob,
                                                          const WindowSettings& expected = {},
                                                          const CancelToken& cancel = {},
                                                          const std::vector<int32_t>& pinned = {});
    ~Generator();

    // An opaque, versioned byte blob of the state at this point.
    Result<std::vector<uint8_t>> exportState() const;

    // Pins tokens to the start of every window, before the stream's (a story's memory,
    // read in every window instead of once): the state slots, then the pinned tokens,
    // then the stream. They take their length of T, so a window advances by
    // T - pinned - o stream tokens; positions and pooling count them like any other.
    // Only before anything is read; pinned + o must be below T. An empty stream then
    // generates right after them (no start-of-text token is added).
    Result<void> pin(const std::vector<int32_t>& ids);
    const std::vector<int32_t>& pinnedTokens() const;

    // Guidance (a story's world info and author's note): tokens placed whole in the
    // open window just before the continuation, never part of the stream (an exported
    // state holds the stream's tokens and pool; whoever continues it places its own
    // guidance). setGuide places them before the last `beforeLast` stream tokens of the
    // open window (0: at its end; more: an unfinished sentence stays between the
    // guidance and what is generated), cutting the window back to the last point before
    // that (and before guidance placed earlier) and reading it again from there. A
    // window without room for them rolls over first, keeping its overlap and the tokens
    // after their place. While generating, every new window gets them again right
    // after its overlap. Empty ids take the guidance away. pinned + guidance + o must
    // leave room for a new token.
    Result<void> setGuide(const std::vector<int32_t>& ids, int64_t beforeLast = 0);
    const std::vector<int32_t>& guideTokens() const;
    // Where the guidance sits in the open window: before windowTokens()[position]
    // (-1: not in the open window).
    int64_t guidePosition() const;
    // Tokens read into windows since the generator was made (prefill and decode, pinned
    // tokens, guidance and tokens read again included): what the work cost.
    int64_t tokensRead() const;

    // Adds context tokens (rolling over as windows fill).
    Result<void> append(const std::vector<int32_t>& ids, const CancelToken& cancel = {});
    Result<void> appendText(std::string_view text, const CancelToken& cancel = {});
    // Reads a prompt the way every caller starts a stream (a story, the server, the
    // Compare page, baton-cli generate): when nothing is read and nothing is pinned, the
    // model's start-of-text token first, then the text.
    Result<void> appendPrompt(std::string_view text, const CancelToken& cancel = {});

    // Generates up to options.maxTokens tokens; onToken may return false to stop.
    // An empty stream starts from the model's start-of-text token.
    // onToken sees each token as soon as it is sampled, before the model reads it (so
    // the first token does not wait for a step of the model): streamLength(),
    // windowTokens() and windowFill() count it already, tokensRead() not yet, and
    // whatever needs the model's state after it (exportState, nextLogits, mark, rewind,
    // append, setGuide) has the model read it first. When generate() returns, every
    // token it handed out has been read.
    Result<GenerationResult>
    generate(const SamplingOptions& options,
             const std::function<bool(const GenerationEvent&)>& onToken = {},
             const CancelToken& cancel = {});

    const WindowSettings& windows() const;
    int64_t streamLength() const;
    int64_t windowStart() const; // where the open window's stream tokens begin
    int64_t windowIndex() const; // windows rolled over since the stream began
    int windowFill() const;      // positions in use, pinned tokens and guidance included
    const std::vector<int32_t>& windowTokens() const; // the open window's stream tokens
    // The logits for the next token given everything so far (empty before any token).
    const std::vector<float>& nextLogits() const;
    // h_prev of the open window (empty for a baseline model or the first window).
    std::vector<float> currentState() const;

    // Remembers this point of the stream (one mark at a time; a new one replaces it).
    void mark();
    // Comes back to the mark, as if what was read or generated after it never was: the
    // open window keeps its keys and values up to there, so nothing is read again.
    // False, with nothing changed, when there is no mark, or the window has rolled
    // over since (the state moved on), or the stream is before the mark.
    bool rewind();

    class Impl;

private:
    explicit Generator(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace baton::engine
