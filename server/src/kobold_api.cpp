// The KoboldAI API as KoboldCpp serves it (the field names its clients send:
// SillyTavern, KoboldAI Lite, and others).
#include "http_json.h"
#include "requests.h"
#include "server_core.h"

namespace baton::server {

using json = nlohmann::ordered_json;

namespace {

json tokenLogprobs(const engine::Model& model, const engine::GenerationEvent& e) {
    const auto tokenizer = model.tokenizer();
    json top = json::array();
    for (const auto& [id, lp] : e.topLogprobs)
        top.push_back({{"token", tokenizer->decode({id})}, {"logprob", lp}});
    return {{"token", tokenizer->decode({e.token})}, {"logprob", e.logprob}, {"top_logprobs", top}};
}

// The text a generation returns: with trim_stop false, the stop string it met too.
std::string answerText(const CompletionResult& r, bool trimStop) {
    std::string text = r.generation.text;
    if (!trimStop && r.generation.reason == engine::StopReason::StopString)
        text += r.generation.stopString;
    return text;
}

std::string sseEvent(const json& data) {
    return "event: message\ndata: " + dumpJson(data) + "\n\n";
}

void generate(ServerCore& core, const httplib::Request& http, httplib::Response& res, bool stream) {
    auto g = std::make_shared<KoboldGenerate>(parseKoboldGenerate(http.body, core.options()));
    auto model = core.model();
    CompletionCall call;
    call.requests = {g->request};
    call.genkey = g->genkey;
    call.streaming = stream;
    auto logprobs = std::make_shared<json>(json::array());
    auto result = std::make_shared<json>();
    if (stream) {
        call.contentType = "text/event-stream";
        call.onEvent = [](size_t, const engine::GenerationEvent& e) {
            return e.text.empty() ? std::string()
                                  : sseEvent({{"token", e.text}, {"finish_reason", nullptr}});
        };
        call.onDone = [g](size_t, const engine::Result<CompletionResult>& r) {
            if (!r)
                return sseEvent(
                    {{"token", ""}, {"finish_reason", "error"}, {"error", r.error().message}});
            std::string tail =
                !g->trimStop && r->generation.reason == engine::StopReason::StopString
                    ? r->generation.stopString
                    : std::string();
            return sseEvent({{"token", tail}, {"finish_reason", finishReason(r->generation)}});
        };
        call.finish = [] { return std::string(); };
    } else {
        call.onEvent = [g, logprobs, model](size_t, const engine::GenerationEvent& e) {
            if (g->logprobs && e.token >= 0)
                logprobs->push_back(tokenLogprobs(*model, e));
            return std::string();
        };
        call.onDone = [g, logprobs, result](size_t, const engine::Result<CompletionResult>& r) {
            if (!r) {
                *result = errorJson(500, r.error().message);
                return std::string();
            }
            json item = {{"text", answerText(*r, g->trimStop)},
                         {"finish_reason", finishReason(r->generation)}};
            if (g->logprobs)
                item["logprobs"] = {{"content", *logprobs}};
            *result = {{"results", json::array({item})}};
            return std::string();
        };
        call.finish = [result] { return dumpJson(*result); };
    }
    core.respond(res, std::move(call));
}

json value(int64_t v) {
    return {{"value", v}};
}

} // namespace

void addKoboldRoutes(httplib::Server& http, ServerCore& core) {
    http.Get("/api/v1/model", [&core](const httplib::Request&, httplib::Response& res) {
        sendJson(res, {{"result", core.modelName()}});
    });
    http.Get("/api/v1/info/version", [](const httplib::Request&, httplib::Response& res) {
        sendJson(res, {{"result", "1.2.5"}});
    });
    // Clients turn on streaming and the memory field by this version.
    http.Get("/api/extra/version", [](const httplib::Request&, httplib::Response& res) {
        sendJson(res, {{"result", "KoboldCpp"}, {"version", "1.49"}});
    });
    for (const char* path :
         {"/api/v1/config/max_context_length", "/api/extra/true_max_context_length"})
        http.Get(path, [&core](const httplib::Request&, httplib::Response& res) {
            sendJson(res, value(core.options().maxContextTokens));
        });
    http.Get("/api/v1/config/max_length", [&core](const httplib::Request&, httplib::Response& res) {
        sendJson(res, value(core.options().maxGenerateTokens));
    });
    http.Post("/api/v1/generate", [&core](const httplib::Request& req, httplib::Response& res) {
        generate(core, req, res, false);
    });
    http.Post("/api/extra/generate/stream",
              [&core](const httplib::Request& req, httplib::Response& res) {
                  generate(core, req, res, true);
              });
    http.Post("/api/extra/abort", [&core](const httplib::Request& req, httplib::Response& res) {
        const bool stopped = core.abort(parseGenkey(req.body));
        sendJson(res, {{"success", stopped ? "true" : "false"}, {"done", "true"}});
    });
    auto check = [&core](const httplib::Request& req, httplib::Response& res) {
        const std::string text = core.partialText(parseGenkey(req.body));
        sendJson(res, {{"results", json::array({{{"text", text}}})}});
    };
    http.Post("/api/extra/generate/check", check);
    http.Get("/api/extra/generate/check", check);
    http.Post("/api/extra/tokencount", [&core](const httplib::Request& req,
                                               httplib::Response& res) {
        const auto ids = CompletionEngine::tokenize(*core.model(), parseTokenCountPrompt(req.body));
        sendJson(res, {{"value", ids.size()}, {"ids", ids}});
    });
}

} // namespace baton::server
