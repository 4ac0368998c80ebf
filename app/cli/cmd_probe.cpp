#include "cli_support.h"
#include "commands.h"
#include "curriculum_options.h"
#include "recurrence_options.h"
#include "terminal_progress.h"

#include <baton/engine/model.h>
#include <baton/engine/probe.h>
#include <baton/engine/synthetic.h>

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

void printSyntheticCurve(const engine::SyntheticEvaluation& e) {
    std::printf("accuracy +- standard error by distance (chance %.4f; %d sequences of %d "
                "windows)\n",
                e.chance, e.sequences, e.windows);
    std::vector<std::string> states;
    std::vector<int> distances;
    for (const auto& c : e.cells) {
        if (std::find(states.begin(), states.end(), c.state) == states.end())
            states.push_back(c.state);
        if (std::find(distances.begin(), distances.end(), c.distance) == distances.end())
            distances.push_back(c.distance);
    }
    std::printf("%-6s", "state");
    for (int d : distances)
        std::printf("  %17s", ("d = " + std::to_string(d)).c_str());
    std::printf("\n");
    for (const auto& s : states) {
        std::printf("%-6s", s.c_str());
        for (const auto& c : e.cells)
            if (c.state == s)
                std::printf("  %7.3f +- %5.3f", c.accuracy(), c.accuracyStdError());
        std::printf("\n");
    }
}

