#include "requests.h"

#include <baton/engine/sampler_settings.h>

#include <algorithm>
#include <cmath>
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
        if (auto r = f.whole(name, -1, int64_t(1) << 53)) { // -1: llama.cpp's "the context"
            s.repetitionRange = int(std::clamp<int64_t>(*r, 0, 1 << 20)); // 0: the window
            break;
        }
}

// A count of tokens (to generate, of context) from lo up: one above the server's
// limit is clamped to it, and the clamp is reported.
int64_t clampedCount(const Fields& f, const char* name, int64_t lo, int64_t limit, int64_t fallback,
                     bool wholeNumber, std::vector<std::string>& adjusted) {
    constexpr int64_t kAny = int64_t(1) << 53;
    const auto v = wholeNumber ? f.whole(name, lo, kAny) : f.integer(name, lo, kAny);
    if (!v)
        return fallback;
    if (*v > limit) {
        adjusted.push_back(std::string(name) + " " + std::to_string(*v) + " clamped to " +
                           std::to_string(limit) + ", the server's limit");
        return limit;
    }
    return *v;
}

// The sampler order: KoboldCpp's "sampler_order" (numbers: 0 top-k, 1 top-a, 2 top-p
// with min-p, 3 tail-free, 4 typical, 5 temperature with top-n-sigma, 6 the repetition
// penalty; XTC after them all, as KoboldCpp's gpttype_adapter.cpp runs them) or
// llama.cpp's "samplers" (names; its "penalties" and "dry" always come first in Baton).
void readSamplerOrder(const Json& body, engine::SamplingOptions& s,
                      std::vector<std::string>& adjusted) {
    std::vector<std::string> order;
    if (const auto it = body.find("sampler_order"); it != body.end() && !it->is_null()) {
        static const std::vector<std::vector<std::string>> kobold = {{"top_k"},
                                                                     {"top_a"},
                                                                     {"top_p", "min_p"},
                                                                     {"tail_free"},
                                                                     {"typical_p"},
                                                                     {"temperature", "top_n_sigma"},
                                                                     {}};
        if (!it->is_array() || it->size() > 16)
            throw RequestError(400, "\"sampler_order\" must be a list of up to 16 numbers");
        for (const Json& n : *it) {
            if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 6)
                throw RequestError(400, "\"sampler_order\" takes the numbers 0 to 6");
            for (const std::string& stage : kobold[size_t(n.get<int64_t>())])
                if (std::find(order.begin(), order.end(), stage) == order.end())
                    order.push_back(stage);
        }
        order.push_back("xtc");
    } else if (const auto it = body.find("samplers"); it != body.end() && !it->is_null()) {
        static const std::vector<std::pair<std::string, std::string>> llama = {
            {"top_k", "top_k"},
            {"top_p", "top_p"},
            {"min_p", "min_p"},
            {"typ_p", "typical_p"},
            {"typical_p", "typical_p"},
            {"tfs_z", "tail_free"},
            {"xtc", "xtc"},
            {"temperature", "temperature"},
            {"top_n_sigma", "top_n_sigma"}};
        if (!it->is_array() || it->size() > 16)
            throw RequestError(400, "\"samplers\" must be a list of up to 16 names");
        for (const Json& n : *it) {
            if (!n.is_string())
                throw RequestError(400, "\"samplers\" must be a list of names");
            const std::string name = n.get<std::string>();
            const auto m = std::find_if(llama.begin(), llama.end(),
                                        [&](const auto& p) { return p.first == name; });
            if (m != llama.end()) {
                if (std::find(order.begin(), order.end(), m->second) == order.end())
                    order.push_back(m->second);
            } else if (name != "penalties" && name != "dry") {
                adjusted.push_back("sampler " + name.substr(0, 32) + " not used");
            }
        }
    } else {
        return;
    }
    s.samplerOrder = order;
}

