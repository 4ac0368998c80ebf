// OpenAI-compatible completions (the legacy /v1/completions that text front ends and
// the official client libraries speak) and /v1/models.
#include "http_json.h"
#include "server_core.h"

#include <chrono>
#include <random>

namespace baton::server {

using json = nlohmann::ordered_json;

namespace {

struct OpenAiCompletion {
    CompletionRequest request;
    int n = 1;
    bool stream = false;
    bool echo = false;
    int logprobs = -1;
};

OpenAiCompletion parseCompletion(const httplib::Request& http, const ServerOptions& options) {
    const json body = parseJsonObject(http);
    const Fields f(body);
    OpenAiCompletion c;
    // A prompt is a string, or an array of one string.
    const auto p = body.find("prompt");
    if (p == body.end() || p->is_null())
        throw RequestError(400, "'prompt' is required");
    if (p->is_string())
        c.request.prompt = p->get<std::string>();
    else if (p->is_array() && p->size() == 1 && (*p)[0].is_string())
        c.request.prompt = (*p)[0].get<std::string>();
    else
        throw RequestError(400, "'prompt' must be a string or an array of one string (token "
                                "arrays and batches are not supported)");
    f.string("model"); // any name is accepted: one model is served
    auto& s = c.request.sampling;
    s.maxTokens = int(f.integer("max_tokens", 0, options.maxGenerateTokens).value_or(16));
    s.temperature = f.number("temperature", 0, 2).value_or(1.0);
    s.topP = f.number("top_p", 0, 1).value_or(1.0);
    if (s.topP == 0)
        throw RequestError(400, "'top_p' must be in (0, 1]");
    s.topK = 0;
    s.stopStrings = f.strings("stop", 4);
    const auto seed = f.integer("seed", INT64_MIN, INT64_MAX);
    s.seed = seed ? uint64_t(*seed) : randomSeed();
    c.stream = f.boolean("stream").value_or(false);
    c.echo = f.boolean("echo").value_or(false);
    c.n = int(f.integer("n", 1, 8).value_or(1));
    c.logprobs = int(f.integer("logprobs", 0, 5).value_or(-1));
    if (c.echo && c.logprobs >= 0)
        throw RequestError(400, "'echo' with 'logprobs' is not supported (the prompt's "
                                "log-probabilities are not computed)");
    s.logprobs = c.logprobs;
    return c;
}

std::string randomId() {
    static const char* hex = "0123456789abcdef";
    std::random_device rd;
    std::string id = "cmpl-";
    for (int i = 0; i < 24; ++i)
        id += hex[rd() % 16];
    return id;
}

// The legacy logprobs object over a run of tokens.
struct Logprobs {
    json tokens = json::array(), tokenLogprobs = json::array(), top = json::array(),
         offsets = json::array();
    int64_t offset = 0;

