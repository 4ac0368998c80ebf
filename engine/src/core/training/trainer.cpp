#include "baton/engine/training.h"

#include "baton/engine/sampling.h"
#include "baton/engine/windows.h"
#include "model/checkpoint.h"
#include "training/batches.h"
#include "training/bptt.h"
#include "training/checkpoints.h"
#include "training/curriculum.h"
#include "training/distributed.h"
#include "training/distributed_config.h"
#include "training/model_setup.h"
#include "training/optimizer.h"
#include "training/run_config.h"
#include "training/run_output.h"
#include "training/validation.h"
#include "util/files.h"
#include "util/hash.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>

namespace baton::engine {

namespace {

using Clock = std::chrono::steady_clock;

// One training run: the loop, validation and checkpoints; the model, the data, the
// configuration and the checkpoint format live in their own files.
class Run {
public:
    Run(TrainConfig config, const std::function<bool(const TrainEvent&)>& onEvent,
        const CancelToken& cancel)
        : c(std::move(config))
        , m_onEvent(onEvent)
        , m_cancel(cancel) {}

    Result<TrainResult> run();

private:
    bool emit(const TrainEvent& e) {
        const bool go = m_onEvent ? m_onEvent(e) : true;
        if (!go)
            m_cancel.cancel();
        return go;
    }
    void info(const std::string& message) {
        TrainEvent e;
        e.kind = TrainEvent::Kind::Info;
        e.message = message;
        emit(e);
    }
    void setTrainable();
    double learningRate(int64_t step) const;
    Result<TrainEvent> validate();
    Result<void> checkpoint();
    // Loads the latest checkpoint's model and progress; false when there is none.
    Result<bool> restoreCheckpoint();
    // Reads run.json (resume) or writes it (a new run), then the model and the data.
    // With several ranks rank 0 alone does this and writes a first checkpoint, which
    // the others then load (setUpFollower), so that all start from the same bytes.
    Result<void> setUpLeader(bool& restored);
    Result<void> setUpFollower();
    Result<void> prepareData();
    // Distributed runs: the ranks compare their configuration, corpus and model.
    Result<void> agreeOnInputs();

    // Rank 0 (or the only process) writes the run folder.
    bool leader() const { return !m_group || m_group->rank() == 0; }
    // Stops on a cancel: one process's own token, or with several ranks the decision
    // all of them took together at the last step (one rank's cancel stops all).
    bool stopRequested() const { return m_group ? m_stopAll : m_cancel.cancelled(); }
    // This rank's share of a batch's B sequences (all of them with one process).
    WindowBatch share(const WindowBatch& batch) const;
    // Sums over the ranks: the gradients, and the step's statistics (with the cancel
    // vote); adds the time and bytes sent to `e`.
    Result<void> sumAcrossRanks(BatchStats& total, TrainEvent& e);

    TrainConfig c;
    std::function<bool(const TrainEvent&)> m_onEvent;
    CancelToken m_cancel;

