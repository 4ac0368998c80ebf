#include "cli_support.h"
#include "commands.h"
#include "sampling_options.h"

#include <baton/engine/generator.h>
#include <baton/engine/text.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace baton::cli {

int runGenerate(const std::vector<std::string>& argv) {
    Args args("generate",
              "Continue a prompt, streaming the text to standard output as it is generated. "
              "Generation runs in windows of T tokens with overlap o, so it can go on past "
              "the model's positions at a flat cost per token.");
    addModelOptions(args);
    args.option("prompt", "TEXT", "The text to continue")
        .option("prompt-file", "FILE", "Read the prompt from a UTF-8 file")
        .option("window", "T", "Window size (default: the model's positions)", "0")
        .option("overlap", "O", "Tokens kept from one window to the next", "0");
    addSamplingOptions(args);
    args.flag("echo", "Print the prompt before the continuation")
        .flag("json", "Print JSON lines: one {\"event\":\"token\"} per token, then "
                      "{\"event\":\"done\"} with the whole text and statistics")
        .flag("quiet", "Do not print statistics to standard error");
    if (!args.parse(argv))
        return 0;
    if (args.has("prompt") == args.has("prompt-file"))
        throw UsageError("give exactly one of --prompt TEXT or --prompt-file FILE");
    const std::string prompt =
        args.has("prompt") ? args.get("prompt") : readText(args.get("prompt-file"));
    if (engine::firstInvalidUtf8(prompt) != std::string::npos)
        throw CliError("the prompt is not valid UTF-8");
    engine::GenerateRequest request;
    request.prompt = prompt;
    request.sampling = samplingFromArgs(args);
    request.windows.window = static_cast<int>(args.getInt("window", 0, 1 << 20));
    request.windows.overlap = static_cast<int>(args.getInt("overlap", 0, 1 << 20));
    const auto model = loadModel(args);

    const bool json = args.has("json");
    if (args.has("echo") && !json)
        std::cout << prompt << std::flush;
    auto onToken = [&](const engine::GenerationEvent& e) {
        if (json) {
            nlohmann::ordered_json j;
            j["event"] = "token";
            j["id"] = e.token;
            j["text"] = e.text;
            j["window_fill"] = e.windowFill;
            std::cout << j.dump() << "\n" << std::flush;
        } else if (!e.text.empty()) {
            std::cout << e.text << std::flush;
        }
        return true;
    };
    // The prompt after the model's start-of-text token, as every other client reads it.
    const auto r = engine::generateFrom(model, request, onToken);
    check(r);
    if (json) {
        nlohmann::ordered_json j;
        j["event"] = "done";
        j["text"] = r->text;
        j["ids"] = r->tokens;
        j["stop_reason"] = engine::stopReasonName(r->reason);
        j["tokens"] = r->tokens.size();
        j["seconds"] = r->seconds;
        j["tokens_per_s"] = r->tokensPerSecond;
        j["rollovers"] = r->rollovers;
        std::cout << j.dump() << "\n";
    } else {
        std::cout << "\n";
    }
    if (!args.has("quiet")) {
        char line[160];
        std::snprintf(line, sizeof(line), "[%zu tokens in %.2f s, %.1f tokens/s, stop: %s]\n",
                      r->tokens.size(), r->seconds, r->tokensPerSecond,
                      engine::stopReasonName(r->reason));
        std::cerr << line;
    }
    return 0;
}

} // namespace baton::cli
