// The KoboldAI API as KoboldCpp serves it (the field names its clients send:
// SillyTavern, KoboldAI Lite, mikupad, and others).
#include "http_json.h"
#include "logprobs.h"
#include "requests.h"
#include "server_core.h"

namespace baton::server {

using json = nlohmann::ordered_json;

namespace {

// The KoboldCpp version Baton answers as: clients turn features on by it. 1.49 turns
// on streaming (SSE), abort, check, last_logprobs, the memory field and the samplers
// Baton reads or reports as not used (KoboldAI Lite); it stays below 1.70 and 1.74
// (Lite would send DRY and XTC settings, which Baton does not have) and below 1.88
// (Lite would send instruct tags as placeholders for the server to fill in).
constexpr const char* kKoboldCppVersion = "1.49";

// The text a generation returns: with trim_stop false, the stop string it met too.
std::string answerText(const CompletionResult& r, bool trimStop) {
    std::string text = r.generation.text;
    if (!trimStop && r.generation.reason == engine::StopReason::StopString)
        text += r.generation.stopString;
    return text;
}

// KoboldCpp's SSE framing, which KoboldAI Lite matches exactly: "event: message", the
// JSON on one data line, a blank line.
std::string sseEvent(const json& data) {
    return "event: message\ndata: " + dumpJson(data) + "\n\n";
}

void generate(ServerCore& core, const httplib::Request& http, httplib::Response& res, bool stream) {
    auto g = std::make_shared<KoboldGenerate>(parseKoboldGenerate(http.body, core.options()));
    auto model = core.model();
    const auto tok = model->tokenizer();
    CompletionCall call;
    call.requests = {g->request};
    call.genkey = g->genkey;
    call.streaming = stream;
    // Kept for /api/extra/last_logprobs, streamed or not (filled as the tokens come).
    auto logprobs = std::make_shared<TokenLogprobs>();
    if (g->logprobs)
        call.logprobs = logprobs;
    auto result = std::make_shared<json>();
    auto keep = [g, logprobs, &core] {
        if (g->logprobs)
            core.keepLogprobs(g->genkey, logprobs->kobold());
    };
    if (stream) {
        call.contentType = "text/event-stream";
        // With logprobs, each event carries its token's alternatives (mikupad shows them).
        call.onEvent = [g, tok](size_t, const engine::GenerationEvent& e) {
            if (e.text.empty()) // part of a character: sent with the token that ends it
                return std::string();
            json event = {{"token", e.text}, {"finish_reason", nullptr}};
            if (g->logprobs && e.token >= 0) {
                json top = json::array();
                for (const auto& [id, lp] : e.topLogprobs)
                    top.push_back({{"token", tok->decode({id})}, {"logprob", lp}});
                event["logprob"] = e.logprob;
                event["top_logprobs"] = top;
            }
            return sseEvent(event);
        };
        call.onDone = [g, keep](size_t, const engine::Result<CompletionResult>& r) {
            if (!r)
                return sseEvent(
                    {{"token", ""}, {"finish_reason", "error"}, {"error", r.error().message}});
            keep();
            std::string tail =
                !g->trimStop && r->generation.reason == engine::StopReason::StopString
                    ? r->generation.stopString
                    : std::string();
            return sseEvent({{"token", tail}, {"finish_reason", finishReason(r->generation)}});
        };
        call.finish = [] { return std::string(); };
    } else {
        call.onEvent = [](size_t, const engine::GenerationEvent&) { return std::string(); };
        call.onDone = [g, logprobs, result, keep](size_t,
                                                  const engine::Result<CompletionResult>& r) {
            if (!r) {
                *result = errorJson(500, r.error().message);
                return std::string();
            }
            keep();
            json item = {{"text", answerText(*r, g->trimStop)},
                         {"finish_reason", finishReason(r->generation)}};
            if (g->logprobs)
                item["logprobs"] = logprobs->kobold();
            item["prompt_tokens"] = r->promptTokens;
            item["completion_tokens"] = int64_t(r->generation.tokens.size());
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
    // What KoboldCpp's clients read to turn features on: only what Baton has.
    http.Get("/api/extra/version", [&core](const httplib::Request&, httplib::Response& res) {
        sendJson(res, {{"result", "KoboldCpp"},
                       {"version", kKoboldCppVersion},
                       {"protected", !core.options().apiKey.empty()},
                       {"llm", true},
                       {"txt2img", false},
                       {"vision", false},
                       {"audio", false},
                       {"transcribe", false},
                       {"multiplayer", false},
                       {"websearch", false},
                       {"tts", false},
                       {"embeddings", false},
                       {"savedata", false},
                       {"admin", 0},
                       {"guidance", false},
                       {"jinja", false},
                       {"server", "Baton"}});
    });
    http.Get("/api/extra/perf", [&core](const httplib::Request&, httplib::Response& res) {
        sendJson(res, core.perf());
    });
    // No story to preload: an empty object, as KoboldCpp answers.
    http.Get("/api/extra/preloadstory", [](const httplib::Request&, httplib::Response& res) {
        sendJson(res, json::object());
    });
    for (const char* path :
         {"/api/v1/config/max_context_length", "/api/extra/true_max_context_length"})
        http.Get(path, [&core](const httplib::Request&, httplib::Response& res) {
            sendJson(res, value(core.options().maxContextTokens));
        });
    http.Get("/api/v1/config/max_length", [&core](const httplib::Request&, httplib::Response& res) {
        sendJson(res, value(core.options().generateLimit()));
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
    http.Post("/api/extra/last_logprobs",
              [&core](const httplib::Request& req, httplib::Response& res) {
                  sendJson(res, {{"logprobs", core.lastLogprobs(parseGenkey(req.body))}});
              });
    // "special" (default true): the start-of-text token first, as the model reads it.
    auto count = [&core](const httplib::Request& req, httplib::Response& res) {
        const TokenizeRequest t = parseTokenCount(req.body);
        const auto ids = core.tokenize(t.text, t.addSpecial);
        sendJson(res, {{"value", ids.size()}, {"ids", ids}});
    };
    http.Post("/api/extra/tokencount", count);
    http.Post("/api/extra/tokenize", count);
    http.Post("/api/extra/detokenize",
              [&core](const httplib::Request& req, httplib::Response& res) {
                  sendJson(res, {{"result", core.detokenize(parseTokenIds(req.body, "ids"))},
                                 {"success", true}});
              });
}

} // namespace baton::server
