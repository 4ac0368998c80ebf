#include "commands.h"
#include "common.h"

#include <baton/engine/scoring.h>
#include <baton/engine/windows.h>

#include <nlohmann/json.hpp>

#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace baton::cli {

namespace {

struct Row {
    engine::WindowSettings windows;
    bool state = true;
    int64_t scored = 0, words = 0;
    double nll = 0, seconds = 0;
    std::vector<engine::PositionBand> bands;

    double tokenPpl() const { return scored ? std::exp(nll / double(scored)) : 0.0; }
    double wordPpl() const { return words ? std::exp(nll / double(words)) : 0.0; }
    void add(const engine::ScoreResult& r) {
        scored += r.scoredTokens;
        words += r.words;
        nll += r.nllSum;
        seconds += r.seconds;
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

std::string bandName(const engine::PositionBand& b) {
    return b.last == INT32_MAX ? std::to_string(b.first) + "+"
                               : std::to_string(b.first) + "-" + std::to_string(b.last);
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
              "attention mass on the state slot.");
    addModelOptions(args);
    args.option("window", "T[,T...]",
                "Window sizes (default: the model's; for a recurrent "
                "model the T it was trained with)")
        .option("overlap", "O[,O...]",
                "Overlaps, each less than T (default: the model's; 0 "
                "for a baseline)")
        .flag("no-state", "For a recurrent model, also evaluate every setting with the state "
                          "switched off (same weights, no extra key and value) and compare")
        .flag("json", "Print a JSON array with one object per row")
        .option("per-token", "FILE",
                "Write every scored token's NLL, window index and "
                "position to FILE (tab-separated, with a header)")
        .positionals("FILE", "UTF-8 text files to evaluate", 1, 100000);
    if (!args.parse(argv))
        return 0;
    std::vector<std::string> texts;
    for (const auto& f : args.positional())
        texts.push_back(readText(f));
    const auto model = loadModel(args);
    const auto& info = model->info();

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
            settings.push_back(w);
        }
    const bool recurrent = model->recurrent();
    std::vector<bool> stateModes{true};
    if (args.has("no-state")) {
        if (!recurrent)
            throw UsageError("--no-state needs a recurrent model");
        stateModes.push_back(false);
    }

    std::ofstream perToken;
    if (args.has("per-token")) {
        perToken.open(args.get("per-token"));
        if (!perToken)
            throw CliError("cannot write " + args.get("per-token"));
        perToken << "file\twindow_size\toverlap\tstate\tindex\twindow\tposition\ttoken_id\tnll\n";
    }

    std::vector<Row> rows;
    std::vector<std::string> warnings;
    for (const auto& w : settings) {
        if (auto warning = engine::windowWarning(info, w); !warning.empty()) {
            std::cerr << "warning: " << warning << "\n";
            warnings.push_back(warning);
        }
        for (bool state : stateModes) {
            Row row;
            row.windows = w;
            row.state = state;
            for (size_t f = 0; f < texts.size(); ++f) {
                engine::ScoreOptions options;
                options.windows = w;
                options.useState = state;
                options.keepPerToken = perToken.is_open();
                const auto r = engine::scoreText(*model, texts[f], options);
                check(r);
                row.add(*r);
                for (const auto& s : r->perToken)
                    perToken << args.positional()[f] << "\t" << w.window << "\t" << w.overlap
                             << "\t" << (state ? "on" : "off") << "\t" << s.index << "\t"
                             << s.window << "\t" << s.position << "\t" << s.id << "\t" << -s.logprob
                             << "\n";
            }
            rows.push_back(std::move(row));
        }
    }

    if (args.has("json")) {
        nlohmann::ordered_json out = nlohmann::ordered_json::array();
        for (const auto& r : rows) {
            nlohmann::ordered_json j;
            j["model"] = info.path;
            j["recurrent"] = recurrent;
            j["state"] = recurrent ? (r.state ? "on" : "off") : "none";
            j["window"] = r.windows.window;
            j["overlap"] = r.windows.overlap;
            j["files"] = args.positional();
            j["scored_tokens"] = r.scored;
            j["words"] = r.words;
            j["nll_sum"] = r.nll;
            j["token_ppl"] = r.tokenPpl();
            j["word_ppl"] = r.wordPpl();
            j["flops_per_token"] = engine::flopsPerToken(info.config, r.windows, false);
            j["flops_per_token_with_head"] = engine::flopsPerToken(info.config, r.windows, true);
            j["seconds"] = r.seconds;
            auto& bands = j["bands"] = nlohmann::ordered_json::array();
            for (const auto& b : r.bands) {
                nlohmann::ordered_json jb;
                jb["positions"] = bandName(b);
                jb["tokens"] = b.tokens;
                jb["mean_nll"] = b.meanNll();
                if (recurrent && r.state)
                    jb["slot_attention"] = b.meanSlotMass();
                bands.push_back(jb);
            }
            j["warnings"] = warnings;
            out.push_back(j);
        }
        std::cout << out.dump(2) << "\n";
        return 0;
    }

    std::printf("model %s (%s)\n", info.path.c_str(),
                recurrent
                    ? ("recurrent, trained with T = " + std::to_string(info.recurrence->window) +
                       ", o = " + std::to_string(info.recurrence->overlap))
                          .c_str()
                    : "baseline");
    std::printf("%5s %5s %5s %10s %9s %14s %10s %10s %11s %11s %8s\n", "T", "o", "state", "scored",
                "words", "NLL (nats)", "token ppl", "word ppl", "FLOPs/tok", "+LM head", "time s");
    for (const auto& r : rows)
        std::printf("%5d %5d %5s %10lld %9lld %14.4f %10.4f %10.4f %11.3e %11.3e %8.2f\n",
                    r.windows.window, r.windows.overlap, recurrent ? (r.state ? "on" : "off") : "-",
                    static_cast<long long>(r.scored), static_cast<long long>(r.words), r.nll,
                    r.tokenPpl(), r.wordPpl(), engine::flopsPerToken(info.config, r.windows, false),
                    engine::flopsPerToken(info.config, r.windows, true), r.seconds);
    if (recurrent) {
        std::printf("\nby window position (mean NLL in nats; attention on the state slot)\n");
        std::printf("%5s %5s %5s %8s %10s %12s %10s\n", "T", "o", "state", "band", "tokens",
                    "mean NLL", "slot attn");
        for (const auto& r : rows)
            for (const auto& b : r.bands) {
                char mass[16] = "-";
                if (r.state && b.slotMassCount)
                    std::snprintf(mass, sizeof(mass), "%.4f", b.meanSlotMass());
                std::printf("%5d %5d %5s %8s %10lld %12.5f %10s\n", r.windows.window,
                            r.windows.overlap, r.state ? "on" : "off", bandName(b).c_str(),
                            static_cast<long long>(b.tokens), b.meanNll(), mass);
            }
    }
    return 0;
}

} // namespace baton::cli