// baton-cli probe --synthetic: the synthetic memory task (synthetic.h).
int runSyntheticProbe(const std::vector<std::string>& argv) {
    Args args("probe --synthetic",
              "The synthetic memory task: can a recurrent state carry a fact at all? Trains a "
              "small model from scratch on sequences of windows holding facts \"SET k v\" and "
              "questions: every fact is asked about later in its own window (\"ASK k v\", d = 0, "
              "the control: a model that can copy gets it right) and d windows later (\"RECALL k "
              "v\": a baseline is at chance, 1 / values), as a baseline or with the recurrence "
              "module (the switches below, as for baton-cli train), then scores the answer by "
              "distance. The defaults are the settings of the models README's study. A run in "
              "--out resumes where it stopped and is skipped when finished. With --model, "
              "evaluates a synthetic model that a run made (RUN/model).");
    args.flag("synthetic", "Run the synthetic task (this help)")
        .option("out", "DIR", "The run's folder (train and evaluate)")
        .option("model", "DIR", "Only evaluate this synthetic model (a run's RUN/model)")
        .option("name", "NAME", "A name for the design in the report", "")
        .option("mode", "baseline|recurrent", "Without or with the recurrence module", "recurrent")
        .option("window", "T", "Task: tokens per window", "64")
        .option("keys", "N", "Task: keys", "64")
        .option("values", "N", "Task: values (the alternatives)", "16")
        .option("filler-words", "N", "Task: filler words of the grammar", "32")
        .option("facts", "N", "Task: facts per window", "2")
        .option("distances", "D[,D...]", "Task: distances in windows", "0,1,2,4,8")
        .option("gap", "N", "Task: filler tokens at least between two items", "2")
        .flag("ask-once", "Task: ask about each fact once, at a distance drawn from all of "
                          "--distances (by default every fact is asked about in its own window "
                          "and once more at a positive distance)")
        .flag("fit-distances",
              "Task: a fact's later question takes a distance that lands inside the "
              "sequence (short sequences ask as many memory questions as long ones)")
        .flag("no-recall-marker", "Task: questions about a fact of an earlier window read "
                                  "ASK too (by default they read RECALL)")
        .option("layers", "N", "Model: blocks", "2")
        .option("heads", "N", "Model: attention heads", "2")
        .option("embd", "N", "Model: width", "64")
        .option("bptt-windows", "W", "Training: windows per sequence", "10")
        .option("stage-accuracy", "X",
                "Curriculum: the accuracy (state on) at the largest distance a stage's "
                "sequences ask about that ends the stage",
                "0.9")
        .option("stage-check-every", "N", "Curriculum: steps between a stage's checks", "100")
        .option("stage-check-sequences", "N", "Curriculum: fresh sequences a check scores", "200")
        .option("batch", "B", "Training: sequences per step", "8")
        .option("steps", "N", "Training: steps", "3000")
        .option("lr", "X", "Training: peak learning rate (cosine to a tenth)", "2e-3")
        .option("warmup", "N", "Training: warm-up steps", "100")
        .option("loss", "answers|all", "Training: score the answers only, or every token",
                "answers")
        .option("seed", "N", "Training: seed of the initialisation and the data", "1")
        .option("eval-sequences", "N", "Evaluation: sequences", "1000")
        .option("eval-windows", "N", "Evaluation: windows per sequence (0: max distance + 2)", "0")
        .option("eval-seed", "N", "Evaluation: seed of its sequences", "1094713409")
        .option("threads", "N", "Compute threads (default: all cores)", "0")
        .flag("json", "Print a JSON object (the report)");
    addDeviceOption(args);
    addRecurrenceOptions(args);
    addCurriculumOptions(args, "Curriculum: the most steps a stage takes (0: no budget, "
                               "its checks alone end it)");
    if (!args.parse(argv))
        return 0;
    if (!args.positional().empty())
        throw UsageError("unexpected argument " + args.positional().front());
    engine::initializeRuntime(static_cast<int>(args.getInt("threads", 0, 1024)));
    if (args.has("model") == args.has("out"))
        throw UsageError("give either --out DIR (train and evaluate) or --model DIR (evaluate)");
    const int sequences = int(args.getInt("eval-sequences", 1, 10000000));
    const int windows = int(args.getInt("eval-windows", 0, 100000));
    const auto evalSeed = static_cast<uint64_t>(args.getInt("eval-seed", 0, INT64_MAX));
    if (args.has("model")) {
        auto e = engine::evaluateSyntheticModel(args.get("model"), sequences, windows, evalSeed,
                                                args.get("device"));
        check(e);
        if (args.has("json")) {
            Json out;
            out["model"] = args.get("model");
            out.update(Json::parse(engine::syntheticEvaluationJson(*e)));
            std::cout << out.dump(2) << "\n";
        } else {
            printSyntheticCurve(*e);
        }
        return 0;
    }

    engine::SyntheticRunConfig c;
    c.outDir = args.get("out");
    c.design = args.get("name");
    c.device = args.get("device");
    engine::SyntheticTask& t = c.task;
    t.window = int(args.getInt("window", 6, 65536));
    t.keys = int(args.getInt("keys", 1, 100000));
    t.values = int(args.getInt("values", 2, 100000));
    t.fillerWords = int(args.getInt("filler-words", 1, 100000));
    t.fillerSuccessors = std::min(t.fillerWords, 3);
    t.factsPerWindow = int(args.getInt("facts", 1, 10000));
    t.distances.clear();
    for (int64_t d : args.getIntList("distances", 0, 1000))
        t.distances.push_back(int(d));
    t.askTwice = !args.has("ask-once");
    t.recallMarker = !args.has("no-recall-marker");
    t.fitDistances = args.has("fit-distances");
    t.gap = int(args.getInt("gap", 0, 1000));
    c.layers = int(args.getInt("layers", 1, 256));
    c.heads = int(args.getInt("heads", 1, 256));
    c.embd = int(args.getInt("embd", 1, 16384));
    const std::string mode = args.get("mode");
    if (mode != "baseline" && mode != "recurrent")
        throw UsageError("--mode must be baseline or recurrent");
    if (mode == "recurrent") {
        engine::RecurrenceConfig r = recurrenceFromArgs(args);
        r.window = t.window; // as the run will record it
        c.recurrence = r;
    }
    if (c.design.empty())
        c.design = c.recurrence ? engine::describeRecurrence(*c.recurrence) : "baseline";
    c.bpttWindows = int(args.getInt("bptt-windows", 1, 100000));
    const CurriculumOptions curriculum = curriculumFromArgs(args, c.bpttWindows);
    c.curriculum = curriculum.windows;
    c.stageSteps = curriculum.stageSteps;
    c.mixShorter = curriculum.mixShorter;
    c.stageAccuracy = args.getDouble("stage-accuracy", 1e-9, 1);
    c.stageCheckEvery = int(args.getInt("stage-check-every", 1, 100000000));
    c.stageCheckSequences = int(args.getInt("stage-check-sequences", 1, 1000000));
    c.batch = int(args.getInt("batch", 1, 100000));
    c.steps = args.getInt("steps", 1, INT64_MAX / 2);
    c.lr = args.getDouble("lr", 1e-12, 1);
    c.warmupSteps = int(args.getInt("warmup", 0, 100000000));
    const std::string loss = args.get("loss");
    if (loss != "answers" && loss != "all")
        throw UsageError("--loss must be answers or all");
    c.lossOnAllTokens = loss == "all";
    c.seed = static_cast<uint64_t>(args.getInt("seed", 0, INT64_MAX));
    c.evalSequences = sequences;
    c.evalWindows = windows;
    c.evalSeed = evalSeed;
    if (c.recurrence)
        if (c.recurrence->insertBlock + c.recurrence->readBlocks > c.layers)
            throw UsageError("--insert-block and --read-blocks run past --layers");

    const bool json = args.has("json");
    int64_t lastShown = 0;
    auto onEvent = [&](const engine::SyntheticEvent& e) {
        using K = engine::SyntheticEvent::Kind;
        if (e.kind == K::Info)
            std::cerr << e.message << "\n";
        else if (e.kind == K::Step &&
                 (e.step == 1 || e.step - lastShown >= 50 || e.step == e.totalSteps)) {
            lastShown = e.step;
            std::fprintf(stderr, "step %lld/%lld  loss %.4f  %.0f tok/s\n",
                         static_cast<long long>(e.step), static_cast<long long>(e.totalSteps),
                         e.loss, e.tokensPerSecond);
        }
        return true;
    };
    auto report = engine::runSynthetic(c, onEvent);
    check(report);
    if (json) {
        std::cout << engine::syntheticReportJson(*report);
        return 0;
    }
    std::printf("%s: %lld + %lld parameters, %lld steps, %.0f training tokens/s, %.0f "
                "evaluation tokens/s\n",
                c.design.c_str(), static_cast<long long>(report->parameters),
                static_cast<long long>(report->moduleParameters),
                static_cast<long long>(report->steps), report->trainTokensPerSecond,
                report->evaluation.tokensPerSecond);
    for (const auto& st : report->stages) {
        std::printf("curriculum: %d window%s from step %lld", st.windows,
                    st.windows == 1 ? "" : "s", static_cast<long long>(st.startStep + 1));
        if (st.accuracy >= 0)
            std::printf(", passed with %.3f at d = %d", st.accuracy, st.distance);
        std::printf("\n");
    }
    printSyntheticCurve(report->evaluation);
    std::printf("model: %s\n", report->modelDir.c_str());
    return 0;
}

} // namespace

int runProbe(const std::vector<std::string>& argv) {
    if (std::find(argv.begin(), argv.end(), "--synthetic") != argv.end())
        return runSyntheticProbe(argv);
    Args args("probe",
              "The memory probe: does the model remember a fact from an earlier window? Each "
              "episode states a fact in ordinary text of the books (\"Mr. Crane hid the key in "
              "the cellar.\") and asks for it d windows later (\"The key had been hidden in "
              "the\"); the model's answer is the likeliest of eight alternatives (chance 1/8). "
              "A baseline cannot see a fact from an earlier window (it must be at chance for "
              "d >= 1); a recurrent model can only know it through its state. Without --model, "
              "probes the bundled baton-mini and its baseline twin. Use books the models were "
              "not trained on. --synthetic runs the synthetic memory task instead (see "
              "baton-cli probe --synthetic --help).");
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
