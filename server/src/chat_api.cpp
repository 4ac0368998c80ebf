// OpenAI's /v1/chat/completions for the clients that speak only chat. A base model has
// no chat format: the messages become a script (chat_template.h) that the model
// continues as the assistant, stopped where it starts another speaker's line.
#include "chat_template.h"
#include "http_json.h"
#include "logprobs.h"
#include "requests.h"
#include "server_core.h"

#include <baton/engine/tokenizer.h>

namespace baton::server {

using json = nlohmann::ordered_json;

namespace {

// The reply without the space the model writes after the speaker's label: a streamed
// reply drops it from its first pieces.
struct ReplyStart {
    bool started = false;
    std::string take(std::string text) {
        if (!started) {
            const size_t first = text.find_first_not_of(" \t");
            text = first == std::string::npos ? std::string() : text.substr(first);
            started = !text.empty();
        }
        return text;
    }
};

void chatCompletions(ServerCore& core, const httplib::Request& http, httplib::Response& res) {
    auto c = std::make_shared<OpenAiChat>(parseOpenAiChat(http.body, core.options()));
    const auto model = core.model();
    const auto tok = model->tokenizer();
    const ChatPrompt chat = renderChat(loadChatTemplate(model->info().path), c->messages);
    c->request.prompt = chat.prompt;
    for (const std::string& stop : chat.stops)
        c->request.sampling.stopStrings.push_back(stop);

    struct Answer {
        std::string id = randomId("chatcmpl-");
        int64_t created = unixTime();
        std::string model;
        json choices = json::array();
        int64_t promptTokens = 0, completionTokens = 0, cachedTokens = 0;
        std::vector<TokenLogprobs> logprobs;
        std::vector<ReplyStart> starts;
        std::string error;
    };
    auto a = std::make_shared<Answer>();
    a->model = core.modelName();
    a->logprobs.resize(size_t(c->n));
    a->starts.resize(size_t(c->n));
    CompletionCall call;
    for (int i = 0; i < c->n; ++i) {
        call.requests.push_back(c->request);
        call.requests.back().sampling.seed += uint64_t(i);
    }
    call.streaming = c->stream;
    if (c->stream) {
        call.contentType = "text/event-stream";
        auto chunk = [a](size_t i, const json& delta, const json& logprobs, const json& finish) {
            return "data: " +
                   dumpJson({{"id", a->id},
                             {"object", "chat.completion.chunk"},
                             {"created", a->created},
                             {"model", a->model},
                             {"choices", json::array({{{"index", i},
                                                       {"delta", delta},
                                                       {"logprobs", logprobs},
                                                       {"finish_reason", finish}}})}}) +
                   "\n\n";
        };
        // The role first, as OpenAI sends it.
        call.before = [c, chunk](CompletionEngine&, const std::shared_ptr<const engine::Model>&,
                                 const engine::CancelToken&, bool&) {
            std::string bytes;
            for (int i = 0; i < c->n; ++i)
                bytes +=
                    chunk(size_t(i), {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr);
            return bytes;
        };
        call.onEvent = [c, a, tok, chunk](size_t i, const engine::GenerationEvent& e) {
            json lp = nullptr;
            if (c->logprobs >= 0 && e.token >= 0) {
                TokenLogprobs one;
                one.add(*tok, e);
                lp = {{"content", one.content()}};
            }
            const std::string text = a->starts[i].take(e.text);
            if (text.empty() && lp.is_null())
                return std::string();
            return chunk(i, {{"content", text}}, lp, nullptr);
        };
        call.onDone = [chunk](size_t i, const engine::Result<CompletionResult>& r) {
            if (!r)
                return "data: " + dumpJson(errorJson(500, r.error().message)) + "\n\n";
            return chunk(i, json::object(), nullptr, finishReason(r->generation));
        };
        call.finish = [] { return std::string("data: [DONE]\n\n"); };
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
                {{"index", i},
                 {"message",
                  {{"role", "assistant"}, {"content", a->starts[i].take(r->generation.text)}}},
                 {"logprobs",
                  c->logprobs >= 0 ? json{{"content", a->logprobs[i].content()}} : json(nullptr)},
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
                             {"object", "chat.completion"},
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

void addChatRoutes(httplib::Server& http, ServerCore& core) {
    http.Post("/v1/chat/completions", [&core](const httplib::Request& req, httplib::Response& res) {
        chatCompletions(core, req, res);
    });
}

} // namespace baton::server
