#include "sampling_options.h"

#include <baton/engine/sampler_settings.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>

namespace baton::cli {

namespace {

// What a generation from the command line starts from where it differs from the
// engine's defaults (SamplingOptions{}): a little nucleus and repetition penalty.
const std::map<std::string, std::string>& commandLineDefaults() {
    static const std::map<std::string, std::string> d = {
        {"temperature", "0.8"}, {"top_p", "0.95"}, {"repetition_penalty", "1.1"}};
    return d;
}

std::string shown(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

// Reads one setting of the table from its flag: its range, and the table's check.
void applySetting(const Args& args, const engine::SamplerSetting& s, engine::SamplingOptions& o) {
    const double v = s.integer ? double(args.getInt(s.flag(), int64_t(s.lo), int64_t(s.hi)))
                               : args.getDouble(s.flag(), s.lo, s.hi);
    if (const std::string why = s.check(v); !why.empty())
        throw UsageError("--" + s.flag() + ": " + why);
    s.set(o, v);
}

} // namespace

void addSamplingOptions(Args& args) {
    args.option("max-tokens", "N", "Tokens to generate", "200")
        .flag("greedy", "Always take the most likely token: temperature 0 and, unless "
                        "--repetition-penalty is given, no repetition penalty");
    // Every sampler setting, as the table describes it (engine/sampler_settings.h).
    for (const engine::SamplerSetting& s : engine::samplerSettings()) {
        const auto d = commandLineDefaults().find(s.key);
        args.option(s.flag(), s.integer ? "N" : "X", s.help,
                    d != commandLineDefaults().end() ? d->second : shown(s.defaultValue()));
    }
    args.option("dry-breaker", "TEXT",
                "DRY does not extend a repeat across this text (repeatable; default: line "
                "break, colon, quote, asterisk)",
                std::nullopt, true)
        .option("sampler-order", "LIST",
                "The truncations and the temperature, in this order, comma-separated (a "
                "stage not named does not run; the penalties always come first): "
                "top_n_sigma, top_k, tail_free, typical_p, top_p, min_p, top_a, xtc, "
                "temperature (default: Baton's chain, see --temperature-last)")
        .option("bias", "TEXT=X",
                "Add X (-100 to 100) to the logits of the tokens of TEXT (repeatable; "
                "\" the\"=-5 for the word after a space; -100 bans them)",
                std::nullopt, true)
        .option("ban", "TEXT",
                "Never write this text (repeatable; ASCII case ignored; as a whole word unless "
                "--ban-inside-words): when it would appear, go back to where it began and "
                "write something else",
                std::nullopt, true)
        .flag("ban-inside-words",
              "Match --ban's texts inside words too (\"her\" then bans \"there\")")
        .option("seed", "N", "Random seed: the same seed gives the same text", "0")
        .option("stop", "TEXT", "Stop before this text would be printed", std::nullopt, true)
        .flag("ignore-eos", "Never end at the model's end-of-text token (suppress it)");
}

engine::SamplingOptions samplingFromArgs(const Args& args) {
    engine::SamplingOptions o;
    o.maxTokens = static_cast<int>(args.getInt("max-tokens", 0, 1000000));
    for (const engine::SamplerSetting& s : engine::samplerSettings())
        applySetting(args, s, o); // the option's value or its default
    o.seed = static_cast<uint64_t>(args.getInt("seed", 0, INT64_MAX));
    applySamplingArgs(args, o);
    return o;
}

void applySamplingArgs(const Args& args, engine::SamplingOptions& o) {
    if (args.has("max-tokens"))
        o.maxTokens = static_cast<int>(args.getInt("max-tokens", 0, 1000000));
    for (const engine::SamplerSetting& s : engine::samplerSettings())
        if (args.has(s.flag()))
            applySetting(args, s, o);
    if (args.has("greedy")) {
        o.temperature = 0.0;
        // Greedy means the likeliest token: no repetition penalty unless asked for.
        if (!args.has("repetition-penalty"))
            o.repetitionPenalty = 1.0;
    }
    if (args.has("dry-breaker")) {
        o.drySequenceBreakers = args.all("dry-breaker");
        for (const auto& b : o.drySequenceBreakers)
            if (b.empty())
                throw UsageError("--dry-breaker needs a non-empty text");
    }
    if (args.has("sampler-order")) {
        o.samplerOrder.clear();
        const std::string list = args.get("sampler-order");
        size_t start = 0;
        while (start <= list.size()) {
            const size_t comma = std::min(list.find(',', start), list.size());
            const std::string name = list.substr(start, comma - start);
            if (name.empty())
                throw UsageError("--sampler-order takes names separated by commas");
            o.samplerOrder.push_back(name);
            start = comma + 1;
        }
    }
    if (args.has("bias")) {
        o.textBias.clear();
        for (const std::string& item : args.all("bias")) {
            const size_t eq = item.rfind('=');
            double bias = 0;
            try {
                size_t used = 0;
                bias = eq == std::string::npos ? NAN : std::stod(item.substr(eq + 1), &used);
                if (eq != std::string::npos && used != item.size() - eq - 1)
                    bias = NAN;
            } catch (const std::exception&) {
                bias = NAN;
            }
            if (eq == 0 || eq == std::string::npos || !(std::abs(bias) <= 100))
                throw UsageError("--bias takes TEXT=X with X in [-100, 100], not '" + item + "'");
            o.textBias.emplace_back(item.substr(0, eq), float(bias));
        }
    }
    if (args.has("ban")) {
        o.bannedPhrases = args.all("ban");
        for (const auto& b : o.bannedPhrases)
            if (b.empty())
                throw UsageError("--ban needs a non-empty text");
    }
    if (args.has("ban-inside-words"))
        o.bannedInsideWords = true;
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
