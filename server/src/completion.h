// One completion of a raw prompt, as the HTTP APIs ask for it, at a cost that does not
// grow with the prompt: the prompt is read from the longest prefix that an earlier
// request already read (the kept generator of the last request, which can also go back
// to the end of its prompt; else a saved window state from the prefix cache), and
// states are saved at every full window of the prompt and of the generated text for
// the requests that follow.
//
// A prompt whose front the client cut (a front end keeping a story under its context
// size) continues the stream the server read for an earlier request, from the state at
// the last window boundary both share (stream_match.h): the model then reads what it
// would have read had the client sent the whole story, and the request costs what it
// adds.
//
// A prompt is read as baton-cli story generate reads a story: the model's start-of-
// text token, then the text.
#pragma once

#include "baton/server/server.h"
#include "prefix_cache.h"
#include "saved_states.h"
#include "stream_match.h"

#include <baton/engine/cancel.h>
#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/sampling.h>
#include <baton/engine/scoring.h>
#include <baton/engine/windows.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton::server {

struct CompletionRequest {
    std::string prompt; // its text (decoded from promptIds when those are given)
    // A prompt given as token ids (OpenAI clients may send them): read as they are,
    // instead of encoding `prompt`.
    std::optional<std::vector<int32_t>> promptIds;
    engine::SamplingOptions sampling;
    // Read only the last this many tokens of the prompt, less room for maxTokens, as
    // KoboldAI clients ask (0: the whole prompt).
    int64_t maxContextTokens = 0;
    // What the server changed in what was asked, for the client to see (the
    // X-Baton-Adjusted header): a limit clamped, a field Baton does not use.
    std::vector<std::string> adjusted;
};

struct CompletionResult {
    engine::GenerationResult generation;
    int64_t promptTokens = 0;  // read before generating (with the start-of-text token)
    int64_t reusedTokens = 0;  // of those, covered by a kept generator or a saved state
    int64_t encodedTokens = 0; // tokens run through the model before generating
    bool truncated = false;    // the prompt's front was left out (maxContextTokens)
    double readSeconds = 0;    // reading the prompt (what was not reused)
    // The prompt continued a stream read for an earlier request, whose front the client
    // had cut: the model read that stream's first `continuedFrom` tokens (through their
    // state), then the prompt from `reusedTokens` on.
    bool continuedTrimmed = false;
    int64_t continuedFrom = 0;
};

class CompletionEngine {
public:
    // saved: the lasting level below the memory cache (none: memory only).
    CompletionEngine(engine::WindowSettings windows, size_t cacheBytes,
                     std::unique_ptr<SavedStates> saved = nullptr);
    ~CompletionEngine();

    // Runs with the model on the thread the model host gives it (one at a time).
    engine::Result<CompletionResult>
    complete(const std::shared_ptr<const engine::Model>& model, const CompletionRequest& request,
             const std::function<bool(const engine::GenerationEvent&)>& onToken,
             const engine::CancelToken& cancel);

    // The prompt's own log-probabilities (OpenAI's echo with logprobs): every token of
    // it after the start-of-text token, scored in the windows it is read in, with the
    // `alternatives` most likely tokens at each (0-20). For a model that reads texts
    // without a start-of-text token the first token has nothing before it: its
    // log-probability is NaN (null in JSON, as OpenAI gives the first token's). This
    // reads the whole prompt again: a saved state does not keep them.
    engine::Result<std::vector<engine::TokenScore>>
    scorePrompt(const std::shared_ptr<const engine::Model>& model, const CompletionRequest& request,
                int alternatives, const engine::CancelToken& cancel) const;

    // The token ids a prompt is read as (without the start-of-text token).
    static std::vector<int32_t> tokenize(const engine::Model& model, const std::string& text);

    CompletionStats stats() const;
    const engine::WindowSettings& windows() const { return m_windows; }

private:
    struct Live;
    // A request's prompt as it is read: the start-of-text token, then the prompt's
    // tokens (its front left out by maxContextTokens), in the windows served.
    struct Prompt {
        std::vector<int32_t> ids;
        engine::WindowSettings windows;
        bool truncated = false;
    };
    engine::Result<Prompt> readPrompt(const std::shared_ptr<const engine::Model>& model,
                                      const CompletionRequest& request) const;
    // The ids to read for a prompt: the prompt itself, or, when its front was cut and an
    // earlier stream covers more of it than a saved prefix does, that stream up to a
    // window boundary and the prompt after it (out's continued fields are set).
    std::vector<int32_t> continueTrimmed(const std::shared_ptr<const engine::Model>& model,
                                         const Prompt& prompt, CompletionResult& out) const;
    // How many of ids the kept generator covers, and whether only by going back to the
    // end of its prompt (its mark); 0 when none.
    std::pair<int64_t, bool> liveCovers(const std::vector<int32_t>& ids) const;
    // How many of ids a kept generator or a saved state (in memory or the database)
    // would cover.
    int64_t reusable(const std::vector<int32_t>& ids,
                     const std::vector<PrefixHasher::Key>& keys) const;
    // A stream read, for the trimmed-prompt matcher; `save`: also in the database.
    void remember(ReadStream stream, bool save);
    engine::Result<std::unique_ptr<engine::Generator>>
    startFrom(const std::shared_ptr<const engine::Model>& model, const engine::WindowSettings& w,
              const std::vector<int32_t>& ids, const std::vector<PrefixHasher::Key>& keys,
              int64_t& start, int64_t& reread, const engine::CancelToken& cancel);

    engine::WindowSettings m_windows;
    PrefixStateCache m_cache;
    std::unique_ptr<SavedStates> m_saved;
    std::unique_ptr<Live> m_live;
    // The streams of the last few requests (newest first), with their prefix keys.
    struct Recent {
        ReadStream stream;
        std::vector<PrefixHasher::Key> keys;
    };
    std::deque<Recent> m_recent;
    std::string m_cacheOwner; // model identity and windows the cached states belong to
    mutable std::mutex m_statsMutex;
    CompletionStats m_stats;
};

} // namespace baton::server
