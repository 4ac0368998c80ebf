#include "training/run_config.h"

#include "model/hf_config.h"
#include "training/curriculum.h"
#include "util/files.h"
#include "util/json.h"

#include <limits>
#include <optional>
#include <tuple>

namespace baton::engine {

namespace {

using Json = nlohmann::ordered_json;

// The names run.json uses for each setting's values: one table per setting, read and
// written through the same entries.
template <typename E>
struct Named {
    E value;
    const char* name;
};
constexpr Named<TrainMode> kModes[] = {{TrainMode::Recurrent, "recurrent"},
                                       {TrainMode::Baseline, "baseline"}};
constexpr Named<OptimizerKind> kOptimizers[] = {{OptimizerKind::AdamW, "adamw"},
                                                {OptimizerKind::Adam, "adam"}};
constexpr Named<LrSchedule> kSchedules[] = {{LrSchedule::Cosine, "cosine"},
                                            {LrSchedule::Constant, "constant"}};
constexpr Named<TrainScope> kScopes[] = {{TrainScope::All, "all"},
                                         {TrainScope::Recurrence, "recurrence"},
                                         {TrainScope::RecurrenceAndTopBlocks, "recurrence+top"}};

template <typename E, size_t N>
const char* nameOf(const Named<E> (&table)[N], E value) {
    for (const auto& n : table)
        if (n.value == value)
            return n.name;
    return table[0].name;
}
template <typename E, size_t N>
std::optional<E> valueOf(const Named<E> (&table)[N], const std::string& name) {
    for (const auto& n : table)
        if (name == n.name)
            return n.value;
    return std::nullopt;
}
// "all, recurrence or recurrence+top"
template <typename E, size_t N>
std::string namesOf(const Named<E> (&table)[N]) {
    std::string out;
    for (size_t i = 0; i < N; ++i)
        out += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + table[i].name;
    return out;
}

Json toJson(const TrainConfig& c) {
    Json j;
    j["base_model"] = c.baseModel;
    j["scratch"] = c.scratch;
    j["scratch_model"] = Json::parse(hfConfigJson(c.scratchModel));
    j["scratch_tokenizer"] = c.scratchTokenizer;
    j["tokenizer_sample_bytes"] = c.tokenizerSampleBytes;
    j["tokenizer_from"] = c.scratchTokenizerFrom;
    j["mode"] = nameOf(kModes, c.mode);
    j["insert_block"] = c.recurrence.insertBlock;
    j["ffn_width"] = c.recurrence.ffnWidth;
    j["ffn_depth"] = c.recurrence.ffnDepth;
    j["residual"] = c.recurrence.residual;
    j["slot_bias"] = c.recurrence.slotBias;
    j["slot_bias_init"] = c.slotBiasInit;
    j["slots"] = c.recurrence.slots;
    j["pool_last"] = c.recurrence.poolLast;
    j["sink"] = c.recurrence.sink;
    j["read_blocks"] = c.recurrence.readBlocks;
    j["write_tokens"] = c.recurrence.writeTokens;
    j["gate"] = c.recurrence.gate;
    j["memory_tokens"] = c.recurrence.memoryTokens;
    j["unwrap"] = c.unwrap;
    j["episodes_per_sequence"] = c.episodesPerSequence;
    j["corpus"] = c.corpus;
    j["validation"] = c.validation;
    j["validation_fraction"] = c.validationFraction;
    j["validation_works"] = c.validationWorks;
    j["held_out"] = c.heldOut;
    j["window"] = c.window;
    j["overlap"] = c.overlap;
    j["bptt_windows"] = c.bpttWindows;
    j["curriculum"] = c.curriculum;
    j["stage_steps"] = c.stageSteps;
    j["mix_shorter"] = c.mixShorter;
    j["batch_size"] = c.batchSize;
    j["accumulate"] = c.accumulate;
    j["steps"] = c.steps;
    j["epochs"] = c.epochs;
    j["optimizer"] = nameOf(kOptimizers, c.optimizer);
    j["lr"] = c.lr;
    j["module_lr_scale"] = c.moduleLrScale;
    j["min_lr_ratio"] = c.minLrRatio;
    j["warmup_steps"] = c.warmupSteps;
    j["schedule"] = nameOf(kSchedules, c.schedule);
    j["weight_decay"] = c.weightDecay;
    j["beta1"] = c.beta1;
    j["beta2"] = c.beta2;
    j["adam_eps"] = c.adamEps;
    j["clip_norm"] = c.clipNorm;
    j["seed"] = c.seed;
    j["scope"] = nameOf(kScopes, c.scope);
    j["adapter"] = c.adapter;
    j["top_blocks"] = c.topBlocks;
    j["validate_every_tokens"] = c.validateEveryTokens;
    j["validation_max_tokens"] = c.validationMaxTokens;
    j["validation_spread"] = c.validationSpread;
    j["patience"] = c.patience;
    j["checkpoint_every_steps"] = c.checkpointEverySteps;
    j["keep_checkpoints"] = c.keepCheckpoints;
    j["save_dtype"] = c.saveDtype;
    j["device"] = c.device;
    j["precision"] = c.precision;
    return j;
}

// Every field type- and range-checked (a run.json that lies gets an error, never an
// exception or a number that does not fit); validateTrainConfig checks the settings.
Result<TrainConfig> fromJson(const json::Json& j, const std::string& outDir) {
    constexpr int kInt = std::numeric_limits<int>::max();
    constexpr int64_t kInt64 = std::numeric_limits<int64_t>::max();
    constexpr double kHuge = std::numeric_limits<double>::max();
    const auto R = json::FieldReader::Required;
    TrainConfig c;
    c.outDir = outDir;
    c.resume = true;
    json::FieldReader f(j);
    f.string("base_model", c.baseModel, R);
    f.boolean("scratch", c.scratch, R);
    f.string("scratch_tokenizer", c.scratchTokenizer, R);
    f.integer("tokenizer_sample_bytes", 1, kInt64, c.tokenizerSampleBytes);
    f.string("tokenizer_from", c.scratchTokenizerFrom); // optional: added later
    std::string mode, optimizer, schedule, scope;
    f.string("mode", mode, R);
    f.integer("insert_block", 0, kInt, c.recurrence.insertBlock, R);
    f.integer("ffn_width", 1, kInt, c.recurrence.ffnWidth, R);
    f.integer("ffn_depth", 0, kInt, c.recurrence.ffnDepth, R);
    f.boolean("residual", c.recurrence.residual, R);
    f.boolean("slot_bias", c.recurrence.slotBias, R);
    f.number("slot_bias_init", -kHuge, kHuge, c.slotBiasInit, R);
    // Added later: runs written before them used the defaults of that time.
    c.recurrence.slots = 1;
    c.recurrence.poolLast = 0;
    c.recurrence.sink = false;
    c.recurrence.readBlocks = 1;
    c.recurrence.writeTokens = c.recurrence.gate = c.recurrence.memoryTokens = false;
    c.unwrap = false;
    c.episodesPerSequence = 0;
    c.curriculum.clear();
    c.stageSteps = 0;
    c.mixShorter = 0;
    f.integer("slots", 1, 64, c.recurrence.slots);
    f.integer("pool_last", 0, kInt, c.recurrence.poolLast);
    f.boolean("sink", c.recurrence.sink);
    f.integer("read_blocks", 1, kInt, c.recurrence.readBlocks);
    f.boolean("write_tokens", c.recurrence.writeTokens);
    f.boolean("gate", c.recurrence.gate);
    f.boolean("memory_tokens", c.recurrence.memoryTokens);
    f.boolean("unwrap", c.unwrap);
    f.integer("episodes_per_sequence", 0, kInt, c.episodesPerSequence);
    f.strings("corpus", c.corpus, true, R);
    f.strings("validation", c.validation, true, R);
    f.number("validation_fraction", 0, 1, c.validationFraction, R);
    f.strings("validation_works", c.validationWorks, true);
    f.strings("held_out", c.heldOut, true);
    f.integer("window", 0, kInt, c.window, R);
    f.integer("overlap", 0, kInt, c.overlap, R);
    f.integer("bptt_windows", 0, kInt, c.bpttWindows, R);
    f.integers("curriculum", 1, kInt, c.curriculum); // optional: added later
    f.integer("stage_steps", 0, kInt64, c.stageSteps);
    f.number("mix_shorter", 0, 1, c.mixShorter);
    f.integer("batch_size", 0, kInt, c.batchSize, R);
    f.integer("accumulate", 0, kInt, c.accumulate, R);
    f.integer("steps", 0, kInt64, c.steps, R);
    f.number("epochs", 0, kHuge, c.epochs, R);
    f.string("optimizer", optimizer, R);
    f.number("lr", 0, kHuge, c.lr, R);
    f.number("module_lr_scale", 0, kHuge, c.moduleLrScale, R);
    f.number("min_lr_ratio", 0, 1, c.minLrRatio, R);
    f.integer("warmup_steps", 0, kInt, c.warmupSteps, R);
    f.string("schedule", schedule, R);
    f.number("weight_decay", 0, kHuge, c.weightDecay, R);
    f.number("beta1", 0, 1, c.beta1, R);
    f.number("beta2", 0, 1, c.beta2, R);
    f.number("adam_eps", 0, kHuge, c.adamEps, R);
    f.number("clip_norm", 0, kHuge, c.clipNorm, R);
    f.string("scope", scope, R);
    f.integer("top_blocks", 0, kInt, c.topBlocks, R);
    f.integer("validate_every_tokens", 0, kInt64, c.validateEveryTokens, R);
    f.integer("validation_max_tokens", 0, kInt64, c.validationMaxTokens, R);
    f.integer("patience", 0, kInt, c.patience, R);
    f.integer("checkpoint_every_steps", 0, kInt64, c.checkpointEverySteps, R);
    f.integer("keep_checkpoints", 0, kInt, c.keepCheckpoints, R);
    f.string("save_dtype", c.saveDtype, R);
    f.string("device", c.device); // optional: runs written before devices ran on the CPU
    f.string("precision", c.precision);
    c.adapter = false; // optional: added later
    f.boolean("adapter", c.adapter);
    c.validationSpread = false; // optional: a run from before validates as it did
    f.boolean("validation_spread", c.validationSpread);
    auto damaged = [&](const std::string& what) {
        return makeError(ErrorCode::BadConfig, outDir + "/run.json is damaged: " + what);
    };
    if (!f.ok())
        return damaged(f.error());
    const auto seed = j.find("seed"); // any 64-bit unsigned number
    if (seed == j.end() || !seed->is_number_integer() ||
        (!seed->is_number_unsigned() && seed->get<int64_t>() < 0))
        return damaged("seed must be a non-negative integer");
    c.seed = seed->get<uint64_t>();
    const auto m = valueOf(kModes, mode);
    const auto o = valueOf(kOptimizers, optimizer);
    const auto sc = valueOf(kSchedules, schedule);
    const auto sp = valueOf(kScopes, scope);
    if (!m)
        return damaged("mode must be " + namesOf(kModes));
    if (!o)
        return damaged("optimizer must be " + namesOf(kOptimizers));
    if (!sc)
        return damaged("schedule must be " + namesOf(kSchedules));
    if (!sp)
        return damaged("scope must be " + namesOf(kScopes));
    c.mode = *m;
    c.optimizer = *o;
    c.schedule = *sc;
    c.scope = *sp;
    const auto model = j.find("scratch_model");
    if (model == j.end())
        return damaged("scratch_model is missing");
    auto sm = parseHfConfig(model->dump(), outDir + "/run.json");
    if (c.scratch && !sm)
        return sm.error();
    if (sm)
        c.scratchModel = *sm;
    // The settings a new run would be refused for are refused here too.
    TrainConfig check = c;
    check.resume = false;
    if (auto v = validateTrainConfig(check); !v)
        return damaged(v.error().message);
    return c;
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
    if (c.recurrence.ffnWidth < 1 || c.recurrence.ffnDepth < 0 || c.recurrence.insertBlock < 0 ||
        c.recurrence.readBlocks < 1)
        return bad("the recurrence module's shape");
    if (const auto why = curriculumProblem(c.curriculum, c.bpttWindows, c.mixShorter); !why.empty())
        return bad("--curriculum: " + why);
    if (!c.curriculum.empty() && c.stageSteps < 1)
        return bad("--curriculum needs --stage-steps of 1 or more");
    if (c.episodesPerSequence < 0 || c.episodesPerSequence > c.bpttWindows)
        return bad("--episodes must be in [0, bptt-windows]");
    if (c.validationFraction < 0 || c.validationFraction >= 1)
        return bad("--val-fraction must be in [0, 1)");
    if (c.saveDtype != "f32" && c.saveDtype != "f16" && c.saveDtype != "bf16")
        return bad("--save-dtype must be f32, f16 or bf16");
    const bool cuda = c.device == "cuda" || c.device.rfind("cuda:", 0) == 0;
    if (c.device != "cpu" && !cuda)
        return bad("--device must be cpu, cuda or cuda:N");
    if (c.precision != "auto" && c.precision != "f32" && c.precision != "bf16")
        return bad("--precision must be auto, f32 or bf16");
    if (c.precision == "bf16" && !cuda)
        return bad("--precision bf16 (autocast) needs --device cuda");
    return {};
}

} // namespace baton::engine
