#include "requests.h"

#include <algorithm>
#include <optional>

namespace baton::server {

using Json = json::Json;

namespace {

// The repetition penalty by all the names KoboldCpp reads it by (its OpenAI clients,
// SillyTavern's "Text Completion" among them, send the llama.cpp and text-generation-
// webui spellings): the largest penalty given, and the first range given.
void readRepetitionPenalty(const Fields& f, engine::SamplingOptions& s, double penalty, int range) {
    std::optional<double> largest;
    for (const char* name : {"rep_pen", "repetition_penalty", "repeat_penalty"})
        if (auto p = f.number(name, 0, 10))
            largest = std::max(largest.value_or(*p), *p);
    s.repetitionPenalty = largest.value_or(penalty);
    if (s.repetitionPenalty < 1)
        throw RequestError(400, "\"rep_pen\" must be >= 1 (1 turns it off)");
    s.repetitionRange = range;
    for (const char* name : {"rep_pen_range", "repetition_penalty_range", "repeat_last_n"})
        if (auto r = f.whole(name, 0, 1 << 30)) {
            s.repetitionRange = int(*r);
            break;
        }
}

} // namespace

KoboldGenerate parseKoboldGenerate(std::string_view text, const ServerOptions& options) {
    const Json body = parseJsonObject(text);
    const Fields f(body);
    KoboldGenerate g;
    auto prompt = f.string("prompt");
    if (!prompt)
        throw RequestError(400, "\"prompt\" is required");
    g.request.prompt = f.string("memory").value_or("") + *prompt;
    auto& s = g.request.sampling;
    s.maxTokens = int(f.whole("max_length", 1, options.maxGenerateTokens).value_or(100));
    g.request.maxContextTokens =
        f.whole("max_context_length", 1, options.maxContextTokens).value_or(0);
    s.temperature = f.number("temperature", 0, 10).value_or(0.7);
    s.topP = f.number("top_p", 0, 1).value_or(0.92);
    if (s.topP == 0)
        s.topP = 1; // KoboldAI clients send 0 for "off"
    s.topK = int(f.whole("top_k", 0, 1 << 30).value_or(100));
    readRepetitionPenalty(f, s, 1.1, 320);
    s.seed = f.seed("sampler_seed").value_or(engine::drawSeed());
    s.stopStrings = f.strings("stop_sequence", 64);
    // KoboldCpp's end-of-text ban (KoboldAI Lite's "EOS Token Ban"), either of its names.
    s.stopAtEndOfText = !f.boolean("use_default_badwordsids").value_or(false) &&
                        !f.boolean("bypass_eos").value_or(false);
    g.trimStop = f.boolean("trim_stop").value_or(true);
    g.genkey = f.string("genkey").value_or("");
    g.logprobs = f.boolean("logprobs").value_or(false);
    if (g.logprobs)
        s.logprobs = 5;
    return g;
}

OpenAiCompletion parseOpenAiCompletion(std::string_view text, const ServerOptions& options) {
    const Json body = parseJsonObject(text);
    const Fields f(body);
    OpenAiCompletion c;
    // A prompt is a string or token ids, alone or as a batch of one.
    const auto p = body.find("prompt");
    if (p == body.end() || p->is_null())
        throw RequestError(400, "\"prompt\" is required");
    const Json* prompt = &*p;
    if (prompt->is_array() && prompt->size() == 1 &&
        ((*prompt)[0].is_string() || (*prompt)[0].is_array()))
        prompt = &(*prompt)[0];
    if (prompt->is_string()) {
        c.request.prompt = prompt->get<std::string>();
    } else if (prompt->is_array() && !prompt->empty() &&
               prompt->size() <= size_t(options.maxContextTokens)) {
        std::vector<int32_t> ids;
        for (const auto& id : *prompt) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
                throw RequestError(400, "\"prompt\" token ids must be integers from 0");
            ids.push_back(int32_t(id.get<int64_t>()));
        }
        c.request.promptIds = std::move(ids);
    } else {
        throw RequestError(400, "\"prompt\" must be a string, an array of token ids, or a batch "
                                "of one of them (larger batches are not supported)");
    }
    f.string("model"); // any name is accepted: one model is served
    auto& s = c.request.sampling;
    s.maxTokens = int(f.integer("max_tokens", 0, options.maxGenerateTokens).value_or(16));
    // OpenAI's range is [0, 2]; KoboldCpp takes any, and SillyTavern sends up to 5.
    s.temperature = f.number("temperature", 0, 10).value_or(1.0);
    s.topP = f.number("top_p", 0, 1).value_or(1.0);
    if (s.topP == 0)
        throw RequestError(400, "\"top_p\" must be in (0, 1]");
    s.stopStrings = f.strings("stop", 4);
    s.stopAtEndOfText = !f.boolean("ignore_eos").value_or(false); // vLLM's and llama.cpp's
    // A negative seed (SillyTavern sends -1) asks for a random one.
    s.seed = f.seed("seed").value_or(f.seed("sampler_seed").value_or(engine::drawSeed()));
    // KoboldCpp's own sampler fields, which its OpenAI clients send: off unless given.
    s.topK = int(f.whole("top_k", 0, 1 << 30).value_or(0));
    readRepetitionPenalty(f, s, 1.0, 0);
    c.stream = f.boolean("stream").value_or(false);
    c.echo = f.boolean("echo").value_or(false);
    c.n = int(f.integer("n", 1, 8).value_or(1));
    // OpenAI allows 5; SillyTavern asks for 10 (the engine gives up to 20).
    c.logprobs = int(f.integer("logprobs", 0, 20).value_or(-1));
    s.logprobs = c.logprobs;
    return c;
}

std::string parseGenkey(std::string_view body) {
    if (body.empty())
        return {};
    return Fields(parseJsonObject(body)).string("genkey").value_or("");
}

std::string parseTokenCountPrompt(std::string_view body) {
    const Json object = parseJsonObject(body);
    auto prompt = Fields(object).string("prompt");
    if (!prompt)
        throw RequestError(400, "\"prompt\" is required");
    return *prompt;
}

} // namespace baton::server
