#include "cli_support.h"
#include "commands.h"
#include "curriculum_options.h"
#include "local_ranks.h"
#include "recurrence_options.h"
#include "terminal_progress.h"

#include <baton/engine/training.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace baton::cli {

namespace {

// SIGINT / SIGTERM cancel the run cooperatively: the trainer finishes the current
// step and writes a checkpoint that --resume continues from.
std::atomic<bool> g_interrupted{false};
void onSignal(int) {
    g_interrupted.store(true);
}

std::string formatSeconds(double s) {
    if (!(s >= 0) || !std::isfinite(s))
        return "?";
    char buf[32];
    const long t = std::lround(s);
    if (t >= 3600)
        std::snprintf(buf, sizeof(buf), "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else
        std::snprintf(buf, sizeof(buf), "%ldm%02lds", t / 60, t % 60);
    return buf;
}

nlohmann::ordered_json eventJson(const engine::TrainEvent& e) {
    using K = engine::TrainEvent::Kind;
    nlohmann::ordered_json j;
    const char* kind = e.kind == K::Step         ? "step"
                       : e.kind == K::Validation ? "validation"
                       : e.kind == K::Checkpoint ? "checkpoint"
                       : e.kind == K::Done       ? "done"
                                                 : "info";
    j["event"] = kind;
    j["step"] = e.step;
    j["total_steps"] = e.totalSteps;
    j["tokens"] = e.tokens;
    switch (e.kind) {
    case K::Step:
        j["loss"] = e.loss;
        j["tokens_per_s"] = e.tokensPerSecond;
        j["lr"] = e.lr;
        j["grad_norm"] = e.gradNorm;
        j["module_grad_norm"] = e.moduleGradNorm;
        j["eta_s"] = e.etaSeconds;
        if (e.commSeconds > 0) { // a distributed run
            j["comm_s"] = e.commSeconds;
            j["comm_bytes"] = e.commBytes;
        }
        if (!e.slotAttention.empty())
            j["slot_attention"] = e.slotAttention;
        break;
    case K::Validation:
        j["val_loss"] = e.valLoss;
        j["val_ppl"] = e.valPerplexity;
        j["val_band_loss"] = e.valBandLoss;
        if (!e.valBandLossNoState.empty()) {
            j["val_loss_no_state"] = e.valLossNoState;
            j["val_band_loss_no_state"] = e.valBandLossNoState;
        }
        j["improved"] = e.improved;
        break;
    case K::Checkpoint:
    case K::Done:
        j["path"] = e.checkpoint;
        if (!e.message.empty())
            j["message"] = e.message;
        break;
    case K::Info:
        j["message"] = e.message;
        break;
    }
    return j;
}

// A step moves the bar on a terminal (a line per step in a log); everything else is a
// line of its own.
void printHuman(const engine::TrainEvent& e, TerminalProgress& bar) {
    using K = engine::TrainEvent::Kind;
    char buf[512];
    if (e.kind == K::Step && bar.shown()) {
        std::snprintf(buf, sizeof(buf), "step %lld of %lld  loss %.4f  %.0f tokens/s",
                      static_cast<long long>(e.step), static_cast<long long>(e.totalSteps), e.loss,
                      e.tokensPerSecond);
        bar.update(e.totalSteps > 0 ? double(e.step) / double(e.totalSteps) : 0, buf);
        return;
    }
    bar.finish();
    switch (e.kind) {
    case K::Info:
        std::fprintf(stderr, "%s\n", e.message.c_str());
        return;
    case K::Step:
        std::snprintf(buf, sizeof(buf),
                      "step %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  tokens %lld  eta %s",
                      static_cast<long long>(e.step), static_cast<long long>(e.totalSteps), e.loss,
                      e.lr, e.tokensPerSecond, static_cast<long long>(e.tokens),
                      formatSeconds(e.etaSeconds).c_str());
        std::fprintf(stderr, "%s", buf);
        if (e.slotAttention.size() == 3)
            std::fprintf(stderr, "  slot attention %.3f/%.3f/%.3f", e.slotAttention[0],
                         e.slotAttention[1], e.slotAttention[2]);
        std::fprintf(stderr, "\n");
        return;
    case K::Validation:
        std::fprintf(stderr, "validation at step %lld: loss %.4f (ppl %.2f)%s",
                     static_cast<long long>(e.step), e.valLoss, e.valPerplexity,
                     e.improved ? "  best so far" : "");
        if (!e.valBandLossNoState.empty())
            std::fprintf(stderr, "  state off %.4f (positions 0-15: %.4f on, %.4f off)",
                         e.valLossNoState, e.valBandLoss[0], e.valBandLossNoState[0]);
        std::fprintf(stderr, "\n");
        return;
    case K::Checkpoint:
        std::fprintf(stderr, "checkpoint: %s\n", e.checkpoint.c_str());
        return;
    case K::Done:
        std::fprintf(stderr, "%s after %lld steps\n", e.message.c_str(),
                     static_cast<long long>(e.step));
        return;
    }
}

// The launcher's variables, then the options (which win).
engine::DistributedConfig distributedFromArgs(const Args& args) {
    auto env = engine::distributedFromEnvironment([](const char* n) { return std::getenv(n); });
    if (!env)
        throw UsageError(env.error().message);
    engine::DistributedConfig d = *env;
    if (args.has("rank") != args.has("world-size"))
        throw UsageError("--rank and --world-size go together");
    if (args.has("world-size")) {
        d.worldSize = int(args.getInt("world-size", 1, 4096));
        d.rank = int(args.getInt("rank", 0, d.worldSize - 1));
        d.localRank = 0;
        d.launched = true;
    }
    if (args.has("master")) {
        const std::string m = args.get("master");
        const size_t colon = m.rfind(':');
        if (colon == std::string::npos || colon == 0)
            throw UsageError("--master must be HOST:PORT");
        d.masterAddr = m.substr(0, colon);
        char* end = nullptr;
        const long port = std::strtol(m.c_str() + colon + 1, &end, 10);
        if (*end != '\0' || end == m.c_str() + colon + 1 || port < 1 || port > 65535)
            throw UsageError("--master must be HOST:PORT with a port in [1, 65535]");
        d.masterPort = int(port);
    }
    d.timeoutSeconds = int(args.getInt("dist-timeout", 1, 7 * 24 * 3600));
    return d;
}

} // namespace

int runTrain(const std::vector<std::string>& argv) {
    Args args("train",
              "Train a model: fine-tune a checkpoint (--base) or pretrain one from scratch "
              "(--scratch, with a SentencePiece tokenizer trained on the corpus), as a baseline "
              "or with the recurrence module, on windows of T tokens with overlap o. Recurrent "
              "runs use exact backpropagation through W windows by window-level recomputation "
              "(method.md section 5). Checkpoints are written atomically to OUT/checkpoints; "
              "Ctrl-C stops after the current step and writes one; --resume continues exactly. "
              "Prints the output model's folder on standard output at the end.");
    args.option("out", "DIR", "The run's folder: checkpoints, token cache, outputs (required)")
        .flag("resume", "Continue the run in --out from its latest checkpoint (other options "
                        "are read from OUT/run.json)")
        .option("base", "DIR", "Start from this checkpoint (Hugging Face GPT-2 folder)")
        .flag("scratch", "Pretrain a new model from scratch (needs the shape options below)")
        .option("layers", "N", "--scratch: transformer blocks", "4")
        .option("heads", "N", "--scratch: attention heads", "4")
        .option("embd", "N", "--scratch: hidden size (a multiple of --heads)", "256")
        .option("positions", "N", "--scratch: positions (at least --window)", "256")
        .option("vocab-size", "N", "--scratch: SentencePiece vocabulary size", "8000")
        .option("tokenizer", "bpe|unigram", "--scratch: SentencePiece model type", "bpe")
        .option("tokenizer-sample-mb", "N",
                "--scratch: the tokenizer learns from at most N MB of the corpus (whole "
                "documents spread evenly over it)",
                "256")
        .option("tokenizer-from", "DIR",
                "--scratch: use this model folder's SentencePiece tokenizer instead of "
                "learning one (--vocab-size is then its size)")
        .option("mode", "baseline|recurrent", "Train without or with the recurrence module",
                "recurrent")
        .option("corpus", "PATH",
                "Training text: .txt/.md/.epub files, library shards (.tar.xz) or folders "
                "of them (repeatable)",
                std::nullopt, true)
        .option("val", "PATH",
                "Validation text (repeatable); without it the last documents of the "
                "corpus are held out (--val-fraction)",
                std::nullopt, true)
        .option("val-fraction", "F", "Share of corpus documents held out without --val", "0.1")
        .option("val-works", "FILE",
                "Validation works taken out of the corpus, one name a line (a shard's "
                "SHARD/MEMBER or its end, or a file's path; # starts a comment)")
        .option("held-out", "PATH",
                "Text never to train on (a test book; repeatable): the run stops when "
                "the corpus holds 256 tokens of it, or of the validation text, in a row",
                std::nullopt, true)
        .option("window", "T", "Window size in tokens", "128")
        .option("overlap", "O", "Overlap between consecutive windows, in [0, T)", "0")
        .option("bptt-windows", "W", "Windows per training sequence (gradients flow through all)",
                "20")
        .option("batch", "B", "Sequences per micro-batch", "8")
        .option("accumulate", "N", "Micro-batches per optimizer step", "1")
        .option("steps", "N", "Optimizer steps (overrides --epochs)", "0")
        .option("epochs", "E", "Passes over the training sequences (when --steps is 0)", "1")
        .option("optimizer", "adam|adamw", "Optimizer", "adamw")
        .option("lr", "X", "Peak learning rate", "1e-4")
        .option("module-lr-scale", "X", "The recurrence module's learning rate relative to --lr",
                "1")
        .option("warmup", "N", "Linear warm-up steps from 0", "100")
        .option("schedule", "constant|cosine", "Learning rate after warm-up", "constant")
        .option("min-lr-ratio", "X", "cosine: the final learning rate relative to --lr", "0.1")
        .option("weight-decay", "X", "Weight decay (matrices only)", "0.01")
        .option("clip", "X", "Clip the global gradient norm to X (0: off)", "1")
        .option("seed", "N", "Seed for initialisation and data order", "1")
        .option("train", "all|recurrence|top",
                "What to train: everything, only the recurrence module, or the module plus "
                "the top --top-blocks blocks",
                "all")
        .option("top-blocks", "K", "--train top: how many of the last blocks to train", "2")
        .flag("adapter",
              "Add recurrence to a baseline --base as a small adapter: only the recurrence "
              "module is trained (--train recurrence), and OUT/adapter holds it alone, naming "
              "its base; load it with --model BASE --adapter OUT/adapter")
        .option("slot-bias-init", "X",
                "--slot-bias: its initial value (negative: the slot starts nearly ignored "
                "instead of as an attention sink)",
                "0")
        .option("episodes", "N",
                "Mix N memory episodes into each training sequence (a fact stated in one "
                "window and asked for 0-4 windows later; templates and names disjoint from "
                "baton-cli probe's)",
                "0")
        .flag("no-unwrap", "Keep the corpus's hard line wraps and verse numbers (by default "
                           "wrapped paragraphs are joined and verse numbers dropped)")
        .option("validate-every", "TOKENS",
                "Validate every this many training tokens (0: at the end)", "200000")
        .option("val-tokens", "N", "Tokens of validation text scored per validation", "50000")
        .option("patience", "N", "Stop after N validations without improvement (0: never)", "0")
        .option("checkpoint-every", "N", "Write a checkpoint every N steps", "200")
        .option("precision", "P",
                "auto (bf16 autocast on CUDA, float32 on the CPU), f32, or bf16 (CUDA)", "auto")
        .option("keep-checkpoints", "N", "Checkpoints kept (the newest)", "2")
        .option("save-dtype", "f32|f16|bf16", "Storage dtype of the final model", "f32")
        .option("threads", "N", "Compute threads (default: all cores)", "0")
        .option("nproc", "N",
                "Data-parallel: start N processes on this machine as the ranks of one run "
                "(one per GPU with --device cuda; without --threads each takes 1/N of the "
                "cores, as with a launcher's LOCAL_WORLD_SIZE)",
                "1")
        .option("rank", "R",
                "Data-parallel across machines: this process's rank, with --world-size and "
                "--master (torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and "
                "Slurm's SLURM_PROCID, SLURM_NTASKS are read when set)")
        .option("world-size", "N", "Data-parallel: the number of ranks")
        .option("master", "HOST:PORT", "Data-parallel: rank 0's address (default 127.0.0.1:29500)")
        .option("dist-timeout", "S",
                "Data-parallel: a rank silent this long stops the run with an error", "300")
        .flag("json-progress", "Print one JSON object per event on standard output (the last "
                               "line is the done event with the model's path)");
    addDeviceOption(args);
    addRecurrenceOptions(args);
    addCurriculumOptions(args, "Curriculum: the steps of every stage but the last");
    if (!args.parse(argv))
        return 0;
    if (!args.positional().empty())
        throw UsageError("unexpected argument " + args.positional().front());

    const int nproc = int(args.getInt("nproc", 1, 1024));
    auto dist = distributedFromArgs(args);
    if (nproc > 1) {
        if (dist.active())
            throw UsageError("--nproc starts the ranks itself: not with --rank, --world-size or "
                             "a launcher's RANK / WORLD_SIZE");
        if (!args.has("resume") && args.getInt("batch", 1, 100000) < nproc)
            throw UsageError("--batch must be at least --nproc: each rank takes its share of "
                             "every batch");
        std::vector<std::string> rest;
        for (size_t i = 0; i < argv.size(); ++i) {
            if (argv[i] == "--nproc") {
                ++i;
                continue;
            }
            if (argv[i].rfind("--nproc=", 0) != 0)
                rest.push_back(argv[i]);
        }
        return runLocalRanks(nproc, rest, dist.timeoutSeconds);
    }
    int threads = static_cast<int>(args.getInt("threads", 0, 1024));
    // Several ranks on one machine (--nproc, or a launcher's LOCAL_WORLD_SIZE) share its
    // cores: by default each takes its part of them, not all.
    if (threads == 0)
        if (const char* local = std::getenv("LOCAL_WORLD_SIZE")) {
            const int n = std::atoi(local);
            const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
            if (n > 1 && n <= 4096)
                threads = std::max(1, cores / n);
        }
    engine::initializeRuntime(threads);
    engine::TrainConfig c;
    c.distributed = dist;
    if (!args.has("out"))
        throw UsageError("--out DIR is required");
    c.outDir = args.get("out");
    c.resume = args.has("resume");
    if (!c.resume) {
        c.scratch = args.has("scratch");
        if (args.has("base"))
            c.baseModel = args.get("base");
        if (c.scratch == args.has("base"))
            throw UsageError("give either --base DIR or --scratch");
        if (c.scratch) {
            c.scratchModel.nLayer = int(args.getInt("layers", 1, 256));
            c.scratchModel.nHead = int(args.getInt("heads", 1, 256));
            c.scratchModel.nEmbd = int(args.getInt("embd", 8, 16384));
            c.scratchModel.nPositions = int(args.getInt("positions", 2, 65536));
            c.scratchModel.vocabSize = int(args.getInt("vocab-size", 260, 1000000));
            c.scratchModel.layerNormEps = 1e-5;
            c.scratchTokenizer = args.get("tokenizer");
            c.tokenizerSampleBytes = args.getInt("tokenizer-sample-mb", 1, 1 << 20) << 20;
            if (args.has("tokenizer-from"))
                c.scratchTokenizerFrom = args.get("tokenizer-from");
            if (c.scratchTokenizer != "bpe" && c.scratchTokenizer != "unigram")
                throw UsageError("--tokenizer must be bpe or unigram");
        }
        const std::string mode = args.get("mode");
        if (mode != "baseline" && mode != "recurrent")
            throw UsageError("--mode must be baseline or recurrent");
        c.mode = mode == "recurrent" ? engine::TrainMode::Recurrent : engine::TrainMode::Baseline;
        c.corpus = args.all("corpus");
        if (c.corpus.empty())
            throw UsageError("--corpus PATH is required");
        c.validation = args.all("val");
        c.validationFraction = args.getDouble("val-fraction", 0, 0.99);
        if (args.has("val-works")) {
            auto works = engine::readWorkList(args.get("val-works"));
            if (!works)
                throw UsageError("--val-works: " + works.error().message);
            c.validationWorks = std::move(*works);
        }
        c.heldOut = args.all("held-out");
        c.window = int(args.getInt("window", 2, 65536));
        c.overlap = int(args.getInt("overlap", 0, c.window - 1));
        c.bpttWindows = int(args.getInt("bptt-windows", 1, 100000));
        const CurriculumOptions curriculum = curriculumFromArgs(args, c.bpttWindows);
        c.curriculum = curriculum.windows;
        c.stageSteps = curriculum.stageSteps;
        c.mixShorter = curriculum.mixShorter;
        c.batchSize = int(args.getInt("batch", 1, 100000));
        c.accumulate = int(args.getInt("accumulate", 1, 100000));
        c.steps = args.getInt("steps", 0, INT64_MAX / 2);
        c.epochs = args.getDouble("epochs", 1e-6, 1e6);
        const std::string opt = args.get("optimizer");
        if (opt != "adam" && opt != "adamw")
            throw UsageError("--optimizer must be adam or adamw");
        c.optimizer = opt == "adam" ? engine::OptimizerKind::Adam : engine::OptimizerKind::AdamW;
        c.lr = args.getDouble("lr", 1e-12, 1);
        c.moduleLrScale = args.getDouble("module-lr-scale", 1e-6, 1e6);
        c.warmupSteps = int(args.getInt("warmup", 0, 100000000));
        const std::string schedule = args.get("schedule");
        if (schedule != "constant" && schedule != "cosine")
            throw UsageError("--schedule must be constant or cosine");
        c.schedule =
            schedule == "cosine" ? engine::LrSchedule::Cosine : engine::LrSchedule::Constant;
        c.minLrRatio = args.getDouble("min-lr-ratio", 0, 1);
        c.weightDecay = args.getDouble("weight-decay", 0, 10);
        c.clipNorm = args.getDouble("clip", 0, 1e9);
        c.seed = static_cast<uint64_t>(args.getInt("seed", 0, INT64_MAX));
        const std::string scope = args.get("train");
        if (scope == "all")
            c.scope = engine::TrainScope::All;
        else if (scope == "recurrence")
            c.scope = engine::TrainScope::Recurrence;
        else if (scope == "top")
            c.scope = engine::TrainScope::RecurrenceAndTopBlocks;
        else
            throw UsageError("--train must be all, recurrence or top");
        if (args.has("adapter")) {
            if (args.has("train") && scope != "recurrence")
                throw UsageError("--adapter trains the recurrence module alone: not with --train " +
                                 scope);
            c.adapter = true;
            c.scope = engine::TrainScope::Recurrence;
        }
        c.topBlocks = int(args.getInt("top-blocks", 1, 10000));
        c.recurrence = recurrenceFromArgs(args);
        c.slotBiasInit = args.getDouble("slot-bias-init", -100, 100);
        c.unwrap = !args.has("no-unwrap");
        c.episodesPerSequence = int(args.getInt("episodes", 0, 100000));
        c.validateEveryTokens = args.getInt("validate-every", 0, INT64_MAX / 2);
        c.validationMaxTokens = args.getInt("val-tokens", 2, INT64_MAX / 2);
        c.patience = int(args.getInt("patience", 0, 1000000));
        c.checkpointEverySteps = args.getInt("checkpoint-every", 1, INT64_MAX / 2);
        c.keepCheckpoints = int(args.getInt("keep-checkpoints", 1, 1000));
        c.saveDtype = args.get("save-dtype");
        c.device = args.get("device");
        c.precision = args.get("precision");
    }

    // Rank 0 reports; the others print only their errors.
    const bool quiet = dist.rank != 0;
    const bool json = args.has("json-progress");
    engine::CancelToken cancel;
    g_interrupted.store(false);
    auto previousInt = std::signal(SIGINT, onSignal);
    auto previousTerm = std::signal(SIGTERM, onSignal);
    TerminalProgress bar("train");
    auto onEvent = [&](const engine::TrainEvent& e) {
        if (json && !quiet)
            std::cout << eventJson(e).dump() << "\n" << std::flush;
        else if (!quiet)
            printHuman(e, bar);
        return !g_interrupted.load();
    };
    auto result = engine::train(c, onEvent, cancel);
    bar.finish();
    std::signal(SIGINT, previousInt);
    std::signal(SIGTERM, previousTerm);
    check(result);
    if (result->cancelled) {
        if (!quiet)
            std::cerr << "cancelled: resume with baton-cli train --out " << c.outDir
                      << " --resume\n";
        return 130;
    }
    if (!json && !quiet)
        std::cout << result->modelDir << "\n";
    return 0;
}

} // namespace baton::cli
