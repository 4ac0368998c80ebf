#include "training/run_config.h"

#include "model/hf_config.h"
#include "util/files.h"
#include "util/json.h"

#include <tuple>

namespace baton::engine {

namespace {

using Json = nlohmann::ordered_json;

const char* modeName(TrainMode m) {
    return m == TrainMode::Recurrent ? "recurrent" : "baseline";
}
const char* scopeName(TrainScope s) {
    return s == TrainScope::All ? "all"
                                : (s == TrainScope::Recurrence ? "recurrence" : "recurrence+top");
}

Json toJson(const TrainConfig& c) {
    Json j;
    j["base_model"] = c.baseModel;
    j["scratch"] = c.scratch;
    j["scratch_model"] = Json::parse(hfConfigJson(c.scratchModel));
    j["scratch_tokenizer"] = c.scratchTokenizer;
    j["mode"] = modeName(c.mode);
    j["insert_block"] = c.recurrence.insertBlock;
    j["ffn_width"] = c.recurrence.ffnWidth;
    j["ffn_depth"] = c.recurrence.ffnDepth;
    j["residual"] = c.recurrence.residual;
    j["slot_bias"] = c.recurrence.slotBias;
    j["slot_bias_init"] = c.slotBiasInit;
    j["slots"] = c.recurrence.slots;
    j["pool_last"] = c.recurrence.poolLast;
    j["sink"] = c.recurrence.sink;
    j["unwrap"] = c.unwrap;
    j["episodes_per_sequence"] = c.episodesPerSequence;
    j["corpus"] = c.corpus;
    j["validation"] = c.validation;
    j["validation_fraction"] = c.validationFraction;
    j["window"] = c.window;
    j["overlap"] = c.overlap;
    j["bptt_windows"] = c.bpttWindows;
    j["batch_size"] = c.batchSize;
    j["accumulate"] = c.accumulate;
    j["steps"] = c.steps;
    j["epochs"] = c.epochs;
    j["optimizer"] = c.optimizer == OptimizerKind::AdamW ? "adamw" : "adam";
    j["lr"] = c.lr;
    j["module_lr_scale"] = c.moduleLrScale;
    j["min_lr_ratio"] = c.minLrRatio;
    j["warmup_steps"] = c.warmupSteps;
    j["schedule"] = c.schedule == LrSchedule::Cosine ? "cosine" : "constant";
    j["weight_decay"] = c.weightDecay;
    j["beta1"] = c.beta1;
    j["beta2"] = c.beta2;
    j["adam_eps"] = c.adamEps;
    j["clip_norm"] = c.clipNorm;
    j["seed"] = c.seed;
    j["scope"] = scopeName(c.scope);
    j["top_blocks"] = c.topBlocks;
    j["validate_every_tokens"] = c.validateEveryTokens;
    j["validation_max_tokens"] = c.validationMaxTokens;
    j["patience"] = c.patience;
    j["checkpoint_every_steps"] = c.checkpointEverySteps;
    j["keep_checkpoints"] = c.keepCheckpoints;
    j["save_dtype"] = c.saveDtype;
    return j;
}

Result<TrainConfig> fromJson(const json::Json& j, const std::string& outDir) {
    try {
        TrainConfig c;
        c.outDir = outDir;
        c.resume = true;
        c.baseModel = j.at("base_model").get<std::string>();
        c.scratch = j.at("scratch").get<bool>();
        auto sm = parseHfConfig(j.at("scratch_model").dump(), "run.json");
        if (c.scratch && !sm)
            return sm.error();
        if (sm)
            c.scratchModel = *sm;
        c.scratchTokenizer = j.at("scratch_tokenizer").get<std::string>();
        c.mode = j.at("mode") == "recurrent" ? TrainMode::Recurrent : TrainMode::Baseline;
        c.recurrence.insertBlock = j.at("insert_block").get<int>();
        c.recurrence.ffnWidth = j.at("ffn_width").get<int>();
        c.recurrence.ffnDepth = j.at("ffn_depth").get<int>();
        c.recurrence.residual = j.at("residual").get<bool>();
        c.recurrence.slotBias = j.at("slot_bias").get<bool>();
        c.slotBiasInit = j.at("slot_bias_init").get<double>();
        // Added later: runs written before them used the defaults of that time.
        c.recurrence.slots = j.value("slots", 1);
        c.recurrence.poolLast = j.value("pool_last", 0);
        c.recurrence.sink = j.value("sink", false);
        c.unwrap = j.value("unwrap", false);
        c.episodesPerSequence = j.value("episodes_per_sequence", 0);
        c.corpus = j.at("corpus").get<std::vector<std::string>>();
        c.validation = j.at("validation").get<std::vector<std::string>>();
        c.validationFraction = j.at("validation_fraction").get<double>();
        c.window = j.at("window").get<int>();
        c.overlap = j.at("overlap").get<int>();
        c.bpttWindows = j.at("bptt_windows").get<int>();
        c.batchSize = j.at("batch_size").get<int>();
        c.accumulate = j.at("accumulate").get<int>();
        c.steps = j.at("steps").get<int64_t>();
        c.epochs = j.at("epochs").get<double>();
        c.optimizer = j.at("optimizer") == "adam" ? OptimizerKind::Adam : OptimizerKind::AdamW;
        c.lr = j.at("lr").get<double>();
        c.moduleLrScale = j.at("module_lr_scale").get<double>();
        c.minLrRatio = j.at("min_lr_ratio").get<double>();
        c.warmupSteps = j.at("warmup_steps").get<int>();
        c.schedule = j.at("schedule") == "cosine" ? LrSchedule::Cosine : LrSchedule::Constant;
        c.weightDecay = j.at("weight_decay").get<double>();
        c.beta1 = j.at("beta1").get<double>();
        c.beta2 = j.at("beta2").get<double>();
        c.adamEps = j.at("adam_eps").get<double>();
        c.clipNorm = j.at("clip_norm").get<double>();
        c.seed = j.at("seed").get<uint64_t>();
        const std::string scope = j.at("scope").get<std::string>();
        c.scope = scope == "all" ? TrainScope::All
                                 : (scope == "recurrence" ? TrainScope::Recurrence
                                                          : TrainScope::RecurrenceAndTopBlocks);
        c.topBlocks = j.at("top_blocks").get<int>();
        c.validateEveryTokens = j.at("validate_every_tokens").get<int64_t>();
        c.validationMaxTokens = j.at("validation_max_tokens").get<int64_t>();
        c.patience = j.at("patience").get<int>();
        c.checkpointEverySteps = j.at("checkpoint_every_steps").get<int64_t>();
        c.keepCheckpoints = j.at("keep_checkpoints").get<int>();
        c.saveDtype = j.at("save_dtype").get<std::string>();
        return c;
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::BadConfig, outDir + "/run.json is damaged: " + e.what());
    }
}

} // namespace

