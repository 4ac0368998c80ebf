// The synthetic memory task's sequences and its report files (torch-free; the
// training and evaluation are in synthetic.cpp).
#include "baton/engine/sampling.h"
#include "baton/engine/synthetic.h"
#include "probe/synthetic_stages.h"
#include "training/curriculum.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/json.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace baton::engine {

namespace {

constexpr int kItemLength = 3; // SET k v / ASK k v

uint64_t mix(uint64_t a, uint64_t b) {
    return a * 0x9E3779B97F4A7C15ULL ^ (b + 0x7F4A7C15ULL + (a << 6) + (a >> 2));
}

// The grammar's successor table: successors[w] lists the words that may follow w.
std::vector<std::vector<int>> fillerGrammar(const SyntheticTask& t) {
    Rng rng(t.grammarSeed);
    std::vector<std::vector<int>> out(size_t(t.fillerWords));
    for (auto& next : out) {
        std::vector<int> all(size_t(t.fillerWords));
        std::iota(all.begin(), all.end(), 0);
        for (int i = 0; i < t.fillerSuccessors; ++i) {
            const size_t j = size_t(i) + size_t(rng.next() % uint64_t(t.fillerWords - i));
            std::swap(all[size_t(i)], all[j]);
            next.push_back(all[size_t(i)]);
        }
    }
    return out;
}

} // namespace

int SyntheticTask::maxDistance() const {
    return distances.empty() ? 0 : *std::max_element(distances.begin(), distances.end());
}

SyntheticVocab syntheticVocab(const SyntheticTask& t) {
    SyntheticVocab v;
    if (t.recallMarker) {
        v.recall = 3;
        v.firstKey = 4;
    }
    v.firstValue = v.firstKey + t.keys;
    v.firstFiller = v.firstValue + t.values;
    v.size = v.firstFiller + t.fillerWords;
    return v;
}

Result<void> validateSyntheticTask(const SyntheticTask& t, int windows) {
    auto bad = [](const std::string& what) {
        return makeError(ErrorCode::InvalidArgument, "synthetic task: " + what);
    };
    if (t.keys < 1 || t.values < 2 || t.fillerWords < 1 || t.fillerSuccessors < 1 ||
        t.fillerSuccessors > t.fillerWords)
        return bad("needs keys >= 1, values >= 2, filler words >= 1 and 1 <= successors <= "
                   "filler words");
    if (t.keys > 100000 || t.values > 100000 || t.fillerWords > 100000)
        return bad("at most 100000 keys, values and filler words");
    if (t.factsPerWindow < 1)
        return bad("a window needs at least one fact");
    if (t.distances.empty())
        return bad("no distances");
    for (int d : t.distances)
        if (d < 0 || d > 1000)
            return bad("distances must be in [0, 1000]");
    if (t.gap < 0 || t.gap > 1000)
        return bad("the gap between items must be in [0, 1000]");
    // The most a window can hold: its facts, a question about each of them (asked twice)
    // and one about every fact of the windows at each distance back.
    std::vector<int> distinct = t.distances;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const int64_t positive =
        int64_t(std::count_if(distinct.begin(), distinct.end(), [](int d) { return d > 0; }));
    const int64_t questionsPerFact =
        t.askTwice ? 1 + std::max<int64_t>(positive, 0) : int64_t(distinct.size());
    const int64_t most = int64_t(t.factsPerWindow) * (1 + questionsPerFact);
    if (kItemLength * most + int64_t(t.gap) * (most - 1) > t.window)
        return bad("a window of " + std::to_string(t.window) + " tokens cannot hold " +
                   std::to_string(t.factsPerWindow) + " facts and " +
                   std::to_string(most - t.factsPerWindow) + " questions of 3 tokens, " +
                   std::to_string(t.gap) + " filler tokens apart");
    if (windows < 1)
        return bad("a sequence needs at least one window");
    if (int64_t(t.keys) < int64_t(windows) * t.factsPerWindow)
        return bad(std::to_string(t.keys) + " keys are too few for " +
                   std::to_string(t.factsPerWindow) + " facts in each of " +
                   std::to_string(windows) + " windows (a key is stated once per sequence)");
    return {};
}

