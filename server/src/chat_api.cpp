// OpenAI's /v1/chat/completions for the clients that speak only chat. A base model has
// no chat format: the messages become a script (chat_template.h) that the model
// continues as the assistant, stopped where it starts another speaker's line.
#include "chat_template.h"
#include "http_json.h"
#include "logprobs.h"
#include "openai_answer.h"
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

    auto a = std::make_shared<OpenAiAnswer>("chatcmpl-", core.modelName(), c->n);
    a->streamUsage = c->stream && c->includeUsage;
    // The space after each choice's speaker label, dropped.
    auto starts = std::make_shared<std::vector<ReplyStart>>(size_t(c->n));
    CompletionCall call;
    call.requests = choiceRequests(c->request, c->n);
    call.streaming = c->stream;
    if (c->stream) {
        call.contentType = "text/event-stream";
        auto chunk = [a](size_t i, const json& delta, const json& logprobs, const json& finish) {
            return a->chunk("chat.completion.chunk", {{"index", i},
                                                      {"delta", delta},
                                                      {"logprobs", logprobs},
                                                      {"finish_reason", finish}});
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
        call.onEvent = [c, starts, tok, chunk](size_t i, const engine::GenerationEvent& e) {
            json lp = nullptr;
            if (c->logprobs >= 0 && e.token >= 0) {
                TokenLogprobs one;
                one.add(*tok, e);
                lp = {{"content", one.content()}};
            }
            const std::string text = (*starts)[i].take(e.text);
            if (text.empty() && lp.is_null())
                return std::string();
            return chunk(i, {{"content", text}}, lp, nullptr);
        };
        call.onDone = [a, chunk](size_t i, const engine::Result<CompletionResult>& r) {
            if (!r) {
                a->error = r.error().message;
                return "data: " + dumpJson(errorJson(500, r.error().message)) + "\n\n";
            }
            a->count(*r);
            return chunk(i, json::object(), nullptr, finishReason(r->generation));
        };
        call.finish = [a] { return a->finishStream("chat.completion.chunk"); };
    } else {
        call.onEvent = [c, a, tok](size_t i, const engine::GenerationEvent& e) {
            if (c->logprobs >= 0 && e.token >= 0)
                a->logprobs[i].add(*tok, e);
            return std::string();
        };
        call.onDone = [c, a, starts](size_t i, const engine::Result<CompletionResult>& r) {
            if (!r) {
                a->error = r.error().message;
                return std::string();
            }
            a->choices.push_back(
                {{"index", i},
                 {"message",
                  {{"role", "assistant"}, {"content", (*starts)[i].take(r->generation.text)}}},
                 {"logprobs",
                  c->logprobs >= 0 ? json{{"content", a->logprobs[i].content()}} : json(nullptr)},
                 {"finish_reason", finishReason(r->generation)}});
            a->count(*r);
            return std::string();
        };
        call.finish = [a] { return a->finish("chat.completion"); };
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
