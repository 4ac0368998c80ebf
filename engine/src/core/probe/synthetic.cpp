// The synthetic memory task's training (synthetic.h; its evaluation is in
// synthetic_eval.cpp): a small GPT-2
// trained from scratch on the task's token ids, with the engine's own recurrence
// module, backpropagation through windows (training/bptt.h) and AdamW.
#include "baton/engine/synthetic.h"

#include "model/checkpoint.h"
#include "model/model_impl.h"
#include "probe/synthetic_eval.h"
#include "probe/synthetic_stages.h"
#include "training/bptt.h"
#include "training/curriculum.h"
#include "training/optimizer.h"
#include "training/run_progress.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/json.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <numeric>

namespace baton::engine {

namespace {

using Clock = std::chrono::steady_clock;
using OJson = nlohmann::ordered_json;

constexpr int kRecentLosses = 50;

ModelConfig modelConfigFor(const SyntheticRunConfig& c) {
    ModelConfig m;
    m.nLayer = c.layers;
    m.nHead = c.heads;
    m.nEmbd = c.embd;
    m.nInner = 4 * c.embd;
    m.nPositions = c.task.window;
    m.vocabSize = syntheticVocab(c.task).size;
    m.layerNormEps = 1e-5;
    return m;
}

// What must not change when a run resumes: everything but the evaluation's size and
// the device (the key is the report's text without training.device, as runs written
// before devices stored it).
std::string runKey(const SyntheticRunConfig& c) {
    SyntheticReport r;
    r.config = c;
    r.config.outDir.clear();
    r.config.evalSequences = 1;
    r.config.evalWindows = 0;
    r.config.evalSeed = 0;
    r.config.checkpointEvery = 1;
    auto key = nlohmann::ordered_json::parse(syntheticReportJson(r));
    key["training"].erase("device");
    return key.dump(2) + "\n";
}

// The training batches of one step (1-based), one per sequence length (curriculumWindows):
// the same for every design with this seed.
std::vector<WindowBatch> trainingBatches(const SyntheticRunConfig& c, int64_t step, int stage) {
    const std::vector<int> lengths =
        curriculumWindows(c.curriculum, c.bpttWindows, stage, c.mixShorter, c.batch, c.seed, step);
    std::vector<int> distinct = lengths;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const int64_t T = c.task.window;
    std::vector<WindowBatch> out;
    for (const int W : distinct) {
        std::vector<int64_t> members;
        for (size_t b = 0; b < lengths.size(); ++b)
            if (lengths[b] == W)
                members.push_back(int64_t(b));
        const int64_t B = int64_t(members.size());
        std::vector<int64_t> inputs(size_t(W * B * T)), targets(size_t(W * B * T), -1);
        int64_t scored = 0;
        for (int64_t i = 0; i < B; ++i) {
            const auto seq = makeSyntheticSequence(
                c.task, W,
                mixSeeds(mixSeeds(c.seed, uint64_t(step)), uint64_t(members[size_t(i)])));
            for (int64_t n = 0; n < W; ++n)
                for (int64_t p = 0; p < T; ++p)
                    inputs[size_t((n * B + i) * T + p)] = seq.tokens[size_t(n * T + p)];
            auto setTarget = [&](int64_t at) { // the prediction of token `at` of the sequence
                const int64_t from = at - 1, n = from / T, p = from % T;
                targets[size_t((n * B + i) * T + p)] = seq.tokens[size_t(at)];
                ++scored;
            };
            if (c.lossOnAllTokens) {
                for (int64_t at = 1; at < W * T; ++at)
                    setTarget(at);
            } else {
                for (const auto& q : seq.questions)
                    setTarget(q.answerAt);
            }
        }
        WindowBatch batch;
        batch.inputs = torch::tensor(inputs).view({W, B, T});
        batch.targets = torch::tensor(targets).view({W, B, T});
        batch.scored = scored;
        out.push_back(std::move(batch));
    }
    return out;
}

int64_t moduleParameterCount(Model::Impl& m) {
    int64_t n = 0;
    if (m.recurrent())
        for (const auto& p : m.recurrence->parameters())
            n += p.numel();
    return n;
}

struct Progress {
    int64_t step = 0, tokens = 0;
    double seconds = 0;
    std::deque<double> losses;          // the last kRecentLosses steps'
    std::vector<SyntheticStage> stages; // with a curriculum: the stages reached so far
    int stage() const { return stages.empty() ? 0 : int(stages.size()) - 1; }
};

std::string progressJson(const Progress& p) {
    OJson j;
    j["step"] = p.step;
    j["tokens"] = p.tokens;
    j["seconds"] = p.seconds;
    j["recent_losses"] = std::vector<double>(p.losses.begin(), p.losses.end());
    if (!p.stages.empty())
        j["stages"] = syntheticStagesJson(p.stages);
    return j.dump() + "\n";
}

Result<Progress> readProgressJson(const std::string& path) {
    auto parsed = readJsonFile(path, 1 << 20);
    if (!parsed)
        return parsed.error();
    Progress p;
    json::FieldReader f(*parsed);
    f.integer("step", 0, INT64_MAX, p.step, f.Required);
    f.integer("tokens", 0, INT64_MAX, p.tokens, f.Required);
    f.number("seconds", 0, 1e12, p.seconds, f.Required);
    if (!f.ok())
        return makeError(ErrorCode::BadConfig, path + ": " + f.error());
    if (const auto it = parsed->find("recent_losses"); it != parsed->end() && it->is_array())
        for (const auto& x : *it)
            if (x.is_number())
                p.losses.push_back(x.get<double>());
    auto stages = readSyntheticStages(*parsed, "stages");
    if (!stages)
        return makeError(ErrorCode::BadConfig, path + ": " + stages.error().message);
    p.stages = std::move(*stages);
    return p;
}

class SyntheticRun {
public:
    SyntheticRun(SyntheticRunConfig config,
                 const std::function<bool(const SyntheticEvent&)>& onEvent,
                 const CancelToken& cancel)
        : c(std::move(config))
        , m_onEvent(onEvent)
        , m_cancel(cancel)
        , m_identity(syntheticTaskIdentity(c.task)) {}