SyntheticSequence makeSyntheticSequence(const SyntheticTask& t, int windows, uint64_t seed) {
    const SyntheticVocab v = syntheticVocab(t);
    const auto grammar = fillerGrammar(t);
    Rng rng(mix(seed, 0x41));
    const int64_t T = t.window;
    SyntheticSequence out;
    out.tokens.assign(size_t(windows * T), 0);

    // Keys for the whole sequence: distinct. Each fact gets a value and the distance
    // it will be asked at (asked in window n + d when that window exists).
    std::vector<int> keys(size_t(t.keys));
    std::iota(keys.begin(), keys.end(), 0);
    for (size_t i = 0; i < size_t(windows * t.factsPerWindow); ++i)
        std::swap(keys[i], keys[i + size_t(rng.next() % uint64_t(keys.size() - i))]);
    struct Fact {
        int key = 0, value = 0, distance = 0; // distance: of the question in a later window
    };
    // With askTwice, every fact is also asked about in its own window, and the later
    // question's distance is drawn from the positive distances (if there are any).
    std::vector<int> later = t.distances;
    if (t.askTwice) {
        later.erase(std::remove(later.begin(), later.end(), 0), later.end());
        if (later.empty())
            later.push_back(0);
    }
    std::vector<std::vector<Fact>> facts(static_cast<size_t>(windows));
    for (int n = 0; n < windows; ++n)
        for (int i = 0; i < t.factsPerWindow; ++i) {
            Fact f;
            f.key = keys[size_t(n * t.factsPerWindow + i)];
            f.value = int(rng.next() % uint64_t(t.values));
            if (t.fitDistances) {
                std::vector<int> fit;
                for (int d : later)
                    if (n + d < windows)
                        fit.push_back(d);
                const uint64_t draw = rng.next();
                f.distance = fit.empty() ? 0 : fit[draw % fit.size()];
            } else {
                f.distance = later[rng.next() % later.size()];
            }
            facts[size_t(n)].push_back(f);
        }

    int filler = int(rng.next() % uint64_t(t.fillerWords));
    for (int n = 0; n < windows; ++n) {
        // The window's items: its facts, and the questions about the facts whose
        // distance lands here, in random order with a question at d = 0 after its fact.
        struct Item {
            bool question = false;
            int window = 0, fact = 0; // the fact stated or asked about
        };
        std::vector<Item> items;
        for (int i = 0; i < t.factsPerWindow; ++i)
            items.push_back({false, n, i});
        for (int m = 0; m <= n; ++m)
            for (int i = 0; i < t.factsPerWindow; ++i)
                if (m + facts[size_t(m)][size_t(i)].distance == n ||
                    (t.askTwice && m == n && facts[size_t(m)][size_t(i)].distance != 0))
                    items.push_back({true, m, i});
        for (size_t i = items.size(); i > 1; --i)
            std::swap(items[i - 1], items[rng.next() % i]);
        for (size_t i = 0; i < items.size(); ++i)
            if (items[i].question && items[i].window == n)
                for (size_t j = i + 1; j < items.size(); ++j)
                    if (!items[j].question && items[j].fact == items[i].fact) {
                        std::swap(items[i], items[j]);
                        break;
                    }
        // Filler between the items: `gap` tokens, and a random composition of the rest.
        const int64_t free =
            T - kItemLength * int64_t(items.size()) - int64_t(t.gap) * (int64_t(items.size()) - 1);
        std::vector<int64_t> cuts;
        for (size_t i = 0; i < items.size(); ++i)
            cuts.push_back(int64_t(rng.next() % uint64_t(free + 1)));
        std::sort(cuts.begin(), cuts.end());
        int64_t at = n * T, previousCut = 0;
        auto fill = [&](int64_t count) {
            for (int64_t i = 0; i < count; ++i) {
                out.tokens[size_t(at++)] = v.firstFiller + filler;
                const auto& next = grammar[size_t(filler)];
                filler = next[rng.next() % next.size()];
            }
        };
        for (size_t i = 0; i < items.size(); ++i) {
            fill(cuts[i] - previousCut + (i > 0 ? t.gap : 0));
            previousCut = cuts[i];
            const Item& item = items[i];
            const Fact& f = facts[size_t(item.window)][size_t(item.fact)];
            out.tokens[size_t(at++)] =
                !item.question ? v.set : (item.window == n || v.recall < 0 ? v.ask : v.recall);
            out.tokens[size_t(at++)] = v.firstKey + f.key;
            if (item.question)
                out.questions.push_back({at, n - item.window, f.value});
            out.tokens[size_t(at++)] = v.firstValue + f.value;
        }
        fill(free - previousCut);
    }
    return out;
}

