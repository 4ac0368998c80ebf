// OpenAI-compatible completions (the legacy /v1/completions that text front ends and
// the official client libraries speak) and /v1/models.
#include "http_json.h"
#include "logprobs.h"
#include "openai_answer.h"
#include "requests.h"
#include "server_core.h"

#include <baton/engine/tokenizer.h>

namespace baton::server {

using json = nlohmann::ordered_json;

namespace {

void completions(ServerCore& core, const httplib::Request& http, httplib::Response& res) {
    auto c = std::make_shared<OpenAiCompletion>(parseOpenAiCompletion(http.body, core.options()));
    auto model = core.model();
    if (c->request.promptIds) {
        // Token ids: checked against the vocabulary here (a 400), echoed as their text.
        const int vocab = model->info().config.vocabSize;
        for (int32_t id : *c->request.promptIds)
            if (id >= vocab)
                throw RequestError(400, "\"prompt\" token id " + std::to_string(id) +
                                            " is outside the vocabulary (" + std::to_string(vocab) +
                                            " tokens)");
        c->request.prompt = model->tokenizer()->decode(*c->request.promptIds);
    }
    auto a = std::make_shared<OpenAiAnswer>("cmpl-", core.modelName(), c->n);
    a->streamUsage = c->stream && c->includeUsage;
    CompletionCall call;
    call.requests = choiceRequests(c->request, c->n);
    call.streaming = c->stream;
    auto chunk = [a](const json& choice) { return a->chunk("text_completion", choice); };
    const auto tok = model->tokenizer();
    if (c->echo) {
        // The prompt comes first in every choice; with logprobs, so do its tokens'
        // (scored with the model, in the windows the generation reads it in).
        call.before = [c, a, tok, chunk](CompletionEngine& engine,
                                         const std::shared_ptr<const engine::Model>& m,
                                         const engine::CancelToken& cancel, bool& ok) {
            TokenLogprobs prompt;
            if (c->logprobs >= 0) {
                auto scored = engine.scorePrompt(m, c->request, c->logprobs, cancel);
                if (!scored) {
                    ok = false;
                    a->error = scored.error().message;
                    return c->stream ? "data: " + dumpJson(errorJson(500, a->error)) + "\n\n"
                                     : std::string();
                }
                for (const engine::TokenScore& s : *scored)
                    prompt.add(*tok, s.id, s.logprob, s.top);
            }
            prompt.setOffset(int64_t(c->request.prompt.size()));
            std::string bytes;
            for (int i = 0; i < c->n; ++i) {
                a->logprobs[size_t(i)] = prompt;
                if (c->stream)
                    bytes +=
                        chunk({{"text", c->request.prompt},
                               {"index", i},
                               {"logprobs", c->logprobs >= 0 ? prompt.legacy() : json(nullptr)},
                               {"finish_reason", nullptr}});
            }
            return bytes;
        };
    }
    if (c->stream) {
        call.contentType = "text/event-stream";
        call.onEvent = [c, a, tok, chunk](size_t i, const engine::GenerationEvent& e) {
            json lp = nullptr;
            if (c->logprobs >= 0 && e.token >= 0) {
                TokenLogprobs one;
                one.setOffset(a->logprobs[i].offset());
                one.add(*tok, e);
                a->logprobs[i].setOffset(one.offset());
                lp = one.legacy();
            }
            if (e.text.empty() && lp.is_null())
                return std::string();
            return chunk(
                {{"text", e.text}, {"index", i}, {"logprobs", lp}, {"finish_reason", nullptr}});
        };
        call.onDone = [a, chunk](size_t i, const engine::Result<CompletionResult>& r) {
            if (!r) {
                a->error = r.error().message;
                return "data: " + dumpJson(errorJson(500, r.error().message)) + "\n\n";
            }
            a->count(*r);
            return chunk({{"text", ""},
                          {"index", i},
                          {"logprobs", nullptr},
                          {"finish_reason", finishReason(r->generation)}});
        };
        call.finish = [a] { return a->finishStream("text_completion"); };
    } else {
        call.onEvent = [c, a, tok](size_t i, const engine::GenerationEvent& e) {
            if (c->logprobs >= 0 && e.token >= 0)
                a->logprobs[i].add(*tok, e);
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
                 {"logprobs", c->logprobs >= 0 ? a->logprobs[i].legacy() : json(nullptr)},
                 {"finish_reason", finishReason(r->generation)}});
            a->count(*r);
            return std::string();
        };
        call.finish = [a] { return a->finish("text_completion"); };
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
    // The token endpoints of OpenAI-compatible servers, which clients probe for counts
    // (mikupad tries each): text-generation-webui's, TabbyAPI's and Aphrodite's.
    auto encode = [&core](const httplib::Request& req, httplib::Response& res) {
        const auto ids = core.tokenize(parseTokenText(req.body), false);
        sendJson(res, {{"tokens", ids}, {"length", ids.size()}});
    };
    http.Post("/v1/internal/encode", encode);
    http.Post("/v1/token/encode", encode);
    http.Post(
        "/v1/internal/token-count", [&core](const httplib::Request& req, httplib::Response& res) {
            sendJson(res, {{"length", core.tokenize(parseTokenText(req.body), false).size()}});
        });
    auto decode = [&core](const httplib::Request& req, httplib::Response& res) {
        sendJson(res, {{"text", core.detokenize(parseTokenIds(req.body, "tokens"))}});
    };
    http.Post("/v1/internal/decode", decode);
    http.Post("/v1/token/decode", decode);
}

} // namespace baton::server
