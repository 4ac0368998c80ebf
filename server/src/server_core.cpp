#include "server_core.h"

#include "http_json.h"

#include <baton/engine/tokenizer.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

namespace baton::server {

const char* finishReason(const engine::GenerationResult& result) {
    return result.reason == engine::StopReason::MaxTokens ? "length" : "stop";
}

ServerCore::ServerCore(engine::ModelQueue& queue, const ServerOptions& options)
    : m_queue(queue)
    , m_options(options)
    , m_engine(
          options.windows, options.cacheBytes,
          options.statesDatabase.empty()
              ? nullptr
              : std::make_unique<SavedStates>(options.statesDatabase, options.savedStateBytes)) {}

std::shared_ptr<const engine::Model> ServerCore::model() const {
    auto model = m_queue.current();
    if (!model)
        throw RequestError(503, "no model is loaded");
    return model;
}

std::string ServerCore::modelName() const {
    if (!m_options.modelName.empty())
        return m_options.modelName;
    std::string path = model()->info().path;
    while (path.size() > 1 && path.back() == '/')
        path.pop_back();
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ServerCore::abort(const std::string& genkey) {
    std::lock_guard lock(m_mutex);
    bool any = false;
    for (const auto& r : m_running)
        if (genkey.empty() || r->genkey == genkey) {
            r->cancel.cancel();
            any = true;
        }
    return any;
}

std::string ServerCore::partialText(const std::string& genkey) const {
    std::lock_guard lock(m_mutex);
    for (const auto& r : m_running)
        if (genkey.empty() || r->genkey == genkey)
            return r->text;
    if (m_latest && (genkey.empty() || m_latest->genkey == genkey))
        return m_latest->text;
    return {};
}

void ServerCore::keepLogprobs(const std::string& genkey, nlohmann::ordered_json logprobs) {
    std::lock_guard lock(m_mutex);
    m_logprobs = {genkey, std::move(logprobs)};
}

nlohmann::ordered_json ServerCore::lastLogprobs(const std::string& genkey) const {
    std::lock_guard lock(m_mutex);
    // A generation still running: what it has generated so far.
    for (const auto& r : m_running)
        if (r->logprobs && (genkey.empty() || r->genkey == genkey))
            return r->logprobs->kobold();
    if (genkey.empty() || m_logprobs.first == genkey)
        return m_logprobs.second;
    return nullptr;
}

nlohmann::ordered_json ServerCore::perf() const {
    const CompletionStats totals = m_engine.stats();
    std::lock_guard lock(m_mutex);
    const auto speed = [](int64_t tokens, double seconds) {
        return seconds > 0 ? double(tokens) / seconds : 0.0;
    };
    return {{"last_process", m_last.readSeconds},
            {"last_eval", m_last.generateSeconds},
            {"last_token_count", m_last.generatedTokens},
            {"last_input_count", m_last.promptTokens},
            {"last_process_speed", speed(m_last.readTokens, m_last.readSeconds)},
            {"last_eval_speed", speed(m_last.generatedTokens, m_last.generateSeconds)},
            {"last_reused_count", m_last.reusedTokens},
            {"last_read_count", m_last.readTokens},
            {"last_continued_trimmed_prompt", m_last.continuedTrimmed},
            {"stop_reason", m_last.stopReason},
            {"total_gens", totals.completions},
            {"total_trimmed_prompts_continued", totals.trimmedMatches},
            {"queue", std::max(0, m_active.load() - 1)},
            {"idle", m_active.load() == 0 ? 1 : 0},
            {"uptime",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count()}};
}

std::vector<int32_t> ServerCore::tokenize(const std::string& text, bool startOfText) const {
    const auto m = model();
    if (!m->tokenizer())
        throw RequestError(503, "this model has no tokenizer");
    std::vector<int32_t> ids = CompletionEngine::tokenize(*m, text);
    const int start = engine::startOfTextToken(m->info().config);
    if (startOfText && start >= 0)
        ids.insert(ids.begin(), start);
    return ids;
}

std::string ServerCore::detokenize(const std::vector<int32_t>& ids) const {
    const auto m = model();
    if (!m->tokenizer())
        throw RequestError(503, "this model has no tokenizer");
    const int vocab = m->info().config.vocabSize;
    for (int32_t id : ids)
        if (id >= vocab)
            throw RequestError(400, "token id " + std::to_string(id) +
                                        " is outside the vocabulary (" + std::to_string(vocab) +
                                        " tokens)");
    return m->tokenizer()->decode(ids);
}

void ServerCore::respond(httplib::Response& response, CompletionCall call) {
    model(); // 503 at once when there is none
    // What the server changed in what was asked (a clamped limit, an unused field).
    if (!call.requests.empty() && !call.requests.front().adjusted.empty()) {
        std::string said;
        for (const std::string& a : call.requests.front().adjusted)
            said += (said.empty() ? "" : "; ") + a;
        response.set_header("X-Baton-Adjusted", said);
        // In the log at warning level the first time (seen without --verbose), then
        // quieter: a front end sends the same setting with every request.
        bool first = false;
        {
            std::lock_guard lock(m_mutex);
            first = m_adjustedSeen.size() < 256 && m_adjustedSeen.insert(said).second;
        }
        if (first)
            spdlog::warn("a request was adjusted (X-Baton-Adjusted): {}", said);
        else
            spdlog::info("adjusted: {}", said);
    }
    if (m_active.fetch_add(1) >= m_options.maxQueue) {
        m_active.fetch_sub(1);
        throw RequestError(503, "the server is busy: " + std::to_string(m_options.maxQueue) +
                                    " generations are running or waiting; try again later");
    }
    // The place in the queue is given back when the answer is gone, written or not.
    std::shared_ptr<void> slot(nullptr, [this](void*) { m_active.fetch_sub(1); });
    auto shared = std::make_shared<CompletionCall>(std::move(call));
    response.set_chunked_content_provider(shared->contentType,
                                          [this, shared, slot](size_t, httplib::DataSink& sink) {
                                              run(*shared, sink);
                                              sink.done();
                                              return true;
                                          });
}

void ServerCore::run(CompletionCall& call, httplib::DataSink& sink) {
    auto running = std::make_shared<Running>();
    running->genkey = call.genkey;
    running->logprobs = call.logprobs;
    {
        std::lock_guard lock(m_mutex);
        m_running.push_back(running);
    }
    const engine::CancelToken cancel = running->cancel;
    bool gone = false;
    auto send = [&](const std::string& bytes) {
        if (gone || bytes.empty())
            return;
        if (!sink.write(bytes.data(), bytes.size())) {
            gone = true;
            cancel.cancel();
        }
    };
    auto lastCheck = std::chrono::steady_clock::now();
    // A client that closed its connection stops its generation: checked on every
    // write and, between writes, about every 100 ms.
    auto stillThere = [&] {
        const auto now = std::chrono::steady_clock::now();
        if (!gone && now - lastCheck > std::chrono::milliseconds(100)) {
            lastCheck = now;
            if (!sink.is_writable()) {
                gone = true;
                cancel.cancel();
            }
        }
        return !gone;
    };

    const auto t0 = std::chrono::steady_clock::now();
    size_t done = 0;
    // One job of the model's queue (the app's story editor shares it), once the jobs
    // before it are done; given up while it waits when the client goes away.
    auto ran = m_queue.run(
        [&](engine::JobContext& context) -> engine::Result<void> {
            const auto& model = context.model();
            if (!model)
                return engine::makeError(engine::ErrorCode::Unsupported, "no model is loaded");
            bool ok = true;
            if (call.before)
                send(call.before(m_engine, model, cancel, ok));
            if (!ok)
                return {};
            for (size_t i = 0; i < call.requests.size() && !gone && !cancel.cancelled(); ++i) {
                auto r = m_engine.complete(
                    model, call.requests[i],
                    [&](const engine::GenerationEvent& e) {
                        {
                            std::lock_guard lock(m_mutex);
                            running->text += e.text;
                            if (call.logprobs && e.token >= 0)
                                call.logprobs->add(*model->tokenizer(), e);
                        }
                        send(call.onEvent(i, e));
                        return stillThere();
                    },
                    cancel);
                m_generations.fetch_add(1);
                if (r) {
                    spdlog::info("generated {} tokens in {:.2f} s; prompt {} tokens, {} reused, "
                                 "{} read{}",
                                 r->generation.tokens.size(), r->generation.seconds,
                                 r->promptTokens, r->reusedTokens, r->encodedTokens,
                                 r->continuedTrimmed
                                     ? " (continues the story read before, from its token " +
                                           std::to_string(r->continuedFrom) + ")"
                                     : std::string());
                    std::lock_guard lock(m_mutex);
                    m_last = {r->promptTokens,
                              r->reusedTokens,
                              r->encodedTokens,
                              int64_t(r->generation.tokens.size()),
                              r->readSeconds,
                              r->generation.seconds,
                              engine::stopReasonName(r->generation.reason),
                              r->continuedTrimmed};
                }
                send(call.onDone(i, r));
                done = i + 1;
            }
            return {};
        },
        cancel, [&] { return stillThere(); });
    if (!ran && !gone)
        send(call.onDone(done, ran.error()));
    send(call.finish());
    spdlog::debug("answer done in {:.2f} s{}",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                  gone ? " (the client went away)" : "");
    std::lock_guard lock(m_mutex);
    m_running.remove(running);
    m_latest = running;
}

} // namespace baton::server
