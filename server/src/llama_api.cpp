// llama.cpp's server API, as its clients use it (mikupad's default mode, editors and
// scripts): /completion streamed or not, with n_probs; /tokenize, /detokenize, /props,
// /health. Field names and answer shapes are llama.cpp's.
#include "http_json.h"
#include "logprobs.h"
#include "requests.h"
#include "server_core.h"

#include <baton/engine/tokenizer.h>

namespace baton::server {

using json = nlohmann::ordered_json;

namespace {

const char* stopType(const engine::GenerationResult& r) {
    switch (r.reason) {
    case engine::StopReason::EndOfText:
        return "eos";
    case engine::StopReason::StopString:
        return "word";
    case engine::StopReason::MaxTokens:
        return "limit";
    default:
        return "none";
    }
}

json timings(const CompletionResult& r) {
    const auto generated = int64_t(r.generation.tokens.size());
    const auto perSecond = [](int64_t n, double s) { return s > 0 ? double(n) / s : 0.0; };
    return {{"cache_n", r.reusedTokens},
            {"prompt_n", r.encodedTokens},
            {"prompt_ms", r.readSeconds * 1000},
            {"prompt_per_second", perSecond(r.encodedTokens, r.readSeconds)},
            {"predicted_n", generated},
            {"predicted_ms", r.generation.seconds * 1000},
            {"predicted_per_second", perSecond(generated, r.generation.seconds)}};
}

// The final object of a completion (llama.cpp's last stream event, or the whole answer).
json finalFields(const CompletionResult& r, const std::string& model) {
    return {{"stop", true},
            {"model", model},
            {"stop_type", stopType(r.generation)},
            {"stopping_word", r.generation.stopString},
            {"tokens_predicted", int64_t(r.generation.tokens.size())},
            {"tokens_evaluated", r.promptTokens},
            {"tokens_cached", r.reusedTokens},
            {"truncated", r.truncated},
            {"timings", timings(r)}};
}

void completion(ServerCore& core, const httplib::Request& http, httplib::Response& res) {
    auto l = std::make_shared<LlamaCompletion>(parseLlamaCompletion(http.body, core.options()));
    const auto model = core.model();
    const auto tok = model->tokenizer();
    const std::string name = core.modelName();
    CompletionCall call;
    call.requests = {l->request};
    call.streaming = l->stream;
    auto probabilities = std::make_shared<json>(json::array());
    auto generated = std::make_shared<int64_t>(0);
    auto result = std::make_shared<json>();
    if (l->stream) {
        call.contentType = "text/event-stream";
        call.onEvent = [l, tok, generated](size_t, const engine::GenerationEvent& e) {
            if (e.token < 0)
                return std::string();
            ++*generated;
            json event = {{"index", 0},    {"content", e.text}, {"tokens", json::array({e.token})},
                          {"stop", false}, {"id_slot", 0},      {"tokens_predicted", *generated}};
            if (l->probs > 0)
                event["completion_probabilities"] =
                    json::array({llamaTokenProbabilities(*tok, e, l->postSamplingProbs)});
            return "data: " + dumpJson(event) + "\n\n";
        };
        call.onDone = [name](size_t, const engine::Result<CompletionResult>& r) {
            if (!r)
                return "data: " + dumpJson(errorJson(500, r.error().message)) + "\n\n";
            json event = {{"index", 0}, {"content", ""}, {"tokens", json::array()}};
            const json fields = finalFields(*r, name);
            for (const auto& [key, value] : fields.items())
                event[key] = value;
            return "data: " + dumpJson(event) + "\n\n";
        };
        call.finish = [] { return std::string(); };
    } else {
        call.onEvent = [l, tok, probabilities](size_t, const engine::GenerationEvent& e) {
            if (l->probs > 0 && e.token >= 0)
                probabilities->push_back(llamaTokenProbabilities(*tok, e, l->postSamplingProbs));
            return std::string();
        };
        call.onDone = [l, name, probabilities, result](size_t,
                                                       const engine::Result<CompletionResult>& r) {
            if (!r) {
                *result = errorJson(500, r.error().message);
                return std::string();
            }
            *result = {{"index", 0},
                       {"content", r->generation.text},
                       {"tokens", r->generation.tokens},
                       {"id_slot", 0}};
            const json fields = finalFields(*r, name);
            for (const auto& [key, value] : fields.items())
                (*result)[key] = value;
            if (l->probs > 0)
                (*result)["completion_probabilities"] = *probabilities;
            return std::string();
        };
        call.finish = [result] { return dumpJson(*result); };
    }
    core.respond(res, std::move(call));
}

} // namespace

void addLlamaRoutes(httplib::Server& http, ServerCore& core) {
    for (const char* path : {"/completion", "/completions"})
        http.Post(path, [&core](const httplib::Request& req, httplib::Response& res) {
            completion(core, req, res);
        });
    http.Post("/tokenize", [&core](const httplib::Request& req, httplib::Response& res) {
        const TokenizeRequest t = parseLlamaTokenize(req.body);
        const auto ids = core.tokenize(t.text, t.addSpecial);
        json tokens = json::array();
        for (int32_t id : ids)
            tokens.push_back(t.withPieces ? json{{"id", id}, {"piece", core.detokenize({id})}}
                                          : json(id));
        sendJson(res, {{"tokens", tokens}});
    });
    http.Post("/detokenize", [&core](const httplib::Request& req, httplib::Response& res) {
        sendJson(res, {{"content", core.detokenize(parseTokenIds(req.body, "tokens"))}});
    });
    http.Get("/health", [&core](const httplib::Request&, httplib::Response& res) {
        core.model(); // 503 while there is none
        sendJson(res, {{"status", "ok"}});
    });
    http.Get("/props", [&core](const httplib::Request&, httplib::Response& res) {
        const auto model = core.model();
        const auto& config = model->info().config;
        const int start = engine::emptyStartToken(config);
        const std::string startOfText = start >= 0 ? core.detokenize({start}) : std::string();
        const std::string endOfText =
            config.eosTokenId >= 0 ? core.detokenize({config.eosTokenId}) : startOfText;
        sendJson(res, {{"default_generation_settings",
                        {{"n_ctx", core.options().maxContextTokens},
                         {"params",
                          {{"n_predict", -1},
                           {"temperature", 0.8},
                           {"top_k", 40},
                           {"top_p", 0.95},
                           {"repeat_penalty", 1.0},
                           {"repeat_last_n", 64}}}}},
                       {"total_slots", 1},
                       {"model_alias", core.modelName()},
                       {"model_path", model->info().path},
                       {"modalities", {{"vision", false}, {"audio", false}}},
                       {"chat_template", "Baton's plain script: \"User: ...\\nAssistant:\" (a "
                                         "chat_template.json beside the model changes the labels)"},
                       {"bos_token", startOfText},
                       {"eos_token", endOfText},
                       {"add_bos_token", config.addBosToken},
                       {"build_info", "Baton"}});
    });
}

} // namespace baton::server
