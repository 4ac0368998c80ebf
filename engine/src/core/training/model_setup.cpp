#include "training/model_setup.h"

#include "model/checkpoint.h"
#include "model/model_impl.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "training/corpus.h"
#include "util/files.h"

#include <torch/torch.h>

#include <map>

namespace baton::engine {

Result<TrainingModel> setUpModel(const TrainConfig& c,
                                 const std::function<void(const std::string&)>& info) {
    TrainingModel out;
    const bool recurrent = c.mode == TrainMode::Recurrent;
    RecurrenceConfig rec = c.recurrence;
    rec.window = c.window;
    rec.overlap = c.overlap;
    if (c.scratch) {
        const std::string tokDir = files::join(c.outDir, "tokenizer");
        const std::string tokPath = files::join(tokDir, "tokenizer.model");
        if (!files::exists(tokPath) && !c.scratchTokenizerFrom.empty()) {
            files::makeDirectories(tokDir);
            if (auto r = copyTokenizerFiles(c.scratchTokenizerFrom, tokDir); !r)
                return r.error();
            if (!files::exists(tokPath))
                return makeError(ErrorCode::InvalidArgument,
                                 c.scratchTokenizerFrom +
                                     " has no SentencePiece tokenizer.model to pretrain with");
            info("using the tokenizer of " + c.scratchTokenizerFrom);
        }
        if (!files::exists(tokPath)) {
            auto docs = sampleCorpus(c.corpus, c.unwrap, uint64_t(c.tokenizerSampleBytes),
                                     c.validationWorks);
            if (!docs)
                return docs.error();
            uint64_t sampled = 0;
            for (const auto& d : *docs)
                sampled += d.text.size();
            std::vector<std::string_view> texts;
            for (const auto& d : *docs)
                texts.push_back(d.text);
            files::makeDirectories(tokDir);
            info("training a SentencePiece " + c.scratchTokenizer + " tokenizer with " +
                 std::to_string(c.scratchModel.vocabSize) + " pieces on " +
                 std::to_string(docs->size()) + " documents (" + std::to_string(sampled / 1000000) +
                 " MB of text)");
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
                return r.error();
        }
        auto tok = loadTokenizer(tokDir);
        if (!tok)
            return tok.error();
        ModelConfig mc = c.scratchModel;
        if (!c.scratchTokenizerFrom.empty())
            mc.vocabSize = (*tok)->vocabSize();
        mc.eosTokenId = mc.bosTokenId = (*tok)->eosId();
        // Training reads texts without a start-of-text token before them (batches.cpp),
        // so the model never learns one: it reads texts without it too.
        mc.addBosToken = false;
        LoadOptions onDevice;
        onDevice.device = c.device;
        auto model = createModel(mc, *tok, c.seed, onDevice,
                                 recurrent ? std::optional<RecurrenceConfig>(rec) : std::nullopt);
        if (!model)
            return model.error();
        out.model = *model;
        out.tokenizerDir = tokDir;
        if (recurrent && ModelAccess::of(*out.model).recurrence->slotBias.defined()) {
            torch::NoGradGuard noGrad;
            ModelAccess::of(*out.model).recurrence->slotBias.fill_(c.slotBiasInit);
        }
        info("created a " + std::to_string(mc.nLayer) + "-layer, " + std::to_string(mc.nEmbd) +
             "-wide GPT-2 from scratch (" + std::to_string(out.model->info().parameterCount) +
             " parameters)");
    } else {
        LoadOptions load;
        load.mapWeights = false; // training writes the weights
        load.device = c.device;
        auto model = Model::load(c.baseModel, load);
        if (!model)
            return model.error();
        out.model = *model;
        // The run keeps its own copy of the tokenizer: every checkpoint and output
        // folder is written from it, whatever happens to the base model's folder.
        out.tokenizerDir = files::join(c.outDir, "tokenizer");
        files::makeDirectories(out.tokenizerDir);
        if (auto r = copyTokenizerFiles(c.baseModel, out.tokenizerDir); !r)
            return r.error();
        Model::Impl& m = ModelAccess::of(*out.model);
        if (c.adapter) {
            if (!recurrent || c.scope != TrainScope::Recurrence)
                return makeError(ErrorCode::InvalidArgument,
                                 "an adapter trains the recurrence module alone: mode "
                                 "recurrent, scope recurrence");
            if (m.recurrent())
                return makeError(ErrorCode::InvalidArgument,
                                 c.baseModel + " has a recurrence module already: an adapter is "
                                               "trained on a baseline model");
            out.baseIdentity = m.info.identity;
        }
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
                    return r.error();
                torch::manual_seed(c.seed);
                m.recurrence = Recurrence(m.info.config, rec);
                m.recurrence->initialise();
                if (m.recurrence->slotBias.defined()) {
                    torch::NoGradGuard noGrad;
                    m.recurrence->slotBias.fill_(c.slotBiasInit);
                }
            }
            m.recurrence->to(m.device); // made on the CPU
            m.info.recurrence = m.recurrence->config();
        }
        if (c.window > m.info.config.nPositions)
            return makeError(ErrorCode::InvalidArgument,
                             "--window " + std::to_string(c.window) + " exceeds the model's " +
                                 std::to_string(m.info.config.nPositions) + " positions");
    }
    return out;
}

} // namespace baton::engine