    std::shared_ptr<Model> m_model;
    std::string m_tokenizerDir;
    BatchSource m_data;
    std::unique_ptr<AdamOptimizer> m_opt;
    std::vector<torch::Tensor> m_netParams, m_moduleParams;
    RunProgress m_p;               // saved in every checkpoint
    int64_t m_checkpointStep = -1; // the step the last checkpoint (written or read) holds
    torch::Device m_device{torch::kCPU};
    std::unique_ptr<RankGroup> m_group; // with several ranks
    bool m_stopAll = false;
};

WindowBatch Run::share(const WindowBatch& batch) const {
    if (!m_group)
        return batch;
    const int64_t B = batch.inputs.size(1), n = m_group->size(), r = m_group->rank();
    const int64_t first = B * r / n, count = B * (r + 1) / n - first;
    WindowBatch part;
    part.inputs = batch.inputs.narrow(1, first, count).contiguous();
    part.targets = batch.targets.narrow(1, first, count).contiguous();
    part.scored = part.targets.ge(0).sum().item<int64_t>();
    return part;
}

Result<void> Run::sumAcrossRanks(BatchStats& total, TrainEvent& e) {
    const auto t0 = Clock::now();
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> grads;
    int64_t elements = 0;
    for (const auto* list : {&m_netParams, &m_moduleParams})
        for (const auto& p : *list) {
            if (!p.grad().defined()) // a parameter no gradient reached on this rank
                p.mutable_grad() = torch::zeros_like(p);
            grads.push_back(p.grad());
            elements += p.numel();
        }
    if (auto r = m_group->sum(grads); !r)
        return r.error();
    std::vector<double> stats = {total.nllSum, m_cancel.cancelled() ? 1.0 : 0.0};
    for (size_t i = 0; i < 3; ++i) {
        stats.push_back(total.slotMass[i]);
        stats.push_back(double(total.slotCount[i]));
    }
    const size_t sent = stats.size();
    if (auto r = m_group->sumValues(stats); !r)
        return r.error();
    const double* v = stats.data();
    total.nllSum = v[0];
    m_stopAll = v[1] > 0;
    for (size_t i = 0; i < 3; ++i) {
        total.slotMass[i] = v[2 + 2 * i];
        total.slotCount[i] = int64_t(std::llround(v[3 + 2 * i]));
    }
    e.commSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    e.commBytes = m_group->bytesPerSum(elements + int64_t(sent) * 2);
    return {};
}

void Run::setTrainable() {
    Model::Impl& m = ModelAccess::of(*m_model);
    m.net->train();
    const int L = m.info.config.nLayer;
    for (auto& p : m.net->parameters())
        p.set_requires_grad(false);
    std::vector<NamedParam> net, module;
    auto add = [&](torch::nn::Module& mod, const std::string& prefix,
                   std::vector<NamedParam>& into) {
        for (auto& p : mod.named_parameters(true)) {
            p.value().set_requires_grad(true);
            into.push_back({prefix + p.key(), p.value()});
        }
    };
    if (c.scope == TrainScope::All) {
        add(*m.net, "net.", net);
    } else if (c.scope == TrainScope::RecurrenceAndTopBlocks) {
        for (int l = std::max(0, L - c.topBlocks); l < L; ++l)
            add(*m.net->blocks[size_t(l)], "net.h." + std::to_string(l) + ".", net);
        if (c.topBlocks > 0)
            add(*m.net->ln_f, "net.ln_f.", net);
    }
    if (m.recurrent()) {
        m.recurrence->train();
        for (auto& p : m.recurrence->parameters())
            p.set_requires_grad(false);
        add(*m.recurrence, "rec.", module);
    }
    // Weight decay on matrices only (not on biases, gains or the mixing weights).
    auto split = [&](std::vector<NamedParam>& ps, double lrScale, std::vector<ParamGroup>& out) {
        ParamGroup decay{{}, lrScale, c.weightDecay}, plain{{}, lrScale, 0.0};
        for (auto& p : ps)
            (p.param.dim() >= 2 ? decay : plain).params.push_back(p);
        out.push_back(decay);
        out.push_back(plain);
    };
    std::vector<ParamGroup> groups;
    split(net, 1.0, groups);
    split(module, c.moduleLrScale, groups);
    for (auto& p : net)
        m_netParams.push_back(p.param);
    for (auto& p : module)
        m_moduleParams.push_back(p.param);
    m_opt = std::make_unique<AdamOptimizer>(groups, c.optimizer == OptimizerKind::AdamW, c.beta1,
                                            c.beta2, c.adamEps);
}

double Run::learningRate(int64_t step) const {
    // step is 1-based: linear warm-up from 0, then constant or cosine decay.
    if (c.warmupSteps > 0 && step <= c.warmupSteps)
        return c.lr * double(step) / double(c.warmupSteps);
    if (c.schedule == LrSchedule::Constant || m_p.totalSteps <= c.warmupSteps)
        return c.lr;
    const double progress =
        std::min(1.0, double(step - c.warmupSteps) / double(m_p.totalSteps - c.warmupSteps));
    const double floor = c.lr * c.minLrRatio;
    return floor + (c.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

Result<TrainEvent> Run::validate() {
    Model::Impl& m = ModelAccess::of(*m_model);
    if (m.recurrent())
        m.refreshRecurrenceCaches();
    TrainEvent e;
    e.kind = TrainEvent::Kind::Validation;
    e.step = m_p.step;
    e.totalSteps = m_p.totalSteps;
    e.tokens = m_p.tokens;
    auto on = validationLoss(*m_model, m_data.validation(), c, true, m_group.get(), m_cancel);
    if (!on)
        return on.error();
    e.valLoss = on->loss;
    e.valBandLoss = on->bands;
    e.valPerplexity = std::exp(e.valLoss);
    if (m.recurrent()) {
        auto off = validationLoss(*m_model, m_data.validation(), c, false, m_group.get(), m_cancel);
        if (!off)
            return off.error();
        e.valLossNoState = off->loss;
        e.valBandLossNoState = off->bands;
    }
    return e;
}

Result<void> Run::checkpoint() {
    if (!leader())
        return {};
    auto dir = writeCheckpoint(c.outDir, c.keepCheckpoints, ModelAccess::of(*m_model),
                               m_tokenizerDir, *m_opt, m_p);
    if (!dir)
        return dir.error();
    TrainEvent e;
    e.kind = TrainEvent::Kind::Checkpoint;
    e.step = m_p.step;
    e.totalSteps = m_p.totalSteps;
    e.tokens = m_p.tokens;
    e.checkpoint = *dir;
    m_checkpointStep = m_p.step;
    emit(e);
    return {};
}

Result<bool> Run::restoreCheckpoint() {
    const std::string dir = latestCheckpoint(c.outDir);
    if (dir.empty())
        return false;
    LoadOptions load;
    load.mapWeights = false; // training writes the weights
    load.device = m_device.str();
    auto model = Model::load(dir, load);
    if (!model)
        return model.error();
    m_model = *model;
    m_tokenizerDir = files::join(c.outDir, "tokenizer");
    auto progress = readProgress(dir);
    if (!progress)
        return progress.error();
    m_p = *progress;
    m_checkpointStep = m_p.step;
    return true;
}

Result<void> Run::prepareData() {
    std::string summary;
    // Tokenizing a large corpus takes minutes the first time: a line every tenth.
    int reported = 0;
    const auto progress = [&](double share, const std::string& message) {
        if (share < 1.0 && int(share * 10) > reported) {
            reported = int(share * 10);
            info(message + " (" + std::to_string(reported * 10) + "% of the corpus)");
        }
    };
    if (auto r = m_data.prepare(c, m_model->tokenizer(), summary, progress, m_cancel); !r)
        return r.error();
    info(summary);
    setTrainable();
    const int64_t perStep = int64_t(c.batchSize) * c.accumulate;
    m_p.totalSteps =
        c.steps > 0
            ? c.steps
            : std::max<int64_t>(1, int64_t(std::ceil(c.epochs * double(m_data.sequenceCount()) /
                                                     double(perStep))));
    m_data.startEpoch(m_p.epoch);
    return {};
}

Result<void> Run::setUpLeader(bool& restored) {
    const std::string runFile = files::join(c.outDir, "run.json");
    if (c.resume) {
        auto r = restoreCheckpoint();
        if (!r)
            return r.error();
        restored = *r;
        if (restored)
            info("resuming at step " + std::to_string(m_p.step));
        else
            info("no checkpoint yet: starting the run again");
    } else {
        if (files::exists(runFile))
            return makeError(ErrorCode::InvalidArgument,
                             c.outDir + " already holds a training run: resume it with --resume "
                                        "or choose another --out");
        if (auto r = writeDocuments(c); !r)
            return r.error();
        if (auto r = files::writeAtomically(runFile, runConfigText(c)); !r)
            return r.error();
    }
    if (!restored) {
        TrainConfig onDevice = c;
        onDevice.device = m_device.str();
        auto set = setUpModel(onDevice, [this](const std::string& m) { info(m); });
        if (!set)
            return set.error();
        m_model = set->model;
        m_tokenizerDir = set->tokenizerDir;
        // An adapter names its base: kept beside the run, for a resumed run too.
        if (c.adapter)
            if (auto r = files::writeAtomically(files::join(c.outDir, "adapter_base"),
                                                set->baseIdentity);
                !r)
                return r.error();
    }
    if (auto r = prepareData(); !r)
        return r;
    if (restored)
        if (auto r = m_opt->load(files::join(latestCheckpoint(c.outDir), "optimizer.safetensors"));
            !r)
            return r.error();
    if (!restored) {
        m_p.nextValidation = c.validateEveryTokens;
        if (m_group) // the step-0 checkpoint the other ranks start from
            return checkpoint();
    }
    return {};
}

Result<void> Run::setUpFollower() {
    auto r = restoreCheckpoint();
    if (!r)
        return r.error();
    if (!*r)
        return makeError(ErrorCode::FileNotFound,
                         "rank " + std::to_string(m_group->rank()) + " finds no checkpoint in " +
                             c.outDir +
                             ": every rank must read rank 0's run folder (on several machines, "
                             "put --out on a shared filesystem)");
    if (auto p = prepareData(); !p)
        return p;
    return m_opt->load(files::join(latestCheckpoint(c.outDir), "optimizer.safetensors"));
}

Result<void> Run::agreeOnInputs() {
    ContentHash model;
    Model::Impl& m = ModelAccess::of(*m_model);
    auto add = [&](torch::nn::Module& mod) {
        for (const auto& p : mod.named_parameters(true)) {
            const auto t = p.value().detach().to(torch::kCPU).contiguous();
            model.update(p.key());
            model.update(t.data_ptr(), size_t(t.numel()) * t.element_size());
        }
    };
    add(*m.net);
    if (m.recurrent())
        add(*m.recurrence);
    if (auto r = m_group->agree("corpus", m_data.fingerprint()); !r)
        return r;
    if (auto r = m_group->agree("model (the checkpoint read from the run folder)", model.hex()); !r)
        return r;
    return m_group->agree("training state", m_opt->fingerprint() + "/" + std::to_string(m_p.step) +
                                                "/" + std::to_string(m_p.epoch) + "/" +
                                                std::to_string(m_p.position));
}

Result<TrainResult> Run::run() {
    if (auto r = validateTrainConfig(c); !r)
        return r.error();
    const DistributedConfig dist = c.distributed;
    if (auto r = validateDistributed(dist); !r)
        return r.error();
    files::makeDirectories(c.outDir);
    if (c.resume) {
        auto stored = readRunConfig(c.outDir);
        if (!stored)
            return stored.error();
        c = *stored;
        c.resume = true;
        c.distributed = dist;
    }
    // With several ranks on one machine, --device cuda is each rank's own card.
    m_device = torch::Device(
        dist.active() && c.device == "cuda" ? "cuda:" + std::to_string(dist.localRank) : c.device);
    bool restored = false;
    if (dist.active()) {
        if (c.batchSize < dist.worldSize)
            return makeError(ErrorCode::InvalidArgument,
                             "--batch " + std::to_string(c.batchSize) +
                                 " is smaller than the number of ranks (" +
                                 std::to_string(dist.worldSize) +
                                 "): each rank takes its share of every batch");
        if (!c.corpusTexts.empty() || !c.validationTexts.empty())
            return makeError(ErrorCode::InvalidArgument,
                             "distributed training reads its corpus from files");
        auto group = RankGroup::connect(dist, m_device);
        if (!group)
            return group.error();
        m_group = std::move(*group);
        // What each rank was started with (run.json's text, the same for --device cuda on
        // every rank), and whether it resumes.
        if (auto r = m_group->agree("configuration",
                                    (c.resume ? "resume\n" : "new run\n") + runConfigText(c));
            !r)
            return r.error();
        if (leader()) {
            auto r = setUpLeader(restored);
            if (auto f = m_group->finish("setup", r ? "" : r.error().message); !f)
                return f.error();
            if (!r)
                return r.error();
        } else {
            if (auto r = m_group->await("setup"); !r)
                return r.error();
            if (auto r = setUpFollower(); !r)
                return r.error();
            restored = true;
        }
        if (auto r = agreeOnInputs(); !r)
            return r.error();
        info("rank " + std::to_string(dist.rank) + " of " + std::to_string(dist.worldSize) +
             ": every batch of " + std::to_string(c.batchSize) +
             " sequences is shared out among the ranks");
    } else if (auto r = setUpLeader(restored); !r) {
        return r.error();
    }

    const bool recurrent = c.mode == TrainMode::Recurrent;
    const bool bf16Autocast = c.precision == "bf16" || (c.precision == "auto" && c.device != "cpu");
    TrainResult result;
    const auto start = Clock::now();
    const int64_t firstStep = m_p.step;
    try {
        while (m_p.step < m_p.totalSteps) {
            if (stopRequested()) {
                result.cancelled = true;
                break;
            }
            const auto t0 = Clock::now();
            m_opt->zeroGrad();
            std::vector<WindowBatch> batches;
            int64_t scored = 0;
            const int stage = curriculumStage(c.curriculum, c.stageSteps, m_p.step);
            if (auto n =
                    curriculumNotice(c.curriculum, c.stageSteps, m_p.step, m_p.step == firstStep);
                !n.empty())
                info(n);
            for (int a = 0; a < c.accumulate; ++a) {
                const WindowBatch all = m_data.next(
                    m_p.epoch, m_p.position,
                    curriculumWindows(c.curriculum, c.bpttWindows, stage, c.mixShorter, c.batchSize,
                                      c.seed, (m_p.step + 1) * c.accumulate + a));
                scored += all.scored; // the whole batch's: every rank divides by it
                batches.push_back(share(all));
            }
            BatchStats total;
            for (const auto& b : batches) {
                const BatchStats s = accumulateGradients(ModelAccess::of(*m_model), b, recurrent,
                                                         double(scored), bf16Autocast);
                total.nllSum += s.nllSum;
                for (size_t i = 0; i < 3; ++i) {
                    total.slotMass[i] += s.slotMass[i];
                    total.slotCount[i] += s.slotCount[i];
                }
            }
            TrainEvent e;
            e.kind = TrainEvent::Kind::Step;
            if (m_group)
                if (auto r = sumAcrossRanks(total, e); !r)
                    return r.error();
            const GradNorms norms = clipGradients(m_netParams, m_moduleParams, c.clipNorm);
            e.gradNorm = norms.net;
            e.moduleGradNorm = norms.module;
            ++m_p.step;
            e.lr = learningRate(m_p.step);
            m_opt->step(e.lr);
            m_p.tokens += scored;
            const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
            const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
            e.step = m_p.step;
            e.totalSteps = m_p.totalSteps;
            e.tokens = m_p.tokens;
            e.loss = total.nllSum / double(std::max<int64_t>(scored, 1));
            e.tokensPerSecond = double(scored) / std::max(seconds, 1e-9);
            e.etaSeconds =
                elapsed / double(m_p.step - firstStep) * double(m_p.totalSteps - m_p.step);
            if (recurrent)
                for (size_t i = 0; i < 3; ++i)
                    e.slotAttention.push_back(
                        total.slotCount[i] ? total.slotMass[i] / double(total.slotCount[i]) : 0.0);
            if (!std::isfinite(e.loss))
                return makeError(ErrorCode::Internal,
                                 "the loss is not finite at step " + std::to_string(m_p.step) +
                                     " (try a lower learning rate); the last checkpoint is intact");
            emit(e);

            const bool last = m_p.step == m_p.totalSteps;
            bool stop = false;
            if (!m_data.validation().docs.empty() &&
                ((c.validateEveryTokens > 0 && m_p.tokens >= m_p.nextValidation) || last)) {
                const int64_t due = m_p.nextValidation;
                while (c.validateEveryTokens > 0 && m_p.nextValidation <= m_p.tokens)
                    m_p.nextValidation += c.validateEveryTokens;
                auto v = validate();
                if (!v) {
                    if (v.error().code == ErrorCode::Cancelled) {
                        m_p.nextValidation = due; // the resumed run validates first
                        result.cancelled = true;
                        break;
                    }
                    return v.error();
                }
                v->improved = !m_p.haveBest || v->valLoss < m_p.bestVal;
                if (v->improved) {
                    m_p.bestVal = v->valLoss;
                    m_p.haveBest = true;
                    m_p.sinceBest = 0;
                    if (leader())
                        if (auto r = saveModelFolder(ModelAccess::of(*m_model),
                                                     files::join(c.outDir, "best"), StDtype::F32,
                                                     m_tokenizerDir);
                            !r)
                            return r.error();
                } else {
                    ++m_p.sinceBest;
                }
                emit(*v);
                if (c.patience > 0 && m_p.sinceBest >= c.patience) {
                    info("validation loss did not improve for " + std::to_string(c.patience) +
                         " validations: stopping early");
                    result.stoppedEarly = stop = true;
                }
            }
            if (last || stop || stopRequested() ||
                (c.checkpointEverySteps > 0 && m_p.step % c.checkpointEverySteps == 0))
                if (auto r = checkpoint(); !r)
                    return r.error();
            if (stop)
                break;
        }
        if (stopRequested())
            result.cancelled = true;
        // A cancel keeps every step taken: Resume goes on from here, whenever it came
        // (during a step, between steps or during a validation).
        if (result.cancelled && m_p.step > m_checkpointStep && m_p.step > firstStep)
            if (auto r = checkpoint(); !r)
                return r.error();
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfMemory, "out of memory while training");
    }

    result.steps = m_p.step;
    result.tokens = m_p.tokens;
    result.bestValLoss = m_p.bestVal;
    if (m_p.haveBest)
        result.bestDir = files::join(c.outDir, "best");
    if (!result.cancelled) {
        result.modelDir = runOutputDir(c);
        if (leader()) // the other ranks report rank 0's output
            if (auto r = writeRunOutput(c, m_model, m_tokenizerDir, result.bestDir); !r)
                return r.error();
    }
    TrainEvent done;
    done.kind = TrainEvent::Kind::Done;
    done.step = m_p.step;
    done.totalSteps = m_p.totalSteps;
    done.tokens = m_p.tokens;
    done.checkpoint = result.cancelled ? latestCheckpoint(c.outDir) : result.modelDir;
    done.message =
        result.cancelled ? "cancelled" : (result.stoppedEarly ? "stopped early" : "finished");
    emit(done);
    return result;
}

} // namespace

Result<TrainResult> train(const TrainConfig& config,
                          const std::function<bool(const TrainEvent&)>& onEvent,
                          const CancelToken& cancel) {
    TrainConfig c = config;
    if (c.scratch && c.scratchModel.nInner == 0)
        c.scratchModel.nInner = 4 * c.scratchModel.nEmbd;
    Run run(std::move(c), onEvent, cancel);
    return run.run();
}

} // namespace baton::engine
