#include "cli_support.h"
#include "commands.h"
#include "database_options.h"

#include <baton/engine/model_queue.h>
#include <baton/engine/windows.h>
#include <baton/server/server.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <pthread.h>

namespace baton::cli {

int runServe(const std::vector<std::string>& argv) {
    Args args("serve",
              "Serve the model to KoboldAI and OpenAI clients over HTTP (SillyTavern, KoboldAI "
              "Lite, the openai libraries): /api/v1/generate, /api/extra/generate/stream, "
              "/v1/completions and the rest (server/README.md). A story resent whole with "
              "every request costs only what changed since the last one. Runs until "
              "interrupted (Ctrl+C).");
    addModelOptions(args);
    args.option("host", "ADDR", "Address to listen on; any other than loopback needs --api-key",
                "127.0.0.1")
        .option("port", "N", "Port to listen on (0: any free port)", "5001")
        .option("api-key", "KEY",
                "Every request must send 'Authorization: Bearer KEY' (default: $BATON_API_KEY, "
                "else none)")
        .option("window", "T", "Window size (default: the model's)", "0")
        .option("overlap", "O", "Tokens kept from one window to the next", "0")
        .option("max-context", "N",
                "Context advertised to clients, in tokens (long prompts cost only what "
                "changed)",
                "131072")
        .option("max-length", "N",
                "The most tokens one request may generate (0: a quarter of --max-context, "
                "what KoboldAI Lite's Max Output offers)",
                "0")
        .option("max-queue", "N", "Generations running or waiting; more are answered 503", "32")
        .option("cache-mb", "MB", "Memory for saved prompt states", "256")
        .option("saved-mb", "MB",
                "Room for prompt states saved in the database, so a restarted server reads "
                "only what follows the longest saved prefix",
                "1024")
        .flag("memory-only", "Keep prompt states in memory only (nothing is written to the "
                             "database)")
        .option("name", "NAME", "The model name reported to clients (default: its folder's)");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    server::ServerOptions options;
    options.host = args.get("host");
    options.port = int(args.getInt("port", 0, 65535));
    if (args.has("api-key"))
        options.apiKey = args.get("api-key");
    else if (const char* key = std::getenv("BATON_API_KEY"))
        options.apiKey = key;
    options.windows.window = int(args.getInt("window", 0, 1 << 20));
    options.windows.overlap = int(args.getInt("overlap", 0, 1 << 20));
    options.maxContextTokens = args.getInt("max-context", 1, int64_t(1) << 24);
    options.maxGenerateTokens = int(args.getInt("max-length", 0, 1000000));
    options.maxQueue = int(args.getInt("max-queue", 1, 256));
    options.maxConnections = std::max(options.maxConnections, options.maxQueue + 8);
    options.cacheBytes = size_t(args.getInt("cache-mb", 1, 1 << 20)) << 20;
    options.savedStateBytes = args.getInt("saved-mb", 1, 1 << 24) << 20;
    if (!args.has("memory-only")) // the database is opened (and created) once, here
        options.statesDatabase = openDatabase(args)->path();
    if (args.has("name"))
        options.modelName = args.get("name");
    if (auto r = server::validateServerOptions(options); !r)
        throw UsageError(r.error().message);

    const auto model = loadModel(args);
    const engine::WindowSettings windows = engine::resolveWindows(model->info(), options.windows);
    check(engine::validateWindows(windows, model->config().nPositions));

    // Interrupts are waited for here; the server's threads never see them.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    // The model's queue: requests run on it one at a time, in the order they came.
    engine::ModelQueue queue;
    check(queue.run([&model](engine::JobContext& context) -> engine::Result<void> {
        context.setModel(model);
        return {};
    }));
    server::Server server(queue, options);
    check(server.start());
    std::cout << "Serving " << model->info().path << " (T = " << windows.window
              << ", o = " << windows.overlap << ") at " << server.url()
              << "\n  KoboldAI: " << server.url() << "/api   OpenAI: " << server.url() << "/v1\n"
              << std::flush;
    int signal = 0;
    sigwait(&stopSignals, &signal);
    std::cerr << "stopping\n";
    server.stop();
    const auto s = server.stats();
    std::cerr << "served " << s.requests << " requests, " << s.generations << " generations; "
              << s.completions.reusedTokens << " of " << s.completions.promptTokens
              << " prompt tokens came from saved states\n";
    return 0;
}

} // namespace baton::cli
