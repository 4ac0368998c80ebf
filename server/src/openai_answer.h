// What OpenAI's completions and chat completions answers share: the id, creation time
// and model; the n requests one call runs (seeds one apart); an SSE chunk of one choice;
// for an answer not streamed, the choices gathered, the token counts and the usage.
#pragma once

#include "completion.h"
#include "logprobs.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace baton::server {

struct OpenAiAnswer {
    OpenAiAnswer(const char* idPrefix, std::string modelName, int n);

    std::string id;
    int64_t created;
    std::string model;
    nlohmann::ordered_json choices = nlohmann::ordered_json::array();
    int64_t promptTokens = 0, completionTokens = 0, cachedTokens = 0;
    std::vector<TokenLogprobs> logprobs; // one per choice
    std::string error;
    // stream_options.include_usage: every chunk carries "usage": null, and the stream
    // ends with a chunk of no choices and the usage (as OpenAI streams it).
    bool streamUsage = false;

    // "data: {...}\n\n" with this one choice.
    std::string chunk(const char* object, const nlohmann::ordered_json& choice) const;
    // Counts a finished choice's tokens.
    void count(const CompletionResult& r);
    // The whole answer (object, choices, usage), or the error.
    std::string finish(const char* object) const;
    // The end of a stream: the usage chunk (with streamUsage, unless it failed), then
    // "data: [DONE]".
    std::string finishStream(const char* object) const;

private:
    nlohmann::ordered_json usage() const;
};

// The call's requests: n of them, their seeds one apart.
std::vector<CompletionRequest> choiceRequests(const CompletionRequest& request, int n);

} // namespace baton::server
