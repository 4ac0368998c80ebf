// What the server suites share: a server on a free port over a model queue, a client
// for it, JSON posts, SSE answers read back, and waiting for a condition.
#pragma once

#include "test_support.h"
#include "tiny_model.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/model_info.h>
#include <baton/engine/model_queue.h>
#include <baton/engine/tokenizer.h>
#include <baton/server/server.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <QString>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace baton::test {

inline bool waitFor(const std::function<bool()>& done, int seconds = 60) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > end)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

// The engine's own greedy continuation of a prompt as the server reads it (the model's
// start-of-text token, then the prompt): its events, none when it failed.
inline std::vector<engine::GenerationEvent>
greedyEvents(const std::shared_ptr<engine::Model>& model, const std::string& prompt, int tokens) {
    auto gen = engine::Generator::create(model);
    std::vector<engine::GenerationEvent> events;
    if (!gen.ok())
        return events;
    std::vector<int32_t> ids{engine::startOfTextToken(model->config())};
    const auto text = model->tokenizer()->encode(prompt);
    ids.insert(ids.end(), text.begin(), text.end());
    if (!(*gen)->append(ids).ok())
        return events;
    engine::SamplingOptions s;
    s.temperature = 0;
    s.maxTokens = tokens;
    auto done = (*gen)->generate(s, [&](const engine::GenerationEvent& e) {
        events.push_back(e);
        return true;
    });
    if (!done.ok())
        events.clear();
    return events;
}

// A server on a free port of 127.0.0.1; null (with a warning) when it cannot start.
inline std::unique_ptr<server::Server> startServer(engine::ModelQueue& queue,
                                                   server::ServerOptions o = {}) {
    o.port = 0;
    auto s = std::make_unique<server::Server>(queue, o);
    auto r = s->start();
    if (!r.ok())
        qWarning("%s", r.error().message.c_str());
    return r.ok() ? std::move(s) : nullptr;
}

inline httplib::Client httpClient(const server::Server& s) {
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(120, 0);
    return c;
}

// POSTs a JSON body; the status and the parsed answer (null when not JSON).
inline std::pair<int, nlohmann::ordered_json> postJson(httplib::Client& c, const std::string& path,
                                                       const std::string& body,
                                                       const httplib::Headers& headers = {}) {
    auto r = c.Post(path, headers, body, "application/json");
    if (!r)
        return {0, nullptr};
    return {r->status, nlohmann::ordered_json::parse(r->body, nullptr, false)};
}

// The JSON objects of an SSE answer's "data:" lines ([DONE] left out).
inline std::vector<nlohmann::ordered_json> sseData(const std::string& body) {
    std::vector<nlohmann::ordered_json> out;
    for (size_t at = 0; (at = body.find("data: ", at)) != std::string::npos;) {
        const size_t end = body.find("\n\n", at);
        const std::string data = body.substr(at + 6, end - at - 6);
        if (data != "[DONE]")
            out.push_back(nlohmann::ordered_json::parse(data, nullptr, false));
        at = end == std::string::npos ? body.size() : end;
    }
    return out;
}

} // namespace baton::test