// The samplers of the settings table (engine/sampler_settings.h) by every field name
// clients send them by, beyond the ones each API reads with its own default above
// (temperature, top-k, top-p, the repetition penalty and its range); then DRY's
// sequence breakers and the logit bias. A field out of its range is a 400 that names
// it; a sampler Baton does not have is accepted and, when on, reported as not used.
void readSamplers(const Json& body, engine::SamplingOptions& s,
                  std::vector<std::string>& adjusted) {
    for (const engine::SamplerSetting& setting : engine::samplerSettings()) {
        const std::string key = setting.key;
        if (key == "temperature" || key == "top_k" || key == "top_p" ||
            key == "repetition_penalty" || key == "repetition_range")
            continue;
        for (const char* name : setting.fields) {
            const auto it = body.find(name);
            if (it == body.end() || it->is_null())
                continue;
            double v = 0;
            if (it->is_boolean()) // temperature_last: true, as text-generation-webui sends it
                v = it->get<bool>() ? 1 : 0;
            else if (it->is_number())
                v = it->get<double>();
            else
                throw RequestError(400, std::string("\"") + name + "\" must be a number");
            if (setting.integer && std::isfinite(v))
                v = std::trunc(v); // counts may come unrounded, as Python's int() reads them
            // llama.cpp's "off" and "the whole context" are -1.
            if ((key == "top_n_sigma" || key == "dry_range") && v < 0)
                v = 0;
            if (key == "mirostat" && v == 1) { // KoboldCpp's and llama.cpp's version 1
                adjusted.push_back("mirostat 1 not used (Baton has Mirostat 2 only)");
                break;
            }
            if (const std::string why = setting.check(v); !why.empty())
                throw RequestError(400, std::string("\"") + name + "\": " + why);
            setting.set(s, v);
            break;
        }
    }
    // DRY's breakers: a list of strings (KoboldCpp), or that list as JSON text
    // (SillyTavern), or one string.
    if (const auto it = body.find("dry_sequence_breakers"); it != body.end() && !it->is_null()) {
        Json list = *it;
        if (it->is_string()) {
            const auto parsed = json::parse(it->get<std::string>(), nullptr);
            list = parsed && parsed->is_array() ? *parsed : Json::array({*it});
        }
        if (!list.is_array() || list.size() > 64)
            throw RequestError(400, "\"dry_sequence_breakers\" must be up to 64 strings");
        s.drySequenceBreakers.clear();
        for (const Json& b : list) {
            if (!b.is_string() || b.get<std::string>().empty())
                throw RequestError(400, "\"dry_sequence_breakers\" must be non-empty strings");
            s.drySequenceBreakers.push_back(b.get<std::string>());
        }
    }
    // {"token id": bias}, as OpenAI and KoboldCpp take it.
    if (const auto it = body.find("logit_bias"); it != body.end() && !it->is_null()) {
        if (!it->is_object() || it->size() > 1024)
            throw RequestError(400, "\"logit_bias\" must be an object of up to 1024 token ids");
        for (const auto& [id, bias] : it->items()) {
            const bool number = !id.empty() && id.size() <= 9 &&
                                id.find_first_not_of("0123456789") == std::string::npos &&
                                (id == "0" || id[0] != '0'); // "7" and "007" are one token
            if (!number || !bias.is_number() || !(std::abs(bias.get<double>()) <= 100))
                throw RequestError(400, "\"logit_bias\" maps token ids to biases in [-100, 100]");
            s.logitBias.emplace_back(int32_t(std::stol(id)), float(bias.get<double>()));
        }
    }
    if (const auto it = body.find("smoothing_factor");
        it != body.end() && it->is_number() && it->get<double>() != 0)
        adjusted.push_back("smoothing_factor not used (Baton does not have it yet)");
    readSamplerOrder(body, s, adjusted);
    // Banned phrases: KoboldCpp's "banned_strings", and KoboldAI Lite's "banned_tokens"
    // (the strings its "Banned Tokens/Strings" box holds). KoboldCpp bans them wherever
    // they occur, inside words too, and so does Baton for its clients.
    for (const char* name : {"banned_strings", "banned_tokens"}) {
        const auto it = body.find(name);
        if (it == body.end() || it->is_null())
            continue;
        if (!it->is_array() || it->size() > 64)
            throw RequestError(400, std::string("\"") + name + "\" must be up to 64 strings");
        for (const Json& b : *it) {
            if (!b.is_string() || b.get<std::string>().empty() || b.get<std::string>().size() > 256)
                throw RequestError(400, std::string("\"") + name +
                                            "\" must hold strings of 1 to 256 bytes");
            s.bannedPhrases.push_back(b.get<std::string>());
            s.bannedInsideWords = true;
        }
    }
    if (s.bannedPhrases.size() > 64)
        throw RequestError(400, "at most 64 banned strings in all");
}

