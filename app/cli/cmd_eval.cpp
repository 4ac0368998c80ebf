#include "cli_support.h"
#include "commands.h"
#include "terminal_progress.h"

#include <baton/engine/scoring.h>
#include <baton/engine/windows.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace baton::cli {

namespace {

using Json = nlohmann::ordered_json;

// One (model, T, o, state) over every file.
struct Row {
    std::string model; // "a" (--model) or "b" (--paired-with)
    engine::WindowSettings windows;
    engine::StateSource state = engine::StateSource::On;
    bool recurrent = false;
    int64_t scored = 0, words = 0;
    double nll = 0, seconds = 0;
    std::vector<engine::PositionBand> bands;
    std::vector<engine::WindowScore> perWindow; // every file's windows in turn
    std::vector<engine::ByteSpanScore> spans;   // idem, spans of bytes (pairing by spans)

    double tokenPpl() const { return scored ? std::exp(nll / double(scored)) : 0.0; }
    // Bits per byte of text: comparable across tokenizers (the texts' first tokens, which
    // no window predicts, are left out of the NLL; their bytes are counted).
    double bitsPerByte(uint64_t bytes) const {
        return bytes ? nll / std::log(2.0) / double(bytes) : 0.0;
    }
    double wordPpl() const { return words ? std::exp(nll / double(words)) : 0.0; }
    std::string stateName() const { return recurrent ? engine::stateSourceName(state) : "-"; }
    void add(const engine::ScoreResult& r) {
        scored += r.scoredTokens;
        words += r.words;
        nll += r.nllSum;
        seconds += r.seconds;
        perWindow.insert(perWindow.end(), r.perWindow.begin(), r.perWindow.end());
        if (bands.empty()) {
            bands = r.bands;
            return;
        }
        for (size_t i = 0; i < bands.size(); ++i) {
            bands[i].tokens += r.bands[i].tokens;
            bands[i].nllSum += r.bands[i].nllSum;
            bands[i].slotMassSum += r.bands[i].slotMassSum;
            bands[i].slotMassCount += r.bands[i].slotMassCount;
        }
    }
};

// A paired difference between two rows of the same T and o: by window (the same
// tokens), or by span of bytes (models with different tokenizers; all only, in nats per
// byte).
struct Pair {
    size_t a, b; // indices into the rows
    bool bySpan = false;
    engine::PairedComparison diff;
};

std::string bandName(const engine::PositionBand& b) {
    return b.last == INT32_MAX ? std::to_string(b.first) + "+"
                               : std::to_string(b.first) + "-" + std::to_string(b.last);
}

std::string rowLabel(const Row& r) {
    return r.model + (r.recurrent ? std::string(":") + engine::stateSourceName(r.state) : "");
}

Json differenceJson(const engine::PairedDifference& d) {
    Json j;
    j["mean"] = d.mean;
    j["std_error"] = d.stdError;
    j["windows"] = d.windows;
    j["tokens"] = d.tokens;
    return j;
}

} // namespace

