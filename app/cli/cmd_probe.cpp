#include "cli_support.h"
#include "commands.h"
#include "terminal_progress.h"

#include <baton/engine/probe.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <iostream>

namespace baton::cli {

namespace {

using Json = nlohmann::ordered_json;

// The baseline twin of the bundled default model.
constexpr const char* kDefaultBaseline = "baton-mini-baseline";

struct Probed {
    std::string role; // "model" or "baseline"
    std::string path;
    engine::ProbeResult result;
};

} // namespace

int runProbe(const std::vector<std::string>& argv) {
    Args args("probe",
              "The memory probe: does the model remember a fact from an earlier window? Each "
              "episode states a fact in ordinary text of the books (\"Mr. Crane hid the key in "
              "the cellar.\") and asks for it d windows later (\"The key had been hidden in "
              "the\"); the model's answer is the likeliest of eight alternatives (chance 1/8). "
              "A baseline cannot see a fact from an earlier window (it must be at chance for "
              "d >= 1); a recurrent model can only know it through its state. Without --model, "
              "probes the bundled baton-mini and its baseline twin. Use books the models were "
              "not trained on.");
    addModelOptions(args);
    args.option("baseline", "DIR",
                "A baseline model to probe beside it (default: the bundled baseline twin when "
                "--model is not given)")
        .option("distances", "D[,D...]", "Distances in windows between fact and question",
                "0,1,2,4")
        .option("episodes", "N", "Episodes per distance", "200")
        .option("seed", "N", "Seed of the passages, facts and answers", "1")
        .option("state", "S[,S...]",
                "For a recurrent model, the states its question window receives: on, off, "
                "mean (over the episodes), far and shuffled (another episode's state)",
                "on,off,shuffled")
        .option("window", "T", "Window size (default: the model's)", "0")
        .option("overlap", "O", "Overlap (default: the model's)", "0")
        .flag("json", "Print a JSON object")
        .positionals("BOOK", "UTF-8 text files the models were not trained on", 1, 1000);
    addUnwrapOption(args);
    if (!args.parse(argv))
        return 0;
    const std::vector<std::string> texts = readTexts(args);

    engine::ProbeOptions options;
    options.distances.clear();
    for (int64_t d : args.getIntList("distances", 0, 64))
        options.distances.push_back(static_cast<int>(d));
    options.episodes = static_cast<int>(args.getInt("episodes", 1, 100000));
    options.seed = static_cast<uint64_t>(args.getInt("seed", 0, INT64_MAX));
    options.states.clear();
    for (const auto& name : args.getList("state")) {
        auto s = engine::parseStateSource(name);
        if (!s)
            throw UsageError("--state: " + s.error().message);
        if (std::find(options.states.begin(), options.states.end(), *s) == options.states.end())
            options.states.push_back(*s);
    }
    options.windows.window = static_cast<int>(args.getInt("window", 0, 65536));
    options.windows.overlap = static_cast<int>(args.getInt("overlap", 0, 65535));

    std::vector<Probed> probed;
    const auto model = loadModel(args);
    std::string baselineDir = args.has("baseline") ? args.get("baseline") : "";
    if (!args.has("model") && baselineDir.empty())
        baselineDir = bundledModelDir(kDefaultBaseline);
    auto run = [&](const std::shared_ptr<engine::Model>& m, const std::string& role) {
        std::cerr << "probing " << m->info().path << "\n";
        TerminalProgress bar("probe " + role,
                             double(options.episodes) * double(options.distances.size()),
                             "episodes");
        options.progress = [&](int64_t done, int64_t total) {
            bar.update(total > 0 ? double(done) / double(total) : 1.0,
                       "episode " + std::to_string(done) + " of " + std::to_string(total));
            return true;
        };
        auto r = engine::runProbe(*m, texts, options);
        bar.finish();
        check(r);
        probed.push_back({role, m->info().path, *r});
    };
    run(model, "model");
    // The baseline reads the same windows as the model it is compared with.
    options.windows = probed.front().result.windows;
    if (!baselineDir.empty()) {
        auto baseline = loadModelAt(baselineDir, args);
        if (baseline->recurrent())
            throw UsageError("--baseline: " + baselineDir + " is a recurrent model");
        run(baseline, "baseline");
    }

    const double chance = probed.front().result.chance;
    if (args.has("json")) {
        Json out;
        out["books"] = args.positional();
        out["unwrap"] = args.has("unwrap");
        out["episodes"] = options.episodes;
        out["seed"] = options.seed;
        out["chance"] = chance;
        auto& models = out["models"] = Json::array();
        for (const auto& p : probed) {
            Json j;
            j["role"] = p.role;
            j["path"] = p.path;
            j["recurrent"] = p.result.recurrent;
            j["window"] = p.result.windows.window;
            j["overlap"] = p.result.windows.overlap;
            auto& cells = j["results"] = Json::array();
            for (const auto& c : p.result.cells) {
                Json jc;
                jc["distance"] = c.distance;
                jc["state"] = p.result.recurrent ? engine::stateSourceName(c.state) : "none";
                jc["episodes"] = c.episodes;
                jc["correct"] = c.correct;
                jc["accuracy"] = c.accuracy();
                jc["accuracy_std_error"] = c.accuracyStdError();
                jc["mean_logprob"] = c.meanLogProb;
                jc["mean_share"] = c.meanShare;
                cells.push_back(jc);
            }
            models.push_back(j);
        }
        std::cout << out.dump(2) << "\n";
        return 0;
    }

    std::printf("memory probe: %d episodes per distance, %d alternatives (chance %.3f)\n",
                options.episodes, int(1.0 / chance + 0.5), chance);
    std::printf("accuracy +- standard error (mean probability of the right answer among the "
                "alternatives)\n");
    std::printf("%-9s %-9s %5s %5s", "model", "state", "T", "o");
    for (int d : options.distances)
        std::printf("  %24s", ("d = " + std::to_string(d)).c_str());
    std::printf("\n");
    for (const auto& p : probed) {
        std::vector<engine::StateSource> states;
        for (const auto& c : p.result.cells)
            if (std::find(states.begin(), states.end(), c.state) == states.end())
                states.push_back(c.state);
        for (auto state : states) {
            std::printf("%-9s %-9s %5d %5d", p.role.c_str(),
                        p.result.recurrent ? engine::stateSourceName(state) : "-",
                        p.result.windows.window, p.result.windows.overlap);
            for (const auto& c : p.result.cells)
                if (c.state == state)
                    std::printf("  %6.3f +- %5.3f (%6.3f)", c.accuracy(), c.accuracyStdError(),
                                c.meanShare);
            std::printf("\n");
        }
    }
    for (const auto& p : probed)
        std::printf("%s: %s\n", p.role.c_str(), p.path.c_str());
    return 0;
}

} // namespace baton::cli