// A prompt as OpenAI and llama.cpp take it: a string, or token ids, alone or as a batch
// of one.
void readPromptField(const Json& body, const ServerOptions& options, CompletionRequest& request,
                     const char* name) {
    const auto p = body.find(name);
    if (p == body.end() || p->is_null())
        throw RequestError(400, std::string("\"") + name + "\" is required");
    const Json* prompt = &*p;
    if (prompt->is_array() && prompt->size() == 1 &&
        ((*prompt)[0].is_string() || (*prompt)[0].is_array()))
        prompt = &(*prompt)[0];
    if (prompt->is_string()) {
        request.prompt = prompt->get<std::string>();
    } else if (prompt->is_array() && !prompt->empty() &&
               prompt->size() <= size_t(options.maxContextTokens)) {
        std::vector<int32_t> ids;
        for (const auto& id : *prompt) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
                throw RequestError(400, std::string("\"") + name +
                                            "\" token ids must be integers from 0");
            ids.push_back(int32_t(id.get<int64_t>()));
        }
        request.promptIds = std::move(ids);
    } else {
        throw RequestError(400, std::string("\"") + name +
                                    "\" must be a string, an array of token ids, or a batch of "
                                    "one of them (larger batches are not supported)");
    }
}

// The sampling fields OpenAI's completions and chat completions share.
void readOpenAiSampling(const Fields& f, const Json& body, const ServerOptions& options,
                        CompletionRequest& request, int64_t defaultTokens) {
    auto& s = request.sampling;
    f.string("model"); // any name is accepted: one model is served
    int64_t tokens =
        clampedCount(f, "max_tokens", 0, options.generateLimit(), -1, false, request.adjusted);
    if (tokens < 0)
        tokens = clampedCount(f, "max_completion_tokens", 0, options.generateLimit(), defaultTokens,
                              false, request.adjusted);
    s.maxTokens = int(tokens);
    // OpenAI's range is [0, 2]; KoboldCpp takes any, and SillyTavern sends up to 5.
    s.temperature = f.number("temperature", 0, 10).value_or(1.0);
    s.topP = f.number("top_p", 0, 1).value_or(1.0);
    if (s.topP == 0)
        throw RequestError(400, "\"top_p\" must be in (0, 1]");
    s.stopStrings = f.strings("stop", 4);
    // vLLM's and llama.cpp's name, and text-generation-webui's (mikupad sends it).
    s.stopAtEndOfText =
        !f.boolean("ignore_eos").value_or(false) && !f.boolean("ban_eos_token").value_or(false);
    // A negative seed (SillyTavern sends -1) asks for a random one.
    s.seed = f.seed("seed").value_or(f.seed("sampler_seed").value_or(engine::drawSeed()));
    // KoboldCpp's own sampler fields, which its OpenAI clients send: off unless given.
    s.topK = int(std::min<int64_t>(f.whole("top_k", 0, int64_t(1) << 53).value_or(0), 1 << 24));
    readRepetitionPenalty(f, s, 1.0, 0);
    readSamplers(body, s, request.adjusted);
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
    s.maxTokens = int(
        clampedCount(f, "max_length", 1, options.generateLimit(), 100, true, g.request.adjusted));
    g.request.maxContextTokens = clampedCount(f, "max_context_length", 1, options.maxContextTokens,
                                              0, true, g.request.adjusted);
    s.temperature = f.number("temperature", 0, 10).value_or(0.7);
    s.topP = f.number("top_p", 0, 1).value_or(0.92);
    if (s.topP == 0)
        s.topP = 1; // KoboldAI clients send 0 for "off"
    s.topK = int(std::min<int64_t>(f.whole("top_k", 0, int64_t(1) << 53).value_or(100), 1 << 24));
    readRepetitionPenalty(f, s, 1.1, 320);
    s.seed = f.seed("sampler_seed").value_or(engine::drawSeed());
    s.stopStrings = f.strings("stop_sequence", 64);
    // KoboldCpp's end-of-text ban (KoboldAI Lite's "EOS Token Ban"), either of its names.
    s.stopAtEndOfText = !f.boolean("use_default_badwordsids").value_or(false) &&
                        !f.boolean("bypass_eos").value_or(false);
    g.trimStop = f.boolean("trim_stop").value_or(true);
    g.genkey = f.string("genkey").value_or("");
    if (const auto lp = body.find("logprobs"); lp != body.end() && !lp->is_null()) {
        if (lp->is_boolean())
            s.logprobs = lp->get<bool>() ? 5 : -1;
        else if (lp->is_number() && lp->get<double>() >= 0)
            s.logprobs = lp->get<double>() >= 1 ? int(std::min(lp->get<double>(), 20.0)) : -1;
        else
            throw RequestError(400, "\"logprobs\" must be true, false or a number of "
                                    "alternatives (0-20)");
        g.logprobs = s.logprobs > 0;
    }
    readSamplers(body, s, g.request.adjusted);
    return g;
}

