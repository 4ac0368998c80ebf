// What the two APIs share: the model host and the completion engine, the queue bound,
// the running generations (by KoboldAI's genkey, for abort and check), and answering
// a completion as it is generated.
#pragma once

#include "baton/server/server.h"
#include "completion.h"
#include "logprobs.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace baton::server {

// One request's generations and how its answer is written: before, onEvent and onDone
// return the bytes to send at that point (empty: nothing yet), finish the last ones.
struct CompletionCall {
    std::vector<CompletionRequest> requests; // run one after another (OpenAI's n)
    std::string genkey;
    std::string contentType = "application/json";
    bool streaming = false;
    // Runs with the model before the generations (OpenAI's echo: the prompt, and with
    // logprobs its scores); false stops the call there (it answered with an error).
    std::function<std::string(CompletionEngine&, const std::shared_ptr<const engine::Model>&,
                              const engine::CancelToken&, bool& ok)>
        before;
    std::function<std::string(size_t index, const engine::GenerationEvent&)> onEvent;
    std::function<std::string(size_t index, const engine::Result<CompletionResult>&)> onDone;
    std::function<std::string()> finish;
    // KoboldCpp's logprobs: every generated token's, added as it comes (under the
    // server's lock), so that /api/extra/last_logprobs answers with what is generated
    // so far while the generation runs (KoboldAI Lite asks just before it aborts).
    std::shared_ptr<TokenLogprobs> logprobs;
};

class ServerCore {
public:
    ServerCore(engine::ModelQueue& queue, const ServerOptions& options);

    const ServerOptions& options() const { return m_options; }
    // The loaded model; a 503 RequestError when there is none.
    std::shared_ptr<const engine::Model> model() const;
    std::string modelName() const;

    // Answers with a chunked body written as the generation goes; a 503 when the queue
    // is full. A client that goes away cancels its generation.
    void respond(httplib::Response& response, CompletionCall call);

    // Stops the generation with this genkey (every running one when empty).
    bool abort(const std::string& genkey);
    // The text so far of the generation with this genkey (or the latest one).
    std::string partialText(const std::string& genkey) const;

    // The log-probabilities of a generation that asked for them, kept for KoboldCpp's
    // /api/extra/last_logprobs: those of the generation with this genkey, or of the
    // latest when the genkey is empty; null when there are none.
    void keepLogprobs(const std::string& genkey, nlohmann::ordered_json logprobs);
    nlohmann::ordered_json lastLogprobs(const std::string& genkey) const;
    // KoboldCpp's /api/extra/perf: the last generation's numbers, the totals, the queue.
    nlohmann::ordered_json perf() const;

    // The token ids a text is read as (the start-of-text token first when asked), and
    // the text of token ids (a 400 for ids outside the vocabulary).
    std::vector<int32_t> tokenize(const std::string& text, bool startOfText) const;
    std::string detokenize(const std::vector<int32_t>& ids) const;

    CompletionEngine& engine() { return m_engine; }
    CompletionStats completionStats() const { return m_engine.stats(); }
    int64_t generations() const { return m_generations.load(); }
    int queued() const { return m_active.load(); }

private:
    struct Running {
        std::string genkey;
        engine::CancelToken cancel;
        std::string text;
        std::shared_ptr<TokenLogprobs> logprobs; // CompletionCall::logprobs
    };
    // What /api/extra/perf reports of the last generation.
    struct Last {
        int64_t promptTokens = 0, reusedTokens = 0, readTokens = 0, generatedTokens = 0;
        double readSeconds = 0, generateSeconds = 0;
        std::string stopReason;
        bool continuedTrimmed = false;
    };
    void run(CompletionCall& call, httplib::DataSink& sink);

    engine::ModelQueue& m_queue;
    const ServerOptions& m_options;
    CompletionEngine m_engine;
    std::atomic<int> m_active{0};
    std::atomic<int64_t> m_generations{0};
    mutable std::mutex m_mutex; // guards m_running, m_latest and every Running's text
    std::list<std::shared_ptr<Running>> m_running;
    std::shared_ptr<Running> m_latest;
    Last m_last;                                               // guarded by m_mutex
    std::pair<std::string, nlohmann::ordered_json> m_logprobs; // genkey, logprobs; m_mutex
    std::set<std::string> m_adjustedSeen; // adjustments logged as warnings; m_mutex
    const std::chrono::steady_clock::time_point m_started = std::chrono::steady_clock::now();
};

// The APIs' endpoints: KoboldAI's (as KoboldCpp serves it), OpenAI's completions and
// chat completions, llama.cpp's server's.
void addKoboldRoutes(httplib::Server& http, ServerCore& core);
void addOpenAiRoutes(httplib::Server& http, ServerCore& core);
void addChatRoutes(httplib::Server& http, ServerCore& core);
void addLlamaRoutes(httplib::Server& http, ServerCore& core);

// "stop" for an end-of-text token, a stop string or a stop by the client; "length"
// when it ran out of tokens.
const char* finishReason(const engine::GenerationResult& result);

} // namespace baton::server
