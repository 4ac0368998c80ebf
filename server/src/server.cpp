#include "baton/server/server.h"

#include "http_json.h"
#include "server_core.h"

#include <algorithm>
#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <atomic>
#include <thread>

namespace baton::server {

using engine::ErrorCode;
using engine::makeError;

bool isLoopbackHost(const std::string& host) {
    return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

constexpr int64_t kMostGenerateTokens = 1000000;

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
    if (o.maxGenerateTokens < 0 || o.maxGenerateTokens > kMostGenerateTokens)
        return bad("the generation limit must be in [1, 1000000] tokens (0: a quarter of the "
                   "context limit)");
    if (o.maxBodyBytes < 1024)
        return bad("the body limit must be at least 1024 bytes");
    if (o.maxQueue < 1 || o.maxQueue > 256)
        return bad("the queue must hold 1 to 256 generations");
    if (o.maxConnections < o.maxQueue + 8 || o.maxConnections > 4096)
        return bad("the connection limit must be in [queue + 8, 4096]");
    if (o.readTimeoutSeconds < 1 || o.readTimeoutSeconds > 600)
        return bad("the read timeout must be 1 to 600 seconds");
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

// What is wrong with a request's framing headers: its status and why (0 when nothing).
// A Content-Length that is not one number, or over the limit; a transfer encoding
// (cpp-httplib 0.11 reads a chunked body without a size limit, and a length beside it
// is how requests are smuggled past proxies: every client Baton serves sends a
// length); a content encoding.
std::pair<int, std::string> framingProblem(const httplib::Request& req, size_t maxBodyBytes) {
    if (req.has_header("Transfer-Encoding"))
        return {411, "send the body with a Content-Length, not a Transfer-Encoding"};
    if (req.has_header("Content-Encoding") &&
        req.get_header_value("Content-Encoding") != "identity")
        return {415, "compressed request bodies are not accepted"};
    if (!req.has_header("Content-Length"))
        return {};
    if (req.get_header_value_count("Content-Length") != 1)
        return {400, "a request must have one Content-Length"};
    const std::string length = req.get_header_value("Content-Length");
    if (length.empty() || length.size() > 18 ||
        length.find_first_not_of("0123456789") != std::string::npos)
        return {400,
                "Content-Length must be a number of bytes, not \"" + length.substr(0, 32) + "\""};
    if (std::stoull(length) > maxBodyBytes)
        return {413, "the request body is larger than the server accepts (" +
                         std::to_string(maxBodyBytes) + " bytes)"};
    return {};
}

// Answers with the error and closes the connection: the body was not read, so its
// bytes must not be taken for the next request. (cpp-httplib 0.11 keeps a connection
// alive whatever the response's Connection header says; a content provider that
// reports failure after writing the whole answer makes it close.)
void refuseAndClose(httplib::Response& res, int status, const std::string& message) {
    const std::string body = dumpJson(errorJson(status, message));
    res.status = status;
    res.set_header("Connection", "close");
    res.set_content_provider(body.size(), "application/json",
                             [body](size_t offset, size_t length, httplib::DataSink& sink) {
                                 sink.write(body.data() + offset, length);
                                 return false;
                             });
}

// Connections waiting to be accepted (what clients open at once, with room).
constexpr int kListenBacklog = 512;

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
    // The listening socket, for its backlog (below).
    std::atomic<socket_t> listening{INVALID_SOCKET};

    void routes();
};

void Server::Impl::routes() {
    http.set_payload_max_length(options.maxBodyBytes);
    // A client that stops sending (a half-sent request, an idle kept-alive connection)
    // is dropped after readTimeoutSeconds; one that stops reading, after 30 s.
    http.set_read_timeout(options.readTimeoutSeconds, 0);
    http.set_keep_alive_timeout(options.readTimeoutSeconds);
    http.set_write_timeout(30, 0);
    // A thread per connection, up to maxConnections: room for every generation the
    // queue admits, and for aborts, checks, token counts and model queries beside them,
    // however many connections slow clients hold.
    const size_t threads = size_t(options.maxConnections);
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // cpp-httplib 0.11 listens with a backlog of 5: a burst of connections beyond it
    // (front ends' swipes, token counts, several tabs) is refused or stalls until the
    // connects are retried. The socket is kept to listen again with a longer backlog.
    http.set_socket_options([this](socket_t sock) {
        httplib::default_socket_options(sock);
        listening = sock;
    });

    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        requests.fetch_add(1);
        if (options.onActivity)
            options.onActivity();
        // The body's framing, checked before the body is read: a bad length is
        // answered at once instead of being waited for, and the connection closed.
        if (const auto [status, problem] = framingProblem(req, options.maxBodyBytes); status != 0) {
            refuseAndClose(res, status, problem);
            return httplib::Server::HandlerResponse::Handled;
        }
        // Browsers' front ends (KoboldAI Lite) call from another origin.
        res.set_header("Access-Control-Allow-Origin", "*");
        res.set_header("Access-Control-Expose-Headers", "X-Baton-Adjusted");
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
        if (!res.body.empty() || res.content_provider_) // answered already
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
    addChatRoutes(http, core);
    addLlamaRoutes(http, core);
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
    if (m_impl->listening != INVALID_SOCKET)
        ::listen(m_impl->listening, kListenBacklog);
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
