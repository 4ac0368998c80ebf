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

// The sampling settings and prompt of a KoboldAI /api/v1/generate body (and of its
// streaming twin); the memory field is put before the prompt.
struct KoboldGenerate {
    CompletionRequest request;
    std::string genkey;
    bool trimStop = true;
    bool logprobs = false;
};
KoboldGenerate parseKoboldGenerate(std::string_view body, const ServerOptions& options);

// An OpenAI /v1/completions body.
struct OpenAiCompletion {
    CompletionRequest request;
    int n = 1;
    bool stream = false;
    bool echo = false;
    int logprobs = -1;
};
OpenAiCompletion parseOpenAiCompletion(std::string_view body, const ServerOptions& options);

// The optional genkey of /api/extra/abort and /api/extra/generate/check (an empty body
// is allowed: the latest generation).
std::string parseGenkey(std::string_view body);

// The prompt of /api/extra/tokencount.
std::string parseTokenCountPrompt(std::string_view body);

} // namespace baton::server