namespace {

// OpenAI's "stream_options": {"include_usage": true} (an object, or null).
bool readIncludeUsage(const Json& body) {
    const auto it = body.find("stream_options");
    if (it == body.end() || it->is_null())
        return false;
    if (!it->is_object())
        throw RequestError(400, "\"stream_options\" must be an object");
    return Fields(*it).boolean("include_usage").value_or(false);
}

} // namespace

OpenAiCompletion parseOpenAiCompletion(std::string_view text, const ServerOptions& options) {
    const Json body = parseJsonObject(text);
    const Fields f(body);
    OpenAiCompletion c;
    readPromptField(body, options, c.request, "prompt");
    readOpenAiSampling(f, body, options, c.request, 16);
    c.stream = f.boolean("stream").value_or(false);
    c.includeUsage = readIncludeUsage(body);
    c.echo = f.boolean("echo").value_or(false);
    c.n = int(f.integer("n", 1, 8).value_or(1));
    // OpenAI allows 5; SillyTavern and mikupad ask for 10 (the engine gives up to 20).
    c.logprobs = int(f.integer("logprobs", 0, 20).value_or(-1));
    c.request.sampling.logprobs = c.logprobs;
    return c;
}

LlamaCompletion parseLlamaCompletion(std::string_view text, const ServerOptions& options) {
    const Json body = parseJsonObject(text);
    const Fields f(body);
    LlamaCompletion l;
    readPromptField(body, options, l.request, "prompt");
    auto& s = l.request.sampling;
    // -1 (llama.cpp's default) is "until the end of text or the server's limit".
    const int64_t predict = f.integer("n_predict", -1, int64_t(1) << 53).value_or(-1);
    s.maxTokens = predict < 0 ? options.generateLimit()
                              : int(clampedCount(f, "n_predict", 0, options.generateLimit(), 0,
                                                 false, l.request.adjusted));
    s.temperature = f.number("temperature", 0, 10).value_or(0.8);
    s.topK = int(std::min<int64_t>(f.whole("top_k", 0, int64_t(1) << 53).value_or(40), 1 << 24));
    s.topP = f.number("top_p", 0, 1).value_or(0.95);
    if (s.topP == 0)
        s.topP = 1;
    readRepetitionPenalty(f, s, 1.0, 64);
    s.seed = f.seed("seed").value_or(engine::drawSeed());
    s.stopStrings = f.strings("stop", 16);
    s.stopAtEndOfText = !f.boolean("ignore_eos").value_or(false);
    f.boolean("cache_prompt"); // prompts are always cached
    l.stream = f.boolean("stream").value_or(false);
    l.probs = int(clampedCount(f, "n_probs", 0, 20, 0, false, l.request.adjusted));
    l.postSamplingProbs = f.boolean("post_sampling_probs").value_or(false);
    s.logprobsAfterSampling = l.postSamplingProbs; // as llama.cpp reports them
    s.logprobs = l.probs > 0 ? l.probs : -1;
    readSamplers(body, s, l.request.adjusted);
    return l;
}