    void add(const engine::Model& model, const engine::GenerationEvent& e) {
        const auto tok = model.tokenizer();
        const std::string text = tok->decode({e.token});
        json alternatives = json::object();
        for (const auto& [id, lp] : e.topLogprobs)
            alternatives[tok->decode({id})] = lp;
        tokens.push_back(text);
        tokenLogprobs.push_back(e.logprob);
        top.push_back(alternatives);
        offsets.push_back(offset);
        offset += int64_t(text.size());
    }
    json value() const {
        return {{"tokens", tokens},
                {"token_logprobs", tokenLogprobs},
                {"top_logprobs", top},
                {"text_offset", offsets}};
    }
};

void completions(ServerCore& core, const httplib::Request& http, httplib::Response& res) {
    auto c = std::make_shared<OpenAiCompletion>(parseCompletion(http, core.options()));
    auto model = core.model();
    struct Answer {
        std::string id = randomId();
        int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
        std::string model;
        json choices = json::array();
        int64_t promptTokens = 0, completionTokens = 0, cachedTokens = 0;
        std::vector<Logprobs> logprobs;
        std::string error;
    };
    auto a = std::make_shared<Answer>();
    a->model = core.modelName();
    a->logprobs.resize(size_t(c->n));
    a->logprobs[0].offset = c->echo ? int64_t(c->request.prompt.size()) : 0;
    for (auto& l : a->logprobs)
        l.offset = a->logprobs[0].offset;
    CompletionCall call;
    for (int i = 0; i < c->n; ++i) {
        call.requests.push_back(c->request);
        call.requests.back().sampling.seed += uint64_t(i);
    }
    call.streaming = c->stream;
    auto chunk = [a](const json& choice) {
        return "data: " +
               dumpJson({{"id", a->id},
                         {"object", "text_completion"},
                         {"created", a->created},
                         {"model", a->model},
                         {"choices", json::array({choice})}}) +
               "\n\n";
    };
    if (c->stream) {
        call.contentType = "text/event-stream";
        auto echoed = std::make_shared<std::vector<bool>>(size_t(c->n), false);
        call.onEvent = [c, a, model, chunk, echoed](size_t i, const engine::GenerationEvent& e) {
            std::string text = e.text;
            if (c->echo && !(*echoed)[i]) {
                text = c->request.prompt + text;
                (*echoed)[i] = true;
            }
            json lp = nullptr;
            if (c->logprobs >= 0 && e.token >= 0) {
                Logprobs one;
                one.offset = a->logprobs[i].offset;
                one.add(*model, e);
                a->logprobs[i].offset = one.offset;
                lp = one.value();
            }
            if (text.empty() && lp.is_null())
                return std::string();
            return chunk(
                {{"text", text}, {"index", i}, {"logprobs", lp}, {"finish_reason", nullptr}});
        };
        call.onDone = [c, chunk, echoed](size_t i, const engine::Result<CompletionResult>& r) {
            if (!r)
                return "data: " + dumpJson(errorJson(500, r.error().message)) + "\n\n";
            const std::string text = c->echo && !(*echoed)[i] ? c->request.prompt : std::string();
            return chunk({{"text", text},
                          {"index", i},
                          {"logprobs", nullptr},
                          {"finish_reason", finishReason(r->generation)}});
        };
        call.finish = [] { return std::string("data: [DONE]\n\n"); };
    } else {
        call.onEvent = [c, a, model](size_t i, const engine::GenerationEvent& e) {
            if (c->logprobs >= 0 && e.token >= 0)
                a->logprobs[i].add(*model, e);
            return std::string();
        };
        call.onDone = [c, a](size_t i, const engine::Result<CompletionResult>& r) {
            if (!r) {
                a->error = r.error().message;
                return std::string();
            }
            a->choices.push_back(
                {{"text", (c->echo ? c->request.prompt : std::string()) + r->generation.text},
                 {"index", i},
                 {"logprobs", c->logprobs >= 0 ? a->logprobs[i].value() : json(nullptr)},
                 {"finish_reason", finishReason(r->generation)}});
            a->promptTokens = r->promptTokens;
            a->cachedTokens += r->reusedTokens;
            a->completionTokens += int64_t(r->generation.tokens.size());
            return std::string();
        };
        call.finish = [a] {
            if (!a->error.empty())
                return dumpJson(errorJson(500, a->error));
            return dumpJson({{"id", a->id},
                             {"object", "text_completion"},
                             {"created", a->created},
                             {"model", a->model},
                             {"choices", a->choices},
                             {"usage",
                              {{"prompt_tokens", a->promptTokens},
                               {"completion_tokens", a->completionTokens},
                               {"total_tokens", a->promptTokens + a->completionTokens},
                               {"prompt_tokens_details", {{"cached_tokens", a->cachedTokens}}}}}});
        };
    }
    core.respond(res, std::move(call));
}

} // namespace

void addOpenAiRoutes(httplib::Server& http, ServerCore& core) {
    http.Get("/v1/models", [&core](const httplib::Request&, httplib::Response& res) {
        sendJson(res, {{"object", "list"},
                       {"data", json::array({{{"id", core.modelName()},
                                              {"object", "model"},
                                              {"created", 0},
                                              {"owned_by", "baton"}}})}});
    });
    http.Post("/v1/completions", [&core](const httplib::Request& req, httplib::Response& res) {
        completions(core, req, res);
    });
}

} // namespace baton::server