std::string runConfigText(const TrainConfig& config) {
    return toJson(config).dump(2) + "\n";
}

Result<TrainConfig> readRunConfig(const std::string& outDir) {
    const std::string runFile = files::join(outDir, "run.json");
    if (!files::exists(runFile))
        return makeError(ErrorCode::FileNotFound,
                         "nothing to resume in " + outDir + " (no run.json)");
    auto j = readJsonFile(runFile, size_t(1) << 20);
    if (!j)
        return j.error();
    return fromJson(*j, outDir);
}

Result<void> writeDocuments(TrainConfig& c) {
    for (auto [texts, folder, paths] :
         {std::tuple{&c.corpusTexts, "train", &c.corpus},
          std::tuple{&c.validationTexts, "validation", &c.validation}}) {
        if (texts->empty())
            continue;
        const std::string dir = files::join(files::join(c.outDir, "documents"), folder);
        files::makeDirectories(dir);
        for (const auto& [name, text] : *texts) {
            if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
                return makeError(ErrorCode::InvalidArgument,
                                 "invalid document name '" + name + "'");
            if (auto r = files::writeAtomically(files::join(dir, name), text); !r)
                return r;
        }
        paths->push_back(dir);
        texts->clear();
    }
    return {};
}

Result<void> validateTrainConfig(const TrainConfig& c) {
    auto bad = [](const std::string& what) {
        return makeError(ErrorCode::InvalidArgument, "invalid training setting: " + what);
    };
    if (c.outDir.empty())
        return bad("--out is required");
    if (c.resume)
        return {};
    if (c.scratch == !c.baseModel.empty())
        return bad("give either a base model or --scratch");
    if (c.corpus.empty() && c.corpusTexts.empty())
        return bad("--corpus is required");
    if (c.scratch) {
        ModelConfig m = c.scratchModel;
        if (m.nInner == 0)
            m.nInner = 4 * m.nEmbd;
        if (auto r = validateModelConfig(m); !r)
            return r;
        if (c.scratchModel.vocabSize < 260)
            return bad("--vocab-size must be at least 260 (256 byte pieces and specials)");
        if (c.scratchTokenizer != "bpe" && c.scratchTokenizer != "unigram")
            return bad("--tokenizer must be bpe or unigram");
        if (c.window > c.scratchModel.nPositions)
            return bad("--window exceeds --positions");
    }
    if (c.window < 2)
        return bad("--window must be at least 2");
    if (c.overlap < 0 || c.overlap >= c.window)
        return bad("--overlap must be in [0, window)");
    if (c.bpttWindows < 1 || c.batchSize < 1 || c.accumulate < 1)
        return bad("--bptt-windows, --batch and --accumulate must be at least 1");
    if (!(c.lr > 0) || c.lr > 1)
        return bad("--lr must be in (0, 1]");
    if (c.steps < 0 || !(c.epochs > 0))
        return bad("--steps must be >= 0 and --epochs > 0");
    if (c.warmupSteps < 0 || c.weightDecay < 0 || c.clipNorm < 0 || !(c.moduleLrScale > 0))
        return bad(
            "warm-up, weight decay, clipping and the module's lr scale must not be negative");
    if (c.mode == TrainMode::Baseline && c.scope == TrainScope::Recurrence)
        return bad("a baseline run has no recurrence module to train");
    if (c.scope == TrainScope::RecurrenceAndTopBlocks && c.topBlocks < 1)
        return bad("--top-blocks must be at least 1");
    if (c.recurrence.ffnWidth < 1 || c.recurrence.ffnDepth < 0 || c.recurrence.insertBlock < 0)
        return bad("the recurrence module's shape");
    if (c.episodesPerSequence < 0 || c.episodesPerSequence > c.bpttWindows)
        return bad("--episodes must be in [0, bptt-windows]");
    if (c.validationFraction < 0 || c.validationFraction >= 1)
        return bad("--val-fraction must be in [0, 1)");
    if (c.saveDtype != "f32" && c.saveDtype != "f16" && c.saveDtype != "bf16")
        return bad("--save-dtype must be f32, f16 or bf16");
    return {};
}

} // namespace baton::engine