OpenAiChat parseOpenAiChat(std::string_view text, const ServerOptions& options) {
    const Json body = parseJsonObject(text);
    const Fields f(body);
    OpenAiChat c;
    const auto messages = body.find("messages");
    if (messages == body.end() || !messages->is_array() || messages->empty() ||
        messages->size() > 4096)
        throw RequestError(400, "\"messages\" must be an array of 1 to 4096 messages");
    for (const Json& m : *messages) {
        if (!m.is_object())
            throw RequestError(400, "each of \"messages\" must be an object");
        const Fields mf(m);
        ChatMessage message;
        message.role = mf.string("role").value_or("");
        if (message.role.empty() || message.role.size() > 64)
            throw RequestError(400, "each message needs a \"role\"");
        message.name = mf.string("name").value_or("");
        if (message.name.size() > 64)
            throw RequestError(400, "a message's \"name\" is at most 64 bytes");
        // A string, or parts of which the text ones are read.
        if (const auto content = m.find("content"); content != m.end() && content->is_string()) {
            message.content = content->get<std::string>();
        } else if (content != m.end() && content->is_array()) {
            for (const Json& part : *content)
                if (json::stringOrEmpty(part, "type") == "text" && part.contains("text") &&
                    part["text"].is_string())
                    message.content += part["text"].get<std::string>();
                else
                    throw RequestError(400, "a message's content parts must be text (Baton's "
                                            "models read text only)");
        } else if (content != m.end() && !content->is_null()) {
            throw RequestError(400, "a message's \"content\" must be a string or text parts");
        }
        c.messages.push_back(std::move(message));
    }
    readOpenAiSampling(f, body, options, c.request, std::min(512, options.generateLimit()));
    c.stream = f.boolean("stream").value_or(false);
    c.includeUsage = readIncludeUsage(body);
    c.n = int(f.integer("n", 1, 8).value_or(1));
    if (f.boolean("logprobs").value_or(false))
        c.logprobs = int(f.integer("top_logprobs", 0, 20).value_or(0));
    c.request.sampling.logprobs = c.logprobs;
    return c;
}

std::string parseGenkey(std::string_view body) {
    if (body.empty())
        return {};
    return Fields(parseJsonObject(body)).string("genkey").value_or("");
}

TokenizeRequest parseTokenCount(std::string_view body) {
    const Json object = parseJsonObject(body);
    const Fields f(object);
    auto prompt = f.string("prompt");
    if (!prompt)
        throw RequestError(400, "\"prompt\" is required");
    return {*prompt, f.boolean("special").value_or(true), false};
}

TokenizeRequest parseLlamaTokenize(std::string_view body) {
    const Json object = parseJsonObject(body);
    const Fields f(object);
    auto content = f.string("content");
    if (!content)
        throw RequestError(400, "\"content\" is required");
    return {*content, f.boolean("add_special").value_or(false),
            f.boolean("with_pieces").value_or(false)};
}

std::string parseTokenText(std::string_view body) {
    const Json object = parseJsonObject(body);
    const Fields f(object);
    if (auto text = f.string("text"))
        return *text;
    if (auto prompt = f.string("prompt"))
        return *prompt;
    throw RequestError(400, "\"text\" is required");
}

std::vector<int32_t> parseTokenIds(std::string_view body, const char* field) {
    const Json object = parseJsonObject(body);
    const auto ids = object.find(field);
    if (ids == object.end() || !ids->is_array() || ids->size() > (1u << 20))
        throw RequestError(400, std::string("\"") + field + "\" must be an array of token ids");
    std::vector<int32_t> out;
    out.reserve(ids->size());
    for (const Json& id : *ids) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
            throw RequestError(400, std::string("\"") + field +
                                        "\" must hold token ids (integers from 0)");
        out.push_back(int32_t(id.get<int64_t>()));
    }
    return out;
}

} // namespace baton::server
