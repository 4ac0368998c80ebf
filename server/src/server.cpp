#include "baton/server/server.h"

#include "http_json.h"
#include "server_core.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <thread>

namespace baton::server {

using engine::ErrorCode;
using engine::makeError;

bool isLoopbackHost(const std::string& host) {
    return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

engine::Result<void> validateServerOptions(const ServerOptions& o) {
    auto bad = [](const std::string& what) {
        return makeError(ErrorCode::InvalidArgument, "invalid server setting: " + what);
    };
    if (o.host.empty())
        return bad("the host is empty");
    if (!isLoopbackHost(o.host) && o.apiKey.empty())
        return bad("refusing to listen on " + o.host +
                   " without an API key: anyone who can reach it could use it (set one, or "
                   "listen on 127.0.0.1)");
    if (o.port < 0 || o.port > 65535)
        return bad("the port must be in [0, 65535]");
    if (o.maxContextTokens < 1 || o.maxContextTokens > (int64_t(1) << 24))
        return bad("the context limit must be in [1, 16777216] tokens");
    if (o.maxGenerateTokens < 1 || o.maxGenerateTokens > 1000000)
        return bad("the generation limit must be in [1, 1000000] tokens");
    if (o.maxBodyBytes < 1024)
        return bad("the body limit must be at least 1024 bytes");
    if (o.maxQueue < 1 || o.maxQueue > 256)
        return bad("the queue must hold 1 to 256 generations");
    if (o.windows.window < 0 || o.windows.overlap < 0)
        return bad("window and overlap must be >= 0");
    return {};
}

namespace {

// Compares without an early exit, so the time taken does not tell how much of a
// guessed key was right.
bool sameKey(const std::string& given, const std::string& key) {
    unsigned char diff = given.size() == key.size() ? 0 : 1;
    for (size_t i = 0; i < given.size(); ++i)
        diff |= static_cast<unsigned char>(given[i] ^ key[key.empty() ? 0 : i % key.size()]);
    return diff == 0;
}

} // namespace

struct Server::Impl {
    Impl(engine::ModelQueue& queue, ServerOptions o)
        : options(std::move(o))
        , core(queue, options) {}

    ServerOptions options;
    ServerCore core;
    httplib::Server http;
    std::thread thread;
    int port = 0;
    std::atomic<int64_t> requests{0}, rejected{0};

    void routes();
};

void Server::Impl::routes() {
    http.set_payload_max_length(options.maxBodyBytes);
    http.set_read_timeout(30, 0);
    http.set_write_timeout(30, 0);
    // Room for every generation the queue admits, and for aborts, checks and model
    // queries beside them.
    const size_t threads = size_t(options.maxQueue) + 4;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };

    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        requests.fetch_add(1);
        if (options.onActivity)
            options.onActivity();
        // Browsers' front ends (KoboldAI Lite) call from another origin.
        res.set_header("Access-Control-Allow-Origin", "*");
        if (req.method == "OPTIONS") {
            res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
            res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
            res.status = 204;
            return httplib::Server::HandlerResponse::Handled;
        }
        if (!options.apiKey.empty()) {
            std::string given = req.get_header_value("Authorization");
            if (given.rfind("Bearer ", 0) == 0)
                given.erase(0, 7);
            else
                given = req.get_header_value("X-Api-Key");
            if (!sameKey(given, options.apiKey)) {
                sendError(res, 401, "a valid API key is required (Authorization: Bearer KEY)");
                return httplib::Server::HandlerResponse::Handled;
            }
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
            try {
                std::rethrow_exception(ep);
            } catch (const RequestError& e) {
                sendError(res, e.status(), e.what());
            } catch (const std::exception& e) {
                sendError(res, 500, std::string("internal error: ") + e.what());
            } catch (...) {
                sendError(res, 500, "internal error");
            }
        });
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
            return;
        const std::string message = res.status == 404   ? "no such endpoint: " + req.path
                                    : res.status == 405 ? "method not allowed"
                                    : res.status == 413 ? "the request body is too large"
                                                        : "bad request";
        sendError(res, res.status, message);
    });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
        if (res.status >= 400)
            rejected.fetch_add(1);
        spdlog::info("{} {} -> {}", req.method, req.path, res.status);
        if (options.onActivity)
            options.onActivity();
    });
    addKoboldRoutes(http, core);
    addOpenAiRoutes(http, core);
}

Server::Server(engine::ModelQueue& queue, ServerOptions options)
    : m_impl(std::make_unique<Impl>(queue, std::move(options))) {
    m_impl->routes();
}

Server::~Server() {
    stop();
}

engine::Result<void> Server::start() {
    if (auto r = validateServerOptions(m_impl->options); !r)
        return r;
    if (m_impl->thread.joinable())
        return makeError(ErrorCode::InvalidArgument, "the server is already running");
    const std::string host = m_impl->options.host == "localhost" ? "127.0.0.1"
                             : m_impl->options.host == "[::1]"   ? "::1"
                                                                 : m_impl->options.host;
    int port = m_impl->options.port;
    if (port == 0)
        port = m_impl->http.bind_to_any_port(host);
    else if (!m_impl->http.bind_to_port(host, port))
        port = -1;
    if (port <= 0)
        return makeError(ErrorCode::Unsupported,
                         "cannot listen on " + host + ":" + std::to_string(m_impl->options.port) +
                             " (in use, or not an address of this machine)");
    m_impl->port = port;
    m_impl->thread = std::thread([this] { m_impl->http.listen_after_bind(); });
    return {};
}

void Server::stop() {
    if (!m_impl->thread.joinable())
        return;
    m_impl->core.abort({});
    m_impl->http.stop();
    m_impl->thread.join();
}

bool Server::running() const {
    return m_impl->thread.joinable() && m_impl->http.is_running();
}

int Server::port() const {
    return m_impl->port;
}

std::string Server::url() const {
    const bool v6 = m_impl->options.host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + m_impl->options.host + "]" : m_impl->options.host) + ":" +
           std::to_string(m_impl->port);
}

ServerStats Server::stats() const {
    ServerStats s;
    s.requests = m_impl->requests.load();
    s.rejected = m_impl->rejected.load();
    s.generations = m_impl->core.generations();
    s.queued = m_impl->core.queued();
    s.completions = m_impl->core.completionStats();
    return s;
}

const ServerOptions& Server::options() const {
    return m_impl->options;
}

} // namespace baton::server