std::string syntheticTaskJson(const SyntheticTask& t) {
    nlohmann::ordered_json j;
    j["format"] = "baton-synthetic-task";
    j["format_version"] = 1;
    j["window"] = t.window;
    j["keys"] = t.keys;
    j["values"] = t.values;
    j["filler_words"] = t.fillerWords;
    j["filler_successors"] = t.fillerSuccessors;
    j["facts_per_window"] = t.factsPerWindow;
    j["distances"] = t.distances;
    j["ask_twice"] = t.askTwice;
    j["recall_marker"] = t.recallMarker;
    if (t.fitDistances) // absent in tasks without, so that their identities stay
        j["fit_distances"] = true;
    j["gap"] = t.gap;
    j["grammar_seed"] = t.grammarSeed;
    return j.dump();
}

std::string syntheticTaskIdentity(const SyntheticTask& t) {
    return "synthetic-" + hashHex(syntheticTaskJson(t));
}

double SyntheticCell::accuracyStdError() const {
    if (questions < 2)
        return 0;
    const double p = accuracy();
    return std::sqrt(p * (1 - p) / double(questions));
}

Result<void> validateSyntheticRunConfig(const SyntheticRunConfig& c) {
    auto bad = [](const std::string& what) {
        return makeError(ErrorCode::InvalidArgument, "synthetic run: " + what);
    };
    if (c.outDir.empty())
        return bad("no output folder");
    const int evalWindows = c.evalWindows > 0 ? c.evalWindows : c.task.maxDistance() + 2;
    if (auto r = validateSyntheticTask(c.task, std::max(c.bpttWindows, evalWindows)); !r)
        return r;
    if (c.layers < 1 || c.heads < 1 || c.embd < c.heads || c.embd % c.heads != 0)
        return bad("the model needs layers >= 1 and a width that is a multiple of the heads");
    if (c.bpttWindows < 1 || c.batch < 1 || c.steps < 1 || c.evalSequences < 1)
        return bad("bptt windows, batch, steps and evaluation sequences must be at least 1");
    if (!(c.lr > 0) || c.lr > 1 || c.warmupSteps < 0 || c.minLrRatio < 0 || c.minLrRatio > 1 ||
        c.weightDecay < 0 || c.clipNorm < 0 || c.checkpointEvery < 1)
        return bad("learning rate in (0, 1], warm-up, decay and clipping not negative");
    if (const auto why = curriculumProblem(c.curriculum, c.bpttWindows, c.mixShorter); !why.empty())
        return bad(why);
    if (!c.curriculum.empty() &&
        (!(c.stageAccuracy > 0) || c.stageAccuracy > 1 || c.stageSteps < 0 ||
         c.stageCheckEvery < 1 || c.stageCheckSequences < 1))
        return bad("a stage's accuracy in (0, 1], its budget not negative, its checks every "
                   "step or more on one sequence or more");
    return {};
}

namespace {

using OJson = nlohmann::ordered_json;

OJson recurrenceJson(const RecurrenceConfig& r) {
    OJson j;
    j["insert_block"] = r.insertBlock;
    j["ffn_width"] = r.ffnWidth;
    j["ffn_depth"] = r.ffnDepth;
    j["residual"] = r.residual;
    j["slots"] = r.slots;
    j["pool_last"] = r.poolLast;
    j["read_blocks"] = r.readBlocks;
    j["write"] = r.writeTokens ? "tokens" : "pool";
    j["gate"] = r.gate;
    if (r.memoryTokens) // absent in runs without, as before memory tokens
        j["memory_tokens"] = true;
    j["description"] = describeRecurrence(r);
    return j;
}

} // namespace

