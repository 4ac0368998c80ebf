#include "baton/engine/training.h"

#include "baton/engine/sampling.h"
#include "baton/engine/scoring.h"
#include "baton/engine/windows.h"
#include "model/checkpoint.h"
#include "model/hf_config.h"
#include "probe/episodes.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "training/bptt.h"
#include "training/corpus.h"
#include "training/optimizer.h"
#include "util/files.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <dirent.h>
#include <numeric>

namespace baton::engine {

namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr const char* kRunFile = "run.json";

// ---- configuration <-> JSON (run.json) ----

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

Result<TrainConfig> fromJson(const Json& j, const std::string& outDir) {
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

// ---- data ----

struct TrainingData {
    TokenizedCorpus train, validation;
    std::vector<std::vector<WindowSpan>> spans; // per training document
    std::vector<Sequence> sequences;
};

std::vector<int64_t> epochOrder(size_t count, uint64_t seed, int64_t epoch) {
    std::vector<int64_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    Rng rng(seed * 1000003ULL + static_cast<uint64_t>(epoch));
    for (size_t i = count; i > 1; --i)
        std::swap(order[i - 1], order[rng.next() % i]);
    return order;
}

// ---- the run ----

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
        m_log.push_back(e);
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
    Result<void> prepareModel();
    // The documents given as text, written into the run's folder and added to the
    // corpus and validation paths.
    Result<void> writeDocuments();
    Result<void> prepareData();
    void setTrainable();
    WindowBatch nextBatch();
    double learningRate(int64_t step) const;
    Result<TrainEvent> validate();
    Result<void> writeCheckpoint();
    Result<bool> restoreCheckpoint();
    std::string latestCheckpoint() const;
    void pruneCheckpoints();

    TrainConfig c;
    std::function<bool(const TrainEvent&)> m_onEvent;
    CancelToken m_cancel;
    std::vector<TrainEvent> m_log;

    std::shared_ptr<Model> m_model;
    std::string m_tokenizerDir;
    TrainingData m_data;
    std::unique_ptr<AdamOptimizer> m_opt;
    std::vector<torch::Tensor> m_netParams, m_moduleParams;
    std::vector<bool> m_sentenceEnd; // for memory episodes
    int64_t m_totalSteps = 0;

    // Progress, saved in every checkpoint.
    int64_t m_step = 0, m_tokens = 0, m_epoch = 0, m_position = 0;
    int64_t m_nextValidation = 0;
    double m_bestVal = 0;
    bool m_haveBest = false;
    int m_sinceBest = 0;
    std::vector<int64_t> m_order;
};

Result<void> Run::prepareModel() {
    const bool recurrent = c.mode == TrainMode::Recurrent;
    RecurrenceConfig rec = c.recurrence;
    rec.window = c.window;
    rec.overlap = c.overlap;
    if (c.scratch) {
        const std::string tokDir = files::join(c.outDir, "tokenizer");
        const std::string tokPath = files::join(tokDir, "tokenizer.model");
        if (!files::exists(tokPath)) {
            auto docs = loadCorpus(c.corpus, c.unwrap);
            if (!docs)
                return docs.error();
            std::vector<std::string_view> texts;
            for (const auto& d : *docs)
                texts.push_back(d.text);
            files::makeDirectories(tokDir);
            info("training a SentencePiece " + c.scratchTokenizer + " tokenizer with " +
                 std::to_string(c.scratchModel.vocabSize) + " pieces");
            // Lossless: identity normalisation, spaces and new lines kept, bytes as a fallback.
            const std::map<std::string, std::string> options = {
                {"model_type", c.scratchTokenizer},
                {"vocab_size", std::to_string(c.scratchModel.vocabSize)},
                {"character_coverage", "1.0"},
                {"byte_fallback", "true"},
                {"add_dummy_prefix", "false"},
                {"remove_extra_whitespaces", "false"},
                {"normalization_rule_name", "identity"},
                {"split_digits", "true"},
                {"allow_whitespace_only_pieces", "true"},
                {"user_defined_symbols", "\n"},
                {"max_sentence_length", "100000"},
                {"input_sentence_size", "2000000"},
                {"shuffle_input_sentence", "true"},
                {"seed_sentencepiece_size", "1000000"},
                {"num_threads", "2"},
                {"bos_id", "-1"},
                {"eos_id", "1"},
                {"unk_id", "0"},
                {"pad_id", "-1"},
                {"minloglevel", "2"}};
            if (auto r = SentencePieceTokenizer::train(texts, options, tokPath); !r)
                return r;
        }
        auto tok = loadTokenizer(tokDir);
        if (!tok)
            return tok.error();
        ModelConfig mc = c.scratchModel;
        mc.eosTokenId = mc.bosTokenId = (*tok)->eosId();
        auto model = createModel(mc, *tok, c.seed, {},
                                 recurrent ? std::optional<RecurrenceConfig>(rec) : std::nullopt);
        if (!model)
            return model.error();
        m_model = *model;
        m_tokenizerDir = tokDir;
        if (recurrent && m_model->impl().recurrence->slotBias.defined()) {
            torch::NoGradGuard noGrad;
            m_model->impl().recurrence->slotBias.fill_(c.slotBiasInit);
        }
        info("created a " + std::to_string(mc.nLayer) + "-layer, " + std::to_string(mc.nEmbd) +
             "-wide GPT-2 from scratch (" + std::to_string(m_model->info().parameterCount) +
             " parameters)");
    } else {
        auto model = Model::load(c.baseModel);
        if (!model)
            return model.error();
        m_model = *model;
        // The run keeps its own copy of the tokenizer: every checkpoint and output
        // folder is written from it, whatever happens to the base model's folder.
        m_tokenizerDir = files::join(c.outDir, "tokenizer");
        files::makeDirectories(m_tokenizerDir);
        if (auto r = copyTokenizerFiles(c.baseModel, m_tokenizerDir); !r)
            return r;
        Model::Impl& m = m_model->impl();
        if (!recurrent && m.recurrent()) {
            m.recurrence = Recurrence(nullptr);
            m.info.recurrence.reset();
            info("the base model's recurrence module is dropped: this is a baseline run");
        }
        if (recurrent) {
            if (m.recurrent()) {
                auto kept = m.recurrence->config();
                kept.window = c.window;
                kept.overlap = c.overlap;
                Recurrence fresh(m.info.config, kept);
                torch::NoGradGuard noGrad;
                auto src = m.recurrence->named_parameters(true);
                for (auto& p : fresh->named_parameters(true))
                    p.value().copy_(src[p.key()]);
                m.recurrence = fresh;
                info("continuing the base model's recurrence module");
            } else {
                if (auto r = validateRecurrenceConfig(rec, m.info.config); !r)
                    return r;
                torch::manual_seed(c.seed);
                m.recurrence = Recurrence(m.info.config, rec);
                m.recurrence->initialise();
                if (m.recurrence->slotBias.defined()) {
                    torch::NoGradGuard noGrad;
                    m.recurrence->slotBias.fill_(c.slotBiasInit);
                }
            }
            m.info.recurrence = m.recurrence->config();
        }
        if (c.window > m.info.config.nPositions)
            return makeError(ErrorCode::InvalidArgument,
                             "--window " + std::to_string(c.window) + " exceeds the model's " +
                                 std::to_string(m.info.config.nPositions) + " positions");
    }
    return {};
}

Result<void> Run::writeDocuments() {
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

Result<void> Run::prepareData() {
    auto trainDocs = loadCorpus(c.corpus, c.unwrap);
    if (!trainDocs)
        return trainDocs.error();
    std::vector<Document> valDocs;
    if (!c.validation.empty()) {
        auto v = loadCorpus(c.validation, c.unwrap);
        if (!v)
            return v.error();
        valDocs = std::move(*v);
    } else if (trainDocs->size() >= 2 && c.validationFraction > 0) {
        const size_t k = std::max<size_t>(
            1, static_cast<size_t>(std::lround(c.validationFraction * double(trainDocs->size()))));
        const size_t held = std::min(k, trainDocs->size() - 1);
        valDocs.assign(trainDocs->end() - long(held), trainDocs->end());
        trainDocs->resize(trainDocs->size() - held);
    }
    const std::string cache = files::join(c.outDir, "data");
    files::makeDirectories(cache);
    auto train = tokenizeCached(*trainDocs, *m_model->tokenizer(), cache);
    if (!train)
        return train.error();
    m_data.train = std::move(*train);
    if (!valDocs.empty()) {
        auto val = tokenizeCached(valDocs, *m_model->tokenizer(), cache);
        if (!val)
            return val.error();
        m_data.validation = std::move(*val);
    }
    m_data.sequences =
        planSequences(m_data.train, {c.window, c.overlap}, c.bpttWindows, m_data.spans);
    if (c.episodesPerSequence > 0)
        m_sentenceEnd = sentenceEndTokens(*m_model->tokenizer());
    if (m_data.sequences.empty())
        return makeError(
            ErrorCode::InvalidArgument,
            "the training documents are too short: a sequence needs " +
                std::to_string(c.bpttWindows) + " full windows of " + std::to_string(c.window) +
                " tokens (at least " +
                std::to_string(int64_t(c.bpttWindows) * (c.window - c.overlap) + c.overlap + 1) +
                " tokens in one document)");
    std::string valNames;
    for (const auto& n : m_data.validation.names)
        valNames += (valNames.empty() ? "" : ", ") + n;
    info("training on " + std::to_string(m_data.train.docs.size()) + " documents (" +
         std::to_string(m_data.train.tokenCount()) + " tokens, " +
         std::to_string(m_data.sequences.size()) + " sequences of " +
         std::to_string(c.bpttWindows) +
         " windows); validation: " + (valNames.empty() ? std::string("none") : valNames));
    return {};
}

void Run::setTrainable() {
    Model::Impl& m = m_model->impl();
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

WindowBatch Run::nextBatch() {
    const int64_t B = c.batchSize, W = c.bpttWindows, T = c.window;
    std::vector<int64_t> inputs(size_t(W * B * T)), targets(size_t(W * B * T), -1);
    int64_t scored = 0;
    for (int64_t b = 0; b < B; ++b) {
        if (m_position >= int64_t(m_order.size())) {
            ++m_epoch;
            m_position = 0;
            m_order = epochOrder(m_data.sequences.size(), c.seed, m_epoch);
        }
        const int64_t picked = m_order[size_t(m_position++)];
        const Sequence& s = m_data.sequences[size_t(picked)];
        const auto& ids = m_data.train.docs[size_t(s.doc)];
        const auto& spans = m_data.spans[size_t(s.doc)];
        // The sequence's tokens, with memory episodes mixed in when asked for (the same
        // ones for every run of this seed: they depend on the seed, epoch and sequence).
        const int64_t origin = spans[size_t(s.firstSpan)].start;
        // Up to the target of the last window's last position.
        const int64_t end = spans[size_t(s.firstSpan + W - 1)].lastScored + 1;
        std::vector<int32_t> stream(ids.begin() + origin, ids.begin() + end);
        if (c.episodesPerSequence > 0) {
            Rng rng(c.seed * 1000003ULL + uint64_t(m_epoch) * 7919ULL + uint64_t(picked));
            mixEpisodes(stream, c.episodesPerSequence, c.bpttWindows, {c.window, c.overlap},
                        *m_model->tokenizer(), m_sentenceEnd, rng);
        }
        for (int64_t n = 0; n < W; ++n) {
            const WindowSpan& span = spans[size_t(s.firstSpan + n)];
            const size_t base = size_t((n * B + b) * T);
            for (int64_t p = 0; p < T; ++p) {
                inputs[base + size_t(p)] = stream[size_t(span.start - origin + p)];
                const int64_t target = span.start + p + 1;
                if (target >= span.firstScored && target <= span.lastScored) {
                    targets[base + size_t(p)] = stream[size_t(target - origin)];
                    ++scored;
                }
            }
        }
    }
    WindowBatch batch;
    batch.inputs = torch::tensor(inputs).view({W, B, T});
    batch.targets = torch::tensor(targets).view({W, B, T});
    batch.scored = scored;
    return batch;
}

double Run::learningRate(int64_t step) const {
    // step is 1-based: linear warm-up from 0, then constant or cosine decay.
    if (c.warmupSteps > 0 && step <= c.warmupSteps)
        return c.lr * double(step) / double(c.warmupSteps);
    if (c.schedule == LrSchedule::Constant || m_totalSteps <= c.warmupSteps)
        return c.lr;
    const double progress =
        std::min(1.0, double(step - c.warmupSteps) / double(m_totalSteps - c.warmupSteps));
    const double floor = c.lr * c.minLrRatio;
    return floor + (c.lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

Result<TrainEvent> Run::validate() {
    Model::Impl& m = m_model->impl();
    if (m.recurrent())
        m.refreshRecurrenceCaches();
    TrainEvent e;
    e.kind = TrainEvent::Kind::Validation;
    e.step = m_step;
    e.totalSteps = m_totalSteps;
    e.tokens = m_tokens;
    auto evaluate = [&](bool useState, double& loss, std::vector<double>& bands) -> Result<void> {
        double nll = 0;
        int64_t scored = 0, budget = c.validationMaxTokens;
        std::vector<double> bandNll(3, 0.0);
        std::vector<int64_t> bandCount(3, 0);
        for (const auto& doc : m_data.validation.docs) {
            if (budget <= 1)
                break;
            const int64_t take = std::min<int64_t>(budget, int64_t(doc.size()));
            budget -= take;
            ScoreOptions o;
            o.windows = {c.window, c.overlap};
            o.state = useState ? StateSource::On : StateSource::Off;
            o.keepPerToken = false;
            o.cancel = m_cancel;
            auto r =
                scoreTokens(*m_model, std::vector<int32_t>(doc.begin(), doc.begin() + take), o);
            if (!r)
                return r.error();
            nll += r->nllSum;
            scored += r->scoredTokens;
            for (size_t i = 0; i < 3; ++i) {
                bandNll[i] += r->bands[i].nllSum;
                bandCount[i] += r->bands[i].tokens;
            }
        }
        loss = scored ? nll / double(scored) : 0.0;
        bands.clear();
        for (size_t i = 0; i < 3; ++i)
            bands.push_back(bandCount[i] ? bandNll[i] / double(bandCount[i]) : 0.0);
        return {};
    };
    if (auto r = evaluate(true, e.valLoss, e.valBandLoss); !r)
        return r.error();
    e.valPerplexity = std::exp(e.valLoss);
    if (m.recurrent())
        if (auto r = evaluate(false, e.valLossNoState, e.valBandLossNoState); !r)
            return r.error();
    return e;
}

std::string Run::latestCheckpoint() const {
    auto name = files::readAll(files::join(c.outDir, "LATEST"), 4096);
    if (!name)
        return {};
    std::string n = *name;
    while (!n.empty() && (n.back() == '\n' || n.back() == ' '))
        n.pop_back();
    const std::string dir = files::join(files::join(c.outDir, "checkpoints"), n);
    return files::isDirectory(dir) ? dir : std::string();
}

void Run::pruneCheckpoints() {
    const std::string root = files::join(c.outDir, "checkpoints");
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(root.c_str())) {
        while (dirent* e = ::readdir(dir)) {
            const std::string n = e->d_name;
            if (n.rfind("step-", 0) == 0 && n.find('.') == std::string::npos)
                names.push_back(n);
            else if (n.find(".partial") != std::string::npos)
                files::removeTree(files::join(root, n)); // left by an interrupted write
        }
        ::closedir(dir);
    }
    std::sort(names.begin(), names.end());
    while (int(names.size()) > std::max(1, c.keepCheckpoints)) {
        files::removeTree(files::join(root, names.front()));
        names.erase(names.begin());
    }
}

Result<void> Run::writeCheckpoint() {
    char name[32];
    std::snprintf(name, sizeof(name), "step-%09lld", static_cast<long long>(m_step));
    const std::string root = files::join(c.outDir, "checkpoints");
    files::makeDirectories(root);
    const std::string dir = files::join(root, name);
    // The model folder first (written beside and renamed into place), then the
    // optimizer and progress files inside it; LATEST moves only when all is there.
    if (auto r = saveModelFolder(m_model->impl(), dir, StDtype::F32, m_tokenizerDir); !r)
        return r;
    if (auto r = m_opt->save(files::join(dir, "optimizer.safetensors")); !r)
        return r;
    Json j;
    j["step"] = m_step;
    j["tokens"] = m_tokens;
    j["epoch"] = m_epoch;
    j["position"] = m_position;
    j["next_validation"] = m_nextValidation;
    j["have_best"] = m_haveBest;
    j["best_val"] = m_bestVal;
    j["since_best"] = m_sinceBest;
    j["total_steps"] = m_totalSteps;
    if (auto r = files::writeAtomically(files::join(dir, "trainer.json"), j.dump(2)); !r)
        return r;
    files::syncDirectory(dir);
    if (auto r = files::writeAtomically(files::join(c.outDir, "LATEST"), std::string(name) + "\n");
        !r)
        return r;
    pruneCheckpoints();
    TrainEvent e;
    e.kind = TrainEvent::Kind::Checkpoint;
    e.step = m_step;
    e.totalSteps = m_totalSteps;
    e.tokens = m_tokens;
    e.checkpoint = dir;
    emit(e);
    return {};
}

// Loads the latest checkpoint's model and progress; false when there is none.
Result<bool> Run::restoreCheckpoint() {
    const std::string dir = latestCheckpoint();
    if (dir.empty())
        return false;
    auto model = Model::load(dir);
    if (!model)
        return model.error();
    m_model = *model;
    m_tokenizerDir = files::join(c.outDir, "tokenizer");
    auto text = files::readAll(files::join(dir, "trainer.json"));
    if (!text)
        return text.error();
    try {
        const auto j = Json::parse(*text);
        m_step = j.at("step").get<int64_t>();
        m_tokens = j.at("tokens").get<int64_t>();
        m_epoch = j.at("epoch").get<int64_t>();
        m_position = j.at("position").get<int64_t>();
        m_nextValidation = j.at("next_validation").get<int64_t>();
        m_haveBest = j.at("have_best").get<bool>();
        m_bestVal = j.at("best_val").get<double>();
        m_sinceBest = j.at("since_best").get<int>();
    } catch (const nlohmann::json::exception& e) {
        return makeError(ErrorCode::BadConfig, dir + "/trainer.json is damaged: " + e.what());
    }
    return true;
}

Result<TrainResult> Run::run() {
    if (auto r = validateTrainConfig(c); !r)
        return r.error();
    files::makeDirectories(c.outDir);
    const std::string runFile = files::join(c.outDir, kRunFile);
    bool restored = false;
    if (c.resume) {
        auto text = files::readAll(runFile, size_t(1) << 20);
        if (!text)
            return makeError(ErrorCode::FileNotFound,
                             "nothing to resume in " + c.outDir + " (no run.json)");
        Json j;
        try {
            j = Json::parse(*text);
        } catch (const nlohmann::json::exception& e) {
            return makeError(ErrorCode::InvalidJson, runFile + ": " + e.what());
        }
        auto stored = fromJson(j, c.outDir);
        if (!stored)
            return stored.error();
        c = *stored;
        auto r = restoreCheckpoint();
        if (!r)
            return r.error();
        restored = *r;
        if (restored)
            info("resuming at step " + std::to_string(m_step));
        else
            info("no checkpoint yet: starting the run again");
    } else {
        if (files::exists(runFile))
            return makeError(ErrorCode::InvalidArgument,
                             c.outDir + " already holds a training run: resume it with --resume "
                                        "or choose another --out");
        if (auto r = writeDocuments(); !r)
            return r.error();
        if (auto r = files::writeAtomically(runFile, toJson(c).dump(2) + "\n"); !r)
            return r.error();
    }
    if (!restored)
        if (auto r = prepareModel(); !r)
            return r.error();
    if (auto r = prepareData(); !r)
        return r.error();
    setTrainable();
    if (restored)
        if (auto r = m_opt->load(files::join(latestCheckpoint(), "optimizer.safetensors")); !r)
            return r.error();
    const int64_t perStep = int64_t(c.batchSize) * c.accumulate;
    m_totalSteps =
        c.steps > 0
            ? c.steps
            : std::max<int64_t>(1, int64_t(std::ceil(c.epochs * double(m_data.sequences.size()) /
                                                     double(perStep))));
    m_order = epochOrder(m_data.sequences.size(), c.seed, m_epoch);
    if (!restored)
        m_nextValidation = c.validateEveryTokens;

    const bool recurrent = c.mode == TrainMode::Recurrent;
    TrainResult result;
    const auto start = Clock::now();
    const int64_t firstStep = m_step;
    auto gradNorm = [](const std::vector<torch::Tensor>& ps) {
        double sq = 0;
        for (const auto& p : ps)
            if (p.grad().defined())
                sq += p.grad().pow(2).sum().item<double>();
        return std::sqrt(sq);
    };
    try {
        while (m_step < m_totalSteps) {
            if (m_cancel.cancelled()) {
                result.cancelled = true;
                break;
            }
            const auto t0 = Clock::now();
            m_opt->zeroGrad();
            std::vector<WindowBatch> batches;
            int64_t scored = 0;
            for (int a = 0; a < c.accumulate; ++a) {
                batches.push_back(nextBatch());
                scored += batches.back().scored;
            }
            BatchStats total;
            for (const auto& b : batches) {
                const BatchStats s =
                    accumulateGradients(m_model->impl(), b, recurrent, double(scored));
                total.nllSum += s.nllSum;
                for (size_t i = 0; i < 3; ++i) {
                    total.slotMass[i] += s.slotMass[i];
                    total.slotCount[i] += s.slotCount[i];
                }
            }
            TrainEvent e;
            e.kind = TrainEvent::Kind::Step;
            e.gradNorm = gradNorm(m_netParams);
            e.moduleGradNorm = gradNorm(m_moduleParams);
            if (c.clipNorm > 0) {
                std::vector<torch::Tensor> all = m_netParams;
                all.insert(all.end(), m_moduleParams.begin(), m_moduleParams.end());
                torch::nn::utils::clip_grad_norm_(all, c.clipNorm);
            }
            ++m_step;
            e.lr = learningRate(m_step);
            m_opt->step(e.lr);
            m_tokens += scored;
            const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
            const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
            e.step = m_step;
            e.totalSteps = m_totalSteps;
            e.tokens = m_tokens;
            e.loss = total.nllSum / double(std::max<int64_t>(scored, 1));
            e.tokensPerSecond = double(scored) / std::max(seconds, 1e-9);
            e.etaSeconds = elapsed / double(m_step - firstStep) * double(m_totalSteps - m_step);
            if (recurrent)
                for (size_t i = 0; i < 3; ++i)
                    e.slotAttention.push_back(
                        total.slotCount[i] ? total.slotMass[i] / double(total.slotCount[i]) : 0.0);
            if (!std::isfinite(e.loss))
                return makeError(ErrorCode::Internal,
                                 "the loss is not finite at step " + std::to_string(m_step) +
                                     " (try a lower learning rate); the last checkpoint is intact");
            emit(e);

            const bool last = m_step == m_totalSteps;
            bool stop = false;
            if (!m_data.validation.docs.empty() &&
                ((c.validateEveryTokens > 0 && m_tokens >= m_nextValidation) || last)) {
                while (c.validateEveryTokens > 0 && m_nextValidation <= m_tokens)
                    m_nextValidation += c.validateEveryTokens;
                auto v = validate();
                if (!v) {
                    if (v.error().code == ErrorCode::Cancelled) {
                        result.cancelled = true;
                        break;
                    }
                    return v.error();
                }
                v->improved = !m_haveBest || v->valLoss < m_bestVal;
                if (v->improved) {
                    m_bestVal = v->valLoss;
                    m_haveBest = true;
                    m_sinceBest = 0;
                    if (auto r = saveModelFolder(m_model->impl(), files::join(c.outDir, "best"),
                                                 StDtype::F32, m_tokenizerDir);
                        !r)
                        return r.error();
                } else {
                    ++m_sinceBest;
                }
                emit(*v);
                if (c.patience > 0 && m_sinceBest >= c.patience) {
                    info("validation loss did not improve for " + std::to_string(c.patience) +
                         " validations: stopping early");
                    result.stoppedEarly = stop = true;
                }
            }
            if (last || stop || m_cancel.cancelled() ||
                (c.checkpointEverySteps > 0 && m_step % c.checkpointEverySteps == 0))
                if (auto r = writeCheckpoint(); !r)
                    return r.error();
            if (stop)
                break;
        }
        if (m_cancel.cancelled())
            result.cancelled = true;
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::OutOfMemory, "out of memory while training");
    }

    result.steps = m_step;
    result.tokens = m_tokens;
    result.bestValLoss = m_bestVal;
    if (m_haveBest)
        result.bestDir = files::join(c.outDir, "best");
    if (!result.cancelled) {
        auto dtype = storageDtype(c.saveDtype);
        if (!dtype)
            return dtype.error();
        // The output is the best-validation model when validation ran, else the last.
        std::shared_ptr<Model> source = m_model;
        std::string tokenizerDir = m_tokenizerDir;
        if (m_haveBest) {
            auto best = Model::load(result.bestDir);
            if (!best)
                return best.error();
            source = *best;
            tokenizerDir = result.bestDir;
        }
        result.modelDir = files::join(c.outDir, "model");
        if (auto r = saveModelFolder(source->impl(), result.modelDir, *dtype, tokenizerDir); !r)
            return r.error();
    }
    TrainEvent done;
    done.kind = TrainEvent::Kind::Done;
    done.step = m_step;
    done.totalSteps = m_totalSteps;
    done.tokens = m_tokens;
    done.checkpoint = result.cancelled ? latestCheckpoint() : result.modelDir;
    done.message =
        result.cancelled ? "cancelled" : (result.stoppedEarly ? "stopped early" : "finished");
    emit(done);
    return result;
}

} // namespace

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