    Result<SyntheticReport> run();

private:
    bool emit(const SyntheticEvent& e) {
        const bool go = m_onEvent ? m_onEvent(e) : true;
        if (!go)
            m_cancel.cancel();
        return go;
    }
    void info(const std::string& message) {
        SyntheticEvent e;
        e.message = message;
        emit(e);
    }
    Result<void> setUp();
    void setTrainable();
    double learningRate(int64_t step) const;
    Result<void> checkpoint();
    void checkStage(Model::Impl& m, int64_t step);

    SyntheticRunConfig c;
    std::function<bool(const SyntheticEvent&)> m_onEvent;
    CancelToken m_cancel;
    std::string m_identity;
    std::shared_ptr<Model> m_model;
    std::unique_ptr<AdamOptimizer> m_opt;
    std::vector<torch::Tensor> m_netParams, m_moduleParams;
    Progress m_p;
    bool m_restored = false;
};

Result<void> SyntheticRun::setUp() {
    const std::string latest = latestCheckpoint(c.outDir);
    if (!latest.empty()) {
        LoadOptions load;
        load.mapWeights = false;
        load.device = c.device;
        auto model = loadModelWithoutTokenizer(files::join(latest, "model"), m_identity, load);
        if (!model)
            return model.error();
        m_model = *model;
        auto progress = readProgressJson(files::join(latest, "progress.json"));
        if (!progress)
            return progress.error();
        m_p = *progress;
        m_restored = true;
        info("resuming at step " + std::to_string(m_p.step));
        return {};
    }
    std::optional<RecurrenceConfig> rec = c.recurrence;
    if (rec) {
        rec->window = c.task.window;
        rec->overlap = 0;
    }
    LoadOptions onDevice;
    onDevice.device = c.device;
    auto model = createModel(modelConfigFor(c), nullptr, c.seed, onDevice, rec);
    if (!model)
        return model.error();
    m_model = *model;
    return {};
}

void SyntheticRun::setTrainable() {
    Model::Impl& m = ModelAccess::of(*m_model);
    std::vector<ParamGroup> groups;
    auto add = [&](torch::nn::Module& mod, const std::string& prefix,
                   std::vector<torch::Tensor>& list) {
        mod.train();
        ParamGroup decay{{}, 1.0, c.weightDecay}, plain{{}, 1.0, 0.0};
        for (auto& p : mod.named_parameters(true)) {
            p.value().set_requires_grad(true);
            (p.value().dim() >= 2 ? decay : plain).params.push_back({prefix + p.key(), p.value()});
            list.push_back(p.value());
        }
        groups.push_back(decay);
        groups.push_back(plain);
    };
    add(*m.net, "net.", m_netParams);
    if (m.recurrent())
        add(*m.recurrence, "rec.", m_moduleParams);
    m_opt = std::make_unique<AdamOptimizer>(groups, true, 0.9, 0.98, 1e-8);
}

double SyntheticRun::learningRate(int64_t step) const {
    if (c.warmupSteps > 0 && step <= c.warmupSteps)
        return c.lr * double(step) / double(c.warmupSteps);
    if (c.steps <= c.warmupSteps)
        return c.lr;
    const double progress =
        std::min(1.0, double(step - c.warmupSteps) / double(c.steps - c.warmupSteps));
    const double floor = c.lr * c.minLrRatio;
    return floor + (c.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

Result<void> SyntheticRun::checkpoint() {
    const std::string root = files::join(c.outDir, "checkpoints");
    files::makeDirectories(root);
    const std::string name = checkpointName(m_p.step);
    const std::string dir = files::join(root, name);
    files::removeTree(dir);
    files::makeDirectories(dir);
    if (auto r = saveModelFolder(ModelAccess::of(*m_model), files::join(dir, "model"), StDtype::F32,
                                 "", m_identity);
        !r)
        return r;
    if (auto r = m_opt->save(files::join(dir, "optimizer.safetensors")); !r)
        return r;
    if (auto r = files::writeAtomically(files::join(dir, "progress.json"), progressJson(m_p)); !r)
        return r;
    files::syncDirectory(dir);
    const std::string previous = latestCheckpoint(c.outDir);
    if (auto r = files::writeAtomically(files::join(c.outDir, "LATEST"), name + "\n"); !r)
        return r;
    if (!previous.empty() && previous != dir)
        files::removeTree(previous);
    SyntheticEvent e;
    e.kind = SyntheticEvent::Kind::Checkpoint;
    e.step = m_p.step;
    e.totalSteps = c.steps;
    e.message = dir;
    emit(e);
    return {};
}

// With a curriculum, after a step: the stage moves on when its budget is spent, or when
// a check (every stageCheckEvery steps of the stage) finds the accuracy at the largest
// distance its sequences ask about at stageAccuracy or more.
void SyntheticRun::checkStage(Model::Impl& m, int64_t step) {
    if (c.curriculum.empty() || m_p.stage() + 1 >= int(c.curriculum.size()))
        return;
    SyntheticStage& current = m_p.stages.back();
    const int64_t inStage = step - current.startStep;
    bool next = c.stageSteps > 0 && inStage >= c.stageSteps;
    if (inStage % c.stageCheckEvery == 0) {
        int distance = 0;
        for (int d : c.task.distances)
            if (d < current.windows)
                distance = std::max(distance, d);
        if (m.recurrent())
            m.refreshRecurrenceCaches(); // the forward passes below read the caches
        const SyntheticEvaluation check = evaluateSynthetic(
            m, c.task, c.stageCheckSequences, current.windows, mixSeeds(c.evalSeed, 0x57A6E));
        SyntheticCell measured;
        for (const auto& cell : check.cells)
            if (cell.distance == distance && (cell.state == "on" || cell.state == "none"))
                measured = cell;
        const double accuracy = measured.accuracy();
        char line[160];
        std::snprintf(line, sizeof line,
                      "stage %d (sequences of %d window%s) at step %lld: %lld of %lld right at "
                      "d = %d (%.3f)",
                      m_p.stage() + 1, current.windows, current.windows == 1 ? "" : "s",
                      static_cast<long long>(step), static_cast<long long>(measured.correct),
                      static_cast<long long>(measured.questions), distance, accuracy);
        info(line);
        if (accuracy >= c.stageAccuracy) {
            next = true;
            current.accuracy = accuracy;
            current.distance = distance;
        }
    }
    if (!next)
        return;
    m_p.stages.push_back({c.curriculum[size_t(m_p.stage() + 1)], step, -1, 0});
    info("stage " + std::to_string(m_p.stage() + 1) + ": sequences of " +
         std::to_string(m_p.stages.back().windows) + " windows from step " +
         std::to_string(step + 1));
}

Result<SyntheticReport> SyntheticRun::run() {
    if (auto r = validateSyntheticRunConfig(c); !r)
        return r.error();
    files::makeDirectories(c.outDir);
    const std::string runFile = files::join(c.outDir, "synthetic-run.json");
    const std::string key = runKey(c);
    if (files::exists(runFile)) {
        auto stored = files::readAll(runFile, 1 << 22);
        if (!stored)
            return stored.error();
        if (*stored != key)
            return makeError(ErrorCode::InvalidArgument,
                             c.outDir + " holds a synthetic run with other settings: choose "
                                        "another folder or repeat that run's settings");
    } else if (auto r = files::writeAtomically(runFile, key); !r) {
        return r.error();
    }

    SyntheticReport report;
    report.config = c;
    report.modelDir = files::join(c.outDir, "model");
    const std::string modelDir = report.modelDir;
    try {
        if (!files::exists(files::join(modelDir, "config.json"))) {
            if (auto r = setUp(); !r)
                return r.error();
            setTrainable();
            if (m_restored)
                if (auto r = m_opt->load(
                        files::join(latestCheckpoint(c.outDir), "optimizer.safetensors"));
                    !r)
                    return r.error();
            Model::Impl& m = ModelAccess::of(*m_model);
            const bool recurrent = m.recurrent();
            info("training " + (c.design.empty() ? std::string("a model") : c.design) + ": " +
                 std::to_string(m.net->parameterCount()) + " parameters" +
                 (recurrent ? " + " + std::to_string(moduleParameterCount(m)) + " in the module"
                            : std::string()));
            if (!c.curriculum.empty() && m_p.stages.empty())
                m_p.stages.push_back({c.curriculum.front(), 0, -1, 0});
            while (m_p.step < c.steps) {
                if (m_cancel.cancelled())
                    break;
                const auto t0 = Clock::now();
                const int64_t step = m_p.step + 1;
                const auto batches = trainingBatches(c, step, m_p.stage());
                int64_t scored = 0, tokens = 0;
                for (const auto& b : batches) {
                    scored += b.scored;
                    tokens += b.inputs.numel();
                }
                m_opt->zeroGrad();
                double nll = 0;
                for (const auto& b : batches)
                    nll +=
                        accumulateGradients(m, b, recurrent, double(std::max<int64_t>(1, scored)))
                            .nllSum;
                clipGradients(m_netParams, m_moduleParams, c.clipNorm);
                m_opt->step(learningRate(step));
                const double loss = nll / double(std::max<int64_t>(1, scored));
                if (!std::isfinite(loss))
                    return makeError(ErrorCode::Internal,
                                     "the loss is not finite at step " + std::to_string(step));
                const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
                m_p.step = step;
                m_p.tokens += tokens;
                m_p.seconds += seconds;
                m_p.losses.push_back(loss);
                while (int(m_p.losses.size()) > kRecentLosses)
                    m_p.losses.pop_front();
                SyntheticEvent e;
                e.kind = SyntheticEvent::Kind::Step;
                e.step = step;
                e.totalSteps = c.steps;
                e.loss = loss;
                e.tokensPerSecond = double(tokens) / std::max(seconds, 1e-9);
                emit(e);
                checkStage(m, step);
                if (step % c.checkpointEvery == 0 || step == c.steps || m_cancel.cancelled())
                    if (auto r = checkpoint(); !r)
                        return r.error();
            }
            if (m_p.step < c.steps) {
                if (m_p.step > 0 &&
                    latestCheckpoint(c.outDir).find(checkpointName(m_p.step)) == std::string::npos)
                    if (auto r = checkpoint(); !r)
                        return r.error();
                return makeError(ErrorCode::Cancelled, "the synthetic run was stopped at step " +
                                                           std::to_string(m_p.step) +
                                                           ": run it again to resume");
            }
            setForInference(m);
            if (auto r = saveModelFolder(m, modelDir, StDtype::F32, "", m_identity); !r)
                return r.error();
            if (auto r = files::writeAtomically(files::join(c.outDir, "training.json"),
                                                progressJson(m_p));
                !r)
                return r.error();
        }
        // The finished model: evaluate it (again, when the report is missing).
        auto progress = readProgressJson(files::join(c.outDir, "training.json"));
        if (!progress)
            return progress.error();
        m_p = *progress;
        LoadOptions load;
        load.device = c.device;
        auto model = loadModelWithoutTokenizer(modelDir, m_identity, load);
        if (!model)
            return model.error();
        Model::Impl& m = ModelAccess::of(**model);
        report.parameters = m.net->parameterCount();
        report.moduleParameters = moduleParameterCount(m);
        report.steps = m_p.step;
        report.trainTokens = m_p.tokens;
        report.trainSeconds = m_p.seconds;
        report.trainTokensPerSecond = m_p.seconds > 0 ? double(m_p.tokens) / m_p.seconds : 0;
        report.stages = m_p.stages;
        report.finalLoss = m_p.losses.empty()
                               ? 0
                               : std::accumulate(m_p.losses.begin(), m_p.losses.end(), 0.0) /
                                     double(m_p.losses.size());
        info("evaluating on " + std::to_string(c.evalSequences) + " sequences");
        report.evaluation = evaluateSynthetic(m, c.task, c.evalSequences,
                                              evalWindowsOf(c.task, c.evalWindows), c.evalSeed);
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfMemory, "out of memory in the synthetic run");
    }
    const std::string text = syntheticReportJson(report);
    if (auto r = files::writeAtomically(files::join(modelDir, "synthetic.json"), text); !r)
        return r.error();
    if (auto r = files::writeAtomically(files::join(c.outDir, "synthetic.json"), text); !r)
        return r.error();
    SyntheticEvent e;
    e.kind = SyntheticEvent::Kind::Evaluated;
    e.step = report.steps;
    e.totalSteps = c.steps;
    emit(e);
    return report;
}

} // namespace

Result<SyntheticReport> runSynthetic(const SyntheticRunConfig& config,
                                     const std::function<bool(const SyntheticEvent&)>& onEvent,
                                     const CancelToken& cancel) {
    SyntheticRun run(config, onEvent, cancel);
    return run.run();
}

} // namespace baton::engine
