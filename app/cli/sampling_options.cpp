#include "sampling_options.h"

namespace baton::cli {

void addSamplingOptions(Args& args) {
    args.option("max-tokens", "N", "Tokens to generate", "200")
        .option("temperature", "X", "Sampling temperature; 0 is greedy", "0.8")
        .flag("greedy", "Always take the most likely token: temperature 0 and, unless "
                        "--repetition-penalty is given, no repetition penalty")
        .option("top-k", "K", "Sample among the K most likely tokens; 0 = all", "0")
        .option("top-p", "P", "Sample from the smallest set of tokens with this much mass", "0.95")
        .option("repetition-penalty", "X",
                "Penalise tokens already in the window (1 = off, CTRL-style)", "1.1")
        .option("seed", "N", "Random seed: the same seed gives the same text", "0")
        .option("stop", "TEXT", "Stop before this text would be printed", std::nullopt, true)
        .flag("ignore-eos", "Never end at the model's end-of-text token (suppress it)");
}

engine::SamplingOptions samplingFromArgs(const Args& args) {
    engine::SamplingOptions o;
    o.maxTokens = static_cast<int>(args.getInt("max-tokens", 0, 1000000));
    o.temperature = args.getDouble("temperature", 0, 10);
    o.topK = static_cast<int>(args.getInt("top-k", 0, 1 << 24));
    o.topP = args.getDouble("top-p", 1e-6, 1);
    o.repetitionPenalty = args.getDouble("repetition-penalty", 1, 10);
    o.seed = static_cast<uint64_t>(args.getInt("seed", 0, INT64_MAX));
    applySamplingArgs(args, o);
    return o;
}

void applySamplingArgs(const Args& args, engine::SamplingOptions& o) {
    if (args.has("max-tokens"))
        o.maxTokens = static_cast<int>(args.getInt("max-tokens", 0, 1000000));
    if (args.has("temperature"))
        o.temperature = args.getDouble("temperature", 0, 10);
    if (args.has("greedy")) {
        o.temperature = 0.0;
        // Greedy means the likeliest token: no repetition penalty unless asked for.
        if (!args.has("repetition-penalty"))
            o.repetitionPenalty = 1.0;
    }
    if (args.has("top-k"))
        o.topK = static_cast<int>(args.getInt("top-k", 0, 1 << 24));
    if (args.has("top-p"))
        o.topP = args.getDouble("top-p", 1e-6, 1);
    if (args.has("repetition-penalty"))
        o.repetitionPenalty = args.getDouble("repetition-penalty", 1, 10);
    if (args.has("seed"))
        o.seed = static_cast<uint64_t>(args.getInt("seed", 0, INT64_MAX));
    if (args.has("stop")) {
        o.stopStrings = args.all("stop");
        for (const auto& s : o.stopStrings)
            if (s.empty())
                throw UsageError("--stop needs a non-empty text");
    }
    if (args.has("ignore-eos"))
        o.stopAtEndOfText = false;
}

} // namespace baton::cli