int runEval(const std::vector<std::string>& argv) {
    Args args("eval",
              "Windowed evaluation (method.md section 3): for every window size T and overlap o, "
              "score the files in windows of T tokens starting every T - o tokens and print "
              "scored tokens, words, total NLL, token- and word-level perplexity, FLOPs per "
              "token as the paper counts them and with the LM head, and wall time. Each file "
              "is a separate document (a recurrent model's state starts fresh in each). For "
              "recurrent models it also reports, by window position band, the mean NLL and the "
              "attention mass on the state slots, and can replace the state by ablations. "
              "Paired differences (per-window, with standard errors) compare each ablation "
              "with the true state and, with --paired-with, this model with another one.");
    addModelOptions(args);
    args.option("window", "T[,T...]",
                "Window sizes (default: the model's; for a recurrent "
                "model the T it was trained with)")
        .option("overlap", "O[,O...]",
                "Overlaps, each less than T (default: the model's; 0 "
                "for a baseline)")
        .option("state", "S[,S...]",
                "For a recurrent model, the states its windows receive: on (the true "
                "state), off (none), mean (the mean state over the text), far (the state of "
                "the window half the text away), shuffled (the states permuted across windows)",
                "on")
        .flag("no-state", "The same as --state on,off")
        .option("shuffle-seed", "N", "Seed of the shuffled ablation's permutation", "1")
        .option("paired-with", "DIR",
                "A second model, scored on the same windows with its state on; prints this "
                "model minus that one per window setting: per token, paired by window, when "
                "the two share a tokenizer; else per byte, paired by span of text")
        .option("span-bytes", "N",
                "With --paired-with a model of another tokenizer, the bytes of text in each "
                "paired span",
                "4096")
        .flag("json", "Print a JSON object: the rows and the paired differences")
        .option("per-token", "FILE",
                "Write every scored token's NLL, window index and "
                "position to FILE (tab-separated, with a header)")
        .positionals("FILE", "UTF-8 text files to evaluate", 1, 100000);
    addUnwrapOption(args);
    if (!args.parse(argv))
        return 0;
    const std::vector<std::string> texts = readTexts(args);
    const auto model = loadModel(args);
    const auto& info = model->info();
    const bool recurrent = model->recurrent();

    std::vector<engine::StateSource> sources;
    const auto names =
        args.has("no-state") ? std::vector<std::string>{"on", "off"} : args.getList("state");
    for (const auto& name : names) {
        auto s = engine::parseStateSource(name);
        if (!s)
            throw UsageError("--state: " + s.error().message);
        if (std::find(sources.begin(), sources.end(), *s) == sources.end())
            sources.push_back(*s);
    }
    if (!recurrent && (sources.size() > 1 || sources[0] != engine::StateSource::On))
        throw UsageError("--state and --no-state need a recurrent model");
    if (args.has("no-state") && args.has("state"))
        throw UsageError("give --state or --no-state, not both");

    std::shared_ptr<engine::Model> other;
    bool bySpan = false;
    if (args.has("paired-with")) {
        other = loadModelAt(args.get("paired-with"), args);
        bySpan = other->tokenizer()->identity() != model->tokenizer()->identity();
    }
    const int64_t spanBytes = args.getInt("span-bytes", 64, int64_t(1) << 30);

    std::vector<int64_t> windowsList{0}, overlapList{0};
    if (args.has("window"))
        windowsList = args.getIntList("window", 1, info.config.nPositions);
    if (args.has("overlap"))
        overlapList = args.getIntList("overlap", 0, info.config.nPositions - 1);
    std::vector<engine::WindowSettings> settings;
    for (int64_t T : windowsList)
        for (int64_t o : overlapList) {
            engine::WindowSettings requested{int(T), int(o)};
            if (!args.has("overlap") && T != 0 && info.recurrence)
                requested.overlap = info.recurrence->overlap < T ? info.recurrence->overlap : 0;
            const auto w = engine::resolveWindows(info, requested);
            check(engine::validateWindows(w, info.config.nPositions));
            if (other)
                check(engine::validateWindows(w, other->info().config.nPositions));
            settings.push_back(w);
        }
    const uint64_t seed = static_cast<uint64_t>(args.getInt("shuffle-seed", 0, INT64_MAX));

    std::ofstream perToken;
    if (args.has("per-token")) {
        perToken.open(args.get("per-token"));
        if (!perToken)
            throw CliError("cannot write " + args.get("per-token"));
        perToken << "file\tmodel\twindow_size\toverlap\tstate\tindex\twindow\tposition\ttoken_"
                    "id\tnll\n";
    }

    std::vector<Row> rows;
    std::vector<Pair> pairs;
    std::vector<std::string> warnings;
    // The progress bar: every file scored once per row.
    const size_t runs = settings.size() * (sources.size() + (other ? 1 : 0));
    double fileTokens = 0;
    uint64_t textBytes = 0;
    for (const auto& t : texts) {
        fileTokens += double(model->tokenizer()->encode(t).size());
        textBytes += t.size();
    }
    TerminalProgress bar("eval", fileTokens * double(runs), "tokens");
    size_t runsDone = 0;
    auto score = [&](const engine::Model& m, const std::string& name,
                     const engine::WindowSettings& w, engine::StateSource state) {
        const std::string what =
            "model " + name + ", T " + std::to_string(w.window) + " o " +
            std::to_string(w.overlap) +
            (m.recurrent() ? std::string(", state ") + engine::stateSourceName(state)
                           : std::string());
        Row row;
        row.model = name;
        row.windows = w;
        row.recurrent = m.recurrent();
        row.state = row.recurrent ? state : engine::StateSource::Off;
        for (size_t f = 0; f < texts.size(); ++f) {
            engine::ScoreOptions options;
            options.windows = w;
            options.state = state;
            options.shuffleSeed = seed;
            options.keepPerToken = perToken.is_open() || bySpan;
            options.progress = [&, f](int64_t done, int64_t total) {
                const double file = total > 0 ? double(done) / double(total) : 1.0;
                bar.update((double(runsDone) + (double(f) + file) / double(texts.size())) /
                               double(runs),
                           what);
                return true;
            };
            const auto r = engine::scoreText(m, texts[f], options);
            check(r);
            row.add(*r);
            if (bySpan) {
                const auto spans = engine::scoreByteSpans(
                    engine::tokenLosses(*m.tokenizer(), m.tokenizer()->encode(texts[f]), *r,
                                        texts[f].size()),
                    int64_t(texts[f].size()), spanBytes);
                row.spans.insert(row.spans.end(), spans.begin(), spans.end());
            }
            for (const auto& s : r->perToken)
                perToken << args.positional()[f] << "\t" << name << "\t" << w.window << "\t"
                         << w.overlap << "\t" << row.stateName() << "\t" << s.index << "\t"
                         << s.window << "\t" << s.position << "\t" << s.id << "\t" << -s.logprob
                         << "\n";
        }
        ++runsDone;
        return row;
    };
    for (const auto& w : settings) {
        if (auto warning = engine::windowWarning(info, w); !warning.empty()) {
            bar.finish(); // the warning on a line of its own
            std::cerr << "warning: " << warning << "\n";
            warnings.push_back(warning);
        }
        const size_t first = rows.size();
        for (auto state : sources)
            rows.push_back(score(*model, "a", w, state));
        if (other)
            rows.push_back(score(*other, "b", w, engine::StateSource::On));
        // Every ablation against the first state listed, and this model against the other.
        const size_t ownRows = sources.size();
        for (size_t i = 1; i < ownRows; ++i)
            pairs.push_back({first + i, first, false, {}});
        if (other)
            pairs.push_back({first, first + ownRows, bySpan, {}});
    }
    bar.finish();
    for (auto& p : pairs) {
        if (p.bySpan) {
            auto d = engine::comparePairedSpans(rows[p.a].spans, rows[p.b].spans);
            check(d);
            p.diff.all = *d;
            continue;
        }
        auto d = engine::comparePaired(rows[p.a].perWindow, rows[p.b].perWindow);
        check(d);
        p.diff = *d;
    }

    if (args.has("json")) {
        Json out;
        out["model"] = info.path;
        out["recurrent"] = recurrent;
        if (other)
            out["paired_with"] = other->info().path;
        out["files"] = args.positional();
        out["unwrap"] = args.has("unwrap");
        out["bytes"] = textBytes;
        out["tokens"] = static_cast<int64_t>(fileTokens);
        out["bytes_per_token"] = fileTokens > 0 ? double(textBytes) / fileTokens : 0.0;
        out["warnings"] = warnings;
        auto& jrows = out["rows"] = Json::array();
        for (const auto& r : rows) {
            Json j;
            j["model"] = r.model == "a" ? info.path : other->info().path;
            j["recurrent"] = r.recurrent;
            j["state"] = r.recurrent ? engine::stateSourceName(r.state) : "none";
            j["window"] = r.windows.window;
            j["overlap"] = r.windows.overlap;
            j["scored_tokens"] = r.scored;
            j["words"] = r.words;
            j["windows"] = static_cast<int64_t>(r.perWindow.size());
            j["nll_sum"] = r.nll;
            j["mean_nll"] = r.scored ? r.nll / double(r.scored) : 0.0;
            j["token_ppl"] = r.tokenPpl();
            j["word_ppl"] = r.wordPpl();
            j["bits_per_byte"] = r.bitsPerByte(textBytes);
            const auto& c = (r.model == "a" ? info : other->info()).config;
            j["flops_per_token"] = engine::flopsPerToken(c, r.windows, false);
            j["flops_per_token_with_head"] = engine::flopsPerToken(c, r.windows, true);
            j["seconds"] = r.seconds;
            auto& bands = j["bands"] = Json::array();
            for (const auto& b : r.bands) {
                Json jb;
                jb["positions"] = bandName(b);
                jb["tokens"] = b.tokens;
                jb["mean_nll"] = b.meanNll();
                if (r.recurrent && b.slotMassCount)
                    jb["slot_attention"] = b.meanSlotMass();
                bands.push_back(jb);
            }
            jrows.push_back(j);
        }
        auto& jpairs = out["paired"] = Json::array();
        for (const auto& p : pairs) {
            Json j;
            const Row &a = rows[p.a], &b = rows[p.b];
            j["window"] = a.windows.window;
            j["overlap"] = a.windows.overlap;
            j["a"] = rowLabel(a);
            j["b"] = rowLabel(b);
            if (p.bySpan) {
                const auto& d = p.diff.all;
                j["by"] = "span";
                j["span_bytes"] = spanBytes;
                j["difference_bits_per_byte"] = {{"mean", d.mean / std::log(2.0)},
                                                 {"std_error", d.stdError / std::log(2.0)},
                                                 {"spans", d.windows},
                                                 {"bytes", d.tokens}};
                jpairs.push_back(j);
                continue;
            }
            j["by"] = "window";
            j["difference"] = differenceJson(p.diff.all);
            auto& bands = j["bands"] = Json::array();
            for (size_t i = 0; i < p.diff.bands.size(); ++i) {
                Json jb = differenceJson(p.diff.bands[i]);
                jb["positions"] = bandName(a.bands[i]);
                bands.push_back(jb);
            }
            jpairs.push_back(j);
        }
        std::cout << out.dump(2) << "\n";
        return 0;
    }

    std::printf("model a: %s (%s)\n", info.path.c_str(),
                recurrent
                    ? ("recurrent, trained with T = " + std::to_string(info.recurrence->window) +
                       ", o = " + std::to_string(info.recurrence->overlap))
                          .c_str()
                    : "baseline");
    if (other)
        std::printf("model b: %s (%s)\n", other->info().path.c_str(),
                    other->recurrent() ? "recurrent" : "baseline");
    std::printf("text: %llu bytes, %.0f tokens (%.3f bytes per token)\n",
                static_cast<unsigned long long>(textBytes), fileTokens,
                fileTokens > 0 ? double(textBytes) / fileTokens : 0.0);
    std::printf("%5s %5s %-11s %10s %9s %14s %10s %10s %9s %11s %11s %8s\n", "T", "o", "model",
                "scored", "words", "NLL (nats)", "token ppl", "word ppl", "bits/byte", "FLOPs/tok",
                "+LM head", "time s");
    for (const auto& r : rows) {
        const auto& c = (r.model == "a" ? info : other->info()).config;
        std::printf("%5d %5d %-11s %10lld %9lld %14.4f %10.4f %10.4f %9.4f %11.3e %11.3e %8.2f\n",
                    r.windows.window, r.windows.overlap, rowLabel(r).c_str(),
                    static_cast<long long>(r.scored), static_cast<long long>(r.words), r.nll,
                    r.tokenPpl(), r.wordPpl(), r.bitsPerByte(textBytes),
                    engine::flopsPerToken(c, r.windows, false),
                    engine::flopsPerToken(c, r.windows, true), r.seconds);
    }
    if (recurrent || other) {
        std::printf("\nby window position (mean NLL in nats; attention on the state slots)\n");
        std::printf("%5s %5s %-11s %8s %10s %12s %10s\n", "T", "o", "model", "band", "tokens",
                    "mean NLL", "slot attn");
        for (const auto& r : rows)
            for (const auto& b : r.bands) {
                char mass[16] = "-";
                if (r.recurrent && b.slotMassCount)
                    std::snprintf(mass, sizeof(mass), "%.4f", b.meanSlotMass());
                std::printf("%5d %5d %-11s %8s %10lld %12.5f %10s\n", r.windows.window,
                            r.windows.overlap, rowLabel(r).c_str(), bandName(b).c_str(),
                            static_cast<long long>(b.tokens), b.meanNll(), mass);
            }
    }
    const auto windowPairs =
        std::count_if(pairs.begin(), pairs.end(), [](const Pair& p) { return !p.bySpan; });
    if (windowPairs > 0) {
        std::printf("\npaired differences, a - b in mean NLL per token (nats) +- standard error "
                    "over windows\n");
        std::printf("%5s %5s %-11s %-11s %22s", "T", "o", "a", "b", "all");
        for (const auto& b : rows[pairs.front().a].bands)
            std::printf(" %22s", bandName(b).c_str());
        std::printf("\n");
        for (const auto& p : pairs) {
            if (p.bySpan)
                continue;
            const Row &a = rows[p.a], &b = rows[p.b];
            std::printf("%5d %5d %-11s %-11s %+11.5f +- %7.5f", a.windows.window, a.windows.overlap,
                        rowLabel(a).c_str(), rowLabel(b).c_str(), p.diff.all.mean,
                        p.diff.all.stdError);
            for (const auto& d : p.diff.bands)
                std::printf(" %+11.5f +- %7.5f", d.mean, d.stdError);
            std::printf("\n");
        }
    }
    if (bySpan) {
        std::printf("\npaired by spans of %lld bytes (the models' tokenizers differ): a - b in "
                    "bits per byte +- standard error over spans\n",
                    static_cast<long long>(spanBytes));
        std::printf("%5s %5s %-11s %-11s %8s %22s\n", "T", "o", "a", "b", "spans", "bits/byte");
        for (const auto& p : pairs) {
            if (!p.bySpan)
                continue;
            const Row &a = rows[p.a], &b = rows[p.b];
            std::printf("%5d %5d %-11s %-11s %8lld %+11.5f +- %7.5f\n", a.windows.window,
                        a.windows.overlap, rowLabel(a).c_str(), rowLabel(b).c_str(),
                        static_cast<long long>(p.diff.all.windows), p.diff.all.mean / std::log(2.0),
                        p.diff.all.stdError / std::log(2.0));
        }
    }
    return 0;
}

} // namespace baton::cli