std::string syntheticEvaluationJson(const SyntheticEvaluation& e) {
    OJson ev;
    ev["sequences"] = e.sequences;
    ev["windows"] = e.windows;
    ev["seed"] = e.seed;
    ev["chance"] = e.chance;
    ev["tokens_per_s"] = e.tokensPerSecond;
    auto& cells = ev["results"] = OJson::array();
    for (const auto& cell : e.cells) {
        OJson jc;
        jc["distance"] = cell.distance;
        jc["state"] = cell.state;
        jc["questions"] = cell.questions;
        jc["correct"] = cell.correct;
        jc["accuracy"] = cell.accuracy();
        jc["accuracy_std_error"] = cell.accuracyStdError();
        jc["mean_probability"] = cell.meanProbability;
        cells.push_back(jc);
    }
    return ev.dump();
}

std::string syntheticReportJson(const SyntheticReport& r) {
    const SyntheticRunConfig& c = r.config;
    OJson j;
    j["format"] = "baton-synthetic";
    j["format_version"] = 1;
    j["design"] = c.design;
    j["task"] = OJson::parse(syntheticTaskJson(c.task));
    j["task_identity"] = syntheticTaskIdentity(c.task);
    OJson model;
    model["layers"] = c.layers;
    model["heads"] = c.heads;
    model["embd"] = c.embd;
    model["parameters"] = r.parameters;
    model["module_parameters"] = r.moduleParameters;
    j["model"] = model;
    j["recurrence"] = c.recurrence ? recurrenceJson(*c.recurrence) : OJson();
    OJson train;
    train["seed"] = c.seed;
    train["bptt_windows"] = c.bpttWindows;
    train["batch"] = c.batch;
    train["steps"] = c.steps;
    train["lr"] = c.lr;
    train["warmup_steps"] = c.warmupSteps;
    train["min_lr_ratio"] = c.minLrRatio;
    train["weight_decay"] = c.weightDecay;
    train["clip"] = c.clipNorm;
    train["loss"] = c.lossOnAllTokens ? "all" : "answers";
    train["device"] = c.device;
    if (!c.curriculum.empty()) { // absent in runs without one, as before curricula
        OJson cur;
        cur["windows"] = c.curriculum;
        cur["stage_accuracy"] = c.stageAccuracy;
        cur["stage_steps"] = c.stageSteps;
        cur["check_every"] = c.stageCheckEvery;
        cur["check_sequences"] = c.stageCheckSequences;
        train["curriculum"] = cur;
    }
    if (c.mixShorter > 0)
        train["mix_shorter"] = c.mixShorter;
    if (!r.stages.empty())
        train["stages"] = syntheticStagesJson(r.stages);
    train["steps_done"] = r.steps;
    train["tokens"] = r.trainTokens;
    train["seconds"] = r.trainSeconds;
    train["tokens_per_s"] = r.trainTokensPerSecond;
    train["final_loss"] = r.finalLoss;
    j["training"] = train;
    j["evaluation"] = OJson::parse(syntheticEvaluationJson(r.evaluation));
    j["model_dir"] = r.modelDir;
    return j.dump(2) + "\n";
}

nlohmann::ordered_json syntheticStagesJson(const std::vector<SyntheticStage>& stages) {
    auto out = OJson::array();
    for (const auto& st : stages)
        out.push_back({{"windows", st.windows},
                       {"start_step", st.startStep},
                       {"accuracy", st.accuracy},
                       {"distance", st.distance}});
    return out;
}

