// Baton as a backend for the front ends writers already use: the KoboldAI API as
// KoboldCpp serves it and OpenAI-compatible completions, over HTTP (cpp-httplib).
// Every request that generates runs as one job of the model's queue
// (engine/model_queue.h), one at a time with every other user of the model (in the
// app, the story editor), and reads its prompt from the longest prefix an earlier
// request already read (src/completion.h), so a story resent whole with every request
// costs only what changed.
//
// Safe by default: loopback only unless an API key is set (then every request must
// carry it); bodies, lengths and queue are bounded; bad requests get a 4xx with a JSON
// error. See server/README.md for the endpoints and the choices made.
#pragma once

#include <baton/engine/error.h>
#include <baton/engine/model_queue.h>
#include <baton/engine/windows.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace baton::server {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 5001;                // 0: any free port (port() says which)
    std::string apiKey;             // required for any host other than a loopback address
    engine::WindowSettings windows; // 0: the model's default
    // Advertised to clients as the context they may send (tokens): large, because a
    // long prompt costs only what changed since the last request.
    int64_t maxContextTokens = 131072;
    // The most tokens one request may ask for; 0: a quarter of maxContextTokens (32,768
    // by default), which is what KoboldAI Lite's Max Output offers its writers (up to
    // a quarter of /api/extra/true_max_context_length), so it never asks for more.
    int maxGenerateTokens = 0;
    // maxGenerateTokens, or for 0 a quarter of maxContextTokens (at least 1).
    int generateLimit() const {
        if (maxGenerateTokens > 0)
            return maxGenerateTokens;
        const int64_t quarter = maxContextTokens / 4;
        return quarter < 1 ? 1 : quarter > 1000000 ? 1000000 : int(quarter);
    }
    size_t maxBodyBytes = 8u << 20; // larger request bodies get 413
    // Generations running or waiting; more get 503. Front ends queue a few at most
    // (a SillyTavern swipe while the last one streams, a retry after an abort, several
    // tabs), and a waiting generation costs only its connection.
    int maxQueue = 32;
    // Connections served at once, each on a thread of its own: a client that opens
    // connections and sends nothing holds only those, and the others are served beside
    // them. At least maxQueue + 8.
    int maxConnections = 128;
    // A connection that sends nothing for this long is closed (seconds): a half-sent
    // request, or a kept-alive connection left idle.
    int readTimeoutSeconds = 5;
    size_t cacheBytes = 256u << 20; // saved prompt states kept in memory
    // Baton's database, where prompt states are also saved to outlast the server ("":
    // in memory only), and the most bytes they may take there.
    std::string statesDatabase;
    int64_t savedStateBytes = int64_t(1) << 30;
    std::string modelName; // reported to clients (default: the model folder's name)
    // Called on a serving thread when stats() changed: as a request arrives (it is
    // counted then, before any byte of its answer) and once its answer is written. It
    // must be quick and never block (a GUI posts a refresh to its own thread).
    std::function<void()> onActivity;
};

// What the completions did: prompts read, how much of them came from saved states.
struct CompletionStats {
    int64_t completions = 0;
    int64_t promptTokens = 0, reusedTokens = 0, encodedTokens = 0;
    int64_t generatedTokens = 0;
    size_t cacheEntries = 0, cacheBytes = 0;
    int64_t savedHits = 0; // prompts resumed from a state saved in the database
    // Prompts whose front the client cut, continued from a stream the server had read
    // (stream_match.h).
    int64_t trimmedMatches = 0;
};

struct ServerStats {
    int64_t requests = 0;    // HTTP requests answered
    int64_t generations = 0; // completions that ran
    int64_t rejected = 0;    // 4xx and 5xx answers
    int queued = 0;          // generations running or waiting now
    CompletionStats completions;
};

class Server {
public:
    // Generates with the queue's current model, as jobs of that queue.
    Server(engine::ModelQueue& queue, ServerOptions options);
    ~Server(); // stops

    // Binds and starts serving on a thread of its own. Fails with a clear message when
    // the options are unsafe or invalid or the address cannot be bound.
    engine::Result<void> start();
    // Aborts running generations, stops accepting, waits for the serving thread.
    void stop();
    bool running() const;
    int port() const;        // the bound port, after start()
    std::string url() const; // http://host:port

    ServerStats stats() const;
    const ServerOptions& options() const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// Validates options on their own (start() does too): host and key, limits.
engine::Result<void> validateServerOptions(const ServerOptions& options);
// True for 127.0.0.0/8, ::1 and "localhost".
bool isLoopbackHost(const std::string& host);

} // namespace baton::server
