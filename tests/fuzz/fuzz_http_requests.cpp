// HTTP request bodies as the server reads them (server/src/requests.h), the endpoint
// chosen by the first byte: KoboldAI generate, OpenAI completions and chat, llama.cpp's
// completion, abort/check's genkey, the token endpoints, a model's chat template. Every body is
// either a request within the server's limits or a RequestError with a 4xx status; any other
// exception or a crash is a bug.
#include "fuzz_support.h"

#include "chat_template.h"
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
        switch (data[0] % 8) {
        case 0: {
            const auto g = server::parseKoboldGenerate(body, options);
            const engine::SamplingOptions* s = &g.request.sampling;
            engineTakes(*s);
            fuzz::check(g.request.maxContextTokens >= 0 &&
                            g.request.maxContextTokens <= options.maxContextTokens,
                        "context within the limit");
            fuzz::check(s->maxTokens >= 1 && s->maxTokens <= options.generateLimit(),
                        "max_length within the limit");
            fuzz::check(s->topP > 0 && s->topP <= 1 && s->repetitionPenalty >= 1, "sane sampling");
            fuzz::check(std::isfinite(s->temperature) && s->temperature >= 0, "temperature");
            break;
        }
        case 1: {
            const auto c = server::parseOpenAiCompletion(body, options);
            const engine::SamplingOptions* s = &c.request.sampling;
            engineTakes(*s);
            fuzz::check(s->maxTokens >= 0 && s->maxTokens <= options.generateLimit(),
                        "max_tokens within the limit");
            fuzz::check(c.n >= 1 && c.n <= 8 && s->stopStrings.size() <= 4, "n and stop");
            fuzz::check(s->topP > 0 && s->topP <= 1, "top_p");
            break;
        }
        case 2:
            (void)server::parseGenkey(body);
            break;
        case 3:
            (void)server::parseTokenCount(body);
            (void)server::parseLlamaTokenize(body);
            (void)server::parseTokenIds(body, "tokens");
            break;
        case 4: {
            const auto l = server::parseLlamaCompletion(body, options);
            engineTakes(l.request.sampling);
            fuzz::check(l.request.sampling.maxTokens >= 0 &&
                            l.request.sampling.maxTokens <= options.generateLimit() &&
                            l.probs >= 0 && l.probs <= 20,
                        "n_predict and n_probs within the limits");
            break;
        }
        case 5: {
            const auto c = server::parseOpenAiChat(body, options);
            engineTakes(c.request.sampling);
            fuzz::check(!c.messages.empty() && c.n >= 1 && c.n <= 8, "messages and n");
            const auto p = server::renderChat({}, c.messages);
            fuzz::check(!p.stops.empty(), "a chat stops at the next speaker");
            break;
        }
        default: {
            const auto t = server::parseChatTemplate(body);
            fuzz::check(!t.separator.empty(), "a template ends its turns");
            break;
        }
        }
    } catch (const server::RequestError& e) {
        // A body is a 4xx; a model's chat template, a 500 that names the file.
        fuzz::check((e.status() >= 400 && e.status() < 500) || data[0] % 8 >= 6,
                    "a bad body is a 4xx");
        fuzz::check(e.what()[0] != '\0', "the error says what is wrong");
    }
    return 0;
}