Result<std::vector<SyntheticStage>> readSyntheticStages(const json::Json& object, const char* key) {
    std::vector<SyntheticStage> out;
    const auto it = object.find(key);
    if (it == object.end())
        return out;
    auto bad = [&](const std::string& what) {
        return makeError(ErrorCode::BadConfig, std::string(key) + ": " + what);
    };
    if (!it->is_array())
        return bad("must be an array");
    for (const auto& x : *it) {
        SyntheticStage stage;
        json::FieldReader f(x);
        f.integer("windows", 1, 1 << 30, stage.windows, f.Required);
        f.integer("start_step", 0, INT64_MAX, stage.startStep, f.Required);
        f.number("accuracy", -1, 1, stage.accuracy);
        f.integer("distance", 0, 1 << 30, stage.distance);
        if (!f.ok())
            return bad(f.error());
        out.push_back(stage);
    }
    return out;
}

Result<std::optional<SyntheticReport>> readSyntheticReport(const std::string& folder) {
    const std::string path = files::join(folder, "synthetic.json");
    if (!files::exists(path))
        return std::optional<SyntheticReport>();
    auto parsed = readJsonFile(path, size_t(1) << 22);
    if (!parsed)
        return parsed.error();
    const json::Json& j = *parsed;
    auto bad = [&](const std::string& what) {
        return makeError(ErrorCode::BadConfig, path + ": " + what);
    };
    if (json::stringOrEmpty(j, "format") != "baton-synthetic")
        return bad("not a synthetic task report (\"format\" must be \"baton-synthetic\")");
    int version = 0;
    json::FieldReader top(j);
    top.integer("format_version", 1, 1000, version, top.Required);
    if (!top.ok())
        return bad(top.error());
    if (version > 1)
        return makeError(ErrorCode::Unsupported,
                         path + " was written by a newer Baton (format version " +
                             std::to_string(version) + "; this build reads 1)");
    SyntheticReport r;
    SyntheticRunConfig& c = r.config;
    top.string("design", c.design);
    top.string("model_dir", r.modelDir);
    const auto object = [&](const char* key) -> const json::Json* {
        const auto it = j.find(key);
        return it != j.end() && it->is_object() ? &*it : nullptr;
    };
    const json::Json* task = object("task");
    const json::Json* model = object("model");
    const json::Json* train = object("training");
    const json::Json* eval = object("evaluation");
    if (!task || !model || !train || !eval)
        return bad("task, model, training and evaluation are required");
    json::FieldReader t(*task);
    SyntheticTask& k = c.task;
    constexpr int64_t kBig = 1 << 30;
    t.integer("window", 1, kBig, k.window, t.Required);
    t.integer("keys", 1, kBig, k.keys, t.Required);
    t.integer("values", 1, kBig, k.values, t.Required);
    t.integer("filler_words", 1, kBig, k.fillerWords, t.Required);
    t.integer("filler_successors", 1, kBig, k.fillerSuccessors, t.Required);
    t.integer("facts_per_window", 1, kBig, k.factsPerWindow, t.Required);
    t.integer("grammar_seed", 0, INT64_MAX, k.grammarSeed, t.Required);
    k.askTwice = false; // absent: asked once
    t.boolean("ask_twice", k.askTwice);
    k.recallMarker = false; // absent: every question reads ASK
    t.boolean("recall_marker", k.recallMarker);
    t.boolean("fit_distances", k.fitDistances);
    k.gap = 0; // absent: items may touch
    t.integer("gap", 0, 1000, k.gap);
    if (!t.ok())
        return bad("task: " + t.error());
    const auto d = task->find("distances");
    if (d == task->end() || !d->is_array())
        return bad("task: \"distances\" must be an array");
    k.distances.clear();
    for (const auto& x : *d) {
        if (!x.is_number_integer())
            return bad("task: \"distances\" must hold integers");
        k.distances.push_back(x.get<int>());
    }
    json::FieldReader m(*model);
    m.integer("layers", 1, kBig, c.layers, m.Required);
    m.integer("heads", 1, kBig, c.heads, m.Required);
    m.integer("embd", 1, kBig, c.embd, m.Required);
    m.integer("parameters", 0, INT64_MAX, r.parameters);
    m.integer("module_parameters", 0, INT64_MAX, r.moduleParameters);
    if (!m.ok())
        return bad("model: " + m.error());
    if (const auto rec = j.find("recurrence"); rec != j.end() && rec->is_object()) {
        RecurrenceConfig rc;
        json::FieldReader f(*rec);
        std::string write = "pool";
        f.integer("insert_block", 0, kBig, rc.insertBlock, f.Required);
        f.integer("ffn_width", 1, kBig, rc.ffnWidth);
        f.integer("ffn_depth", 0, kBig, rc.ffnDepth);
        f.boolean("residual", rc.residual);
        f.integer("slots", 1, 64, rc.slots);
        f.integer("pool_last", 0, kBig, rc.poolLast);
        f.integer("read_blocks", 1, kBig, rc.readBlocks);
        f.string("write", write);
        f.boolean("gate", rc.gate);
        f.boolean("memory_tokens", rc.memoryTokens);
        if (!f.ok())
            return bad("recurrence: " + f.error());
        rc.writeTokens = write == "tokens";
        c.recurrence = rc;
    }
    json::FieldReader tr(*train);
    std::string loss = "answers";
    tr.integer("seed", 0, INT64_MAX, c.seed);
    tr.integer("bptt_windows", 1, kBig, c.bpttWindows);
    tr.integer("batch", 1, kBig, c.batch);
    tr.integer("steps", 1, INT64_MAX, c.steps);
    tr.number("lr", 0, 1, c.lr);
    tr.string("loss", loss);
    tr.string("device", c.device); // optional: reports written before devices ran on the CPU
    tr.integer("steps_done", 0, INT64_MAX, r.steps);
    tr.integer("tokens", 0, INT64_MAX, r.trainTokens);
    tr.number("seconds", 0, 1e12, r.trainSeconds);
    tr.number("tokens_per_s", 0, 1e12, r.trainTokensPerSecond);
    tr.number("final_loss", 0, 1e6, r.finalLoss);
    tr.number("mix_shorter", 0, 1, c.mixShorter);
    if (!tr.ok())
        return bad("training: " + tr.error());
    c.lossOnAllTokens = loss == "all";
    if (const auto cur = train->find("curriculum"); cur != train->end() && cur->is_object()) {
        json::FieldReader f(*cur);
        f.number("stage_accuracy", 0, 1, c.stageAccuracy);
        f.integer("stage_steps", 0, INT64_MAX, c.stageSteps);
        f.integer("check_every", 1, kBig, c.stageCheckEvery);
        f.integer("check_sequences", 1, kBig, c.stageCheckSequences);
        f.integers("windows", 1, kBig, c.curriculum, f.Required);
        if (!f.ok())
            return bad("training curriculum: " + f.error());
    }
    auto stages = readSyntheticStages(*train, "stages");
    if (!stages)
        return bad("training " + stages.error().message);
    r.stages = std::move(*stages);
    SyntheticEvaluation& e = r.evaluation;
    json::FieldReader ev(*eval);
    ev.integer("sequences", 0, kBig, e.sequences);
    ev.integer("windows", 0, kBig, e.windows);
    ev.integer("seed", 0, INT64_MAX, e.seed);
    ev.number("chance", 0, 1, e.chance);
    ev.number("tokens_per_s", 0, 1e12, e.tokensPerSecond);
    if (!ev.ok())
        return bad("evaluation: " + ev.error());
    const auto results = eval->find("results");
    if (results == eval->end() || !results->is_array())
        return bad("evaluation: \"results\" must be an array");
    for (const auto& x : *results) {
        SyntheticCell cell;
        json::FieldReader f(x);
        f.integer("distance", 0, kBig, cell.distance, f.Required);
        f.string("state", cell.state, f.Required);
        f.integer("questions", 0, INT64_MAX, cell.questions, f.Required);
        f.integer("correct", 0, INT64_MAX, cell.correct, f.Required);
        f.number("mean_probability", 0, 1, cell.meanProbability);
        if (!f.ok())
            return bad("evaluation results: " + f.error());
        if (cell.correct > cell.questions)
            return bad("evaluation results: more correct answers than questions");
        e.cells.push_back(cell);
    }
    return std::optional<SyntheticReport>(std::move(r));
}

} // namespace baton::engine
