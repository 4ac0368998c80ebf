// What the two APIs' request bodies ask for, read and checked before anything runs:
// a body that is not what its endpoint documents is a RequestError (4xx) naming the
// field. Torch- and HTTP-free: the fuzz target (tests/fuzz) reads bodies through these.
#pragma once

#include "request_fields.h"

#include "baton/server/server.h"
#include "completion.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace baton::server {

// Every API's counts of tokens to generate and of context are clamped to the server's
// limits, not refused (front ends offer more than a server takes: KoboldAI Lite a
// quarter of the advertised context), and the clamp is reported in
// CompletionRequest::adjusted; so is a sampler field Baton does not have yet.

// The sampling settings and prompt of a KoboldAI /api/v1/generate body (and of its
// streaming twin); the memory field is put before the prompt.
struct KoboldGenerate {
    CompletionRequest request;
    std::string genkey;
    bool trimStop = true;
    // KoboldCpp reads "logprobs" as true or false, and clients send a number too
    // (mikupad sends 10): any true value turns them on, with that many alternatives
    // (5 for true, as KoboldCpp).
    bool logprobs = false;
};
KoboldGenerate parseKoboldGenerate(std::string_view body, const ServerOptions& options);

// An OpenAI /v1/completions body.
struct OpenAiCompletion {
    CompletionRequest request;
    int n = 1;
    bool stream = false;
    bool includeUsage = false; // stream_options.include_usage
    bool echo = false;
    int logprobs = -1;
};
OpenAiCompletion parseOpenAiCompletion(std::string_view body, const ServerOptions& options);

// llama.cpp's POST /completion.
struct LlamaCompletion {
    CompletionRequest request;
    bool stream = false;
    int probs = 0; // n_probs: alternatives per generated token (0-20)
    // post_sampling_probs: probabilities ("prob", "top_probs") instead of
    // log-probabilities ("logprob", "top_logprobs").
    bool postSamplingProbs = false;
};
LlamaCompletion parseLlamaCompletion(std::string_view body, const ServerOptions& options);

// An OpenAI /v1/chat/completions body; the prompt is made from the messages by the
// model's chat template (chat_template.h).
struct ChatMessage {
    std::string role; // system, user, assistant (or developer, tool: shown by their name)
    std::string name; // the speaker's own name, when given
    std::string content;
};
struct OpenAiChat {
    CompletionRequest request;
    std::vector<ChatMessage> messages;
    int n = 1;
    bool stream = false;
    bool includeUsage = false; // stream_options.include_usage
    int logprobs = -1;         // top_logprobs when logprobs is true, else -1
};
OpenAiChat parseOpenAiChat(std::string_view body, const ServerOptions& options);

// The optional genkey of /api/extra/abort, /api/extra/generate/check and
// /api/extra/last_logprobs (an empty body is allowed: the latest generation).
std::string parseGenkey(std::string_view body);

// Text to count or tokenize: KoboldCpp's /api/extra/tokencount {"prompt", "special"}
// (special, default true: the start-of-text token first) and llama.cpp's /tokenize
// {"content", "add_special", "with_pieces"}.
struct TokenizeRequest {
    std::string text;
    bool addSpecial = false;
    bool withPieces = false;
};
TokenizeRequest parseTokenCount(std::string_view body);
TokenizeRequest parseLlamaTokenize(std::string_view body);

// The text of the OpenAI-compatible servers' token endpoints (text-generation-webui's
// /v1/internal/token-count and encode, TabbyAPI's and Aphrodite's /v1/token/encode):
// "text", or "prompt".
std::string parseTokenText(std::string_view body);

// Token ids to turn into text: llama.cpp's /detokenize {"tokens"}, KoboldCpp's
// /api/extra/detokenize {"ids"}.
std::vector<int32_t> parseTokenIds(std::string_view body, const char* field);

} // namespace baton::server
