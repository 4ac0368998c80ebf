// HTTP request bodies as the server reads them (server/src/requests.h), the endpoint
// chosen by the first byte: KoboldAI generate, OpenAI completions, abort/check's
// genkey, tokencount. Every body is either a request within the server's limits or a
// RequestError with a 4xx status; any other exception or a crash is a bug.
#include "fuzz_support.h"

#include "requests.h"

#include <baton/engine/sampling.h>

#include <cmath>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const auto body = fuzz::asText(data + 1, size - 1);
    server::ServerOptions options;
    // What the server accepts, the engine must take as it is.
    auto engineTakes = [](const engine::SamplingOptions& s) {
        fuzz::check(engine::validateSampling(s).ok(), "the engine takes the sampling settings");
    };
    try {
        switch (data[0] % 4) {
        case 0: {
            const auto g = server::parseKoboldGenerate(body, options);
            const engine::SamplingOptions* s = &g.request.sampling;
            engineTakes(*s);
            fuzz::check(g.request.maxContextTokens >= 0 &&
                            g.request.maxContextTokens <= options.maxContextTokens,
                        "context within the limit");
            fuzz::check(s->maxTokens >= 1 && s->maxTokens <= options.maxGenerateTokens,
                        "max_length within the limit");
            fuzz::check(s->topP > 0 && s->topP <= 1 && s->repetitionPenalty >= 1, "sane sampling");
            fuzz::check(std::isfinite(s->temperature) && s->temperature >= 0, "temperature");
            break;
        }
        case 1: {
            const auto c = server::parseOpenAiCompletion(body, options);
            const engine::SamplingOptions* s = &c.request.sampling;
            engineTakes(*s);
            fuzz::check(s->maxTokens >= 0 && s->maxTokens <= options.maxGenerateTokens,
                        "max_tokens within the limit");
            fuzz::check(c.n >= 1 && c.n <= 8 && s->stopStrings.size() <= 4, "n and stop");
            fuzz::check(s->topP > 0 && s->topP <= 1, "top_p");
            break;
        }
        case 2:
            (void)server::parseGenkey(body);
            break;
        default:
            (void)server::parseTokenCountPrompt(body);
            break;
        }
    } catch (const server::RequestError& e) {
        fuzz::check(e.status() >= 400 && e.status() < 500, "a bad body is a 4xx");
        fuzz::check(e.what()[0] != '\0', "the error says what is wrong");
    }
    return 0;
}
