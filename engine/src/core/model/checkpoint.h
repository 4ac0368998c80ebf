// Hugging Face GPT-2 checkpoint folders: validation, loading into Gpt2, saving.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "model/gpt2.h"
#include "model/model_impl.h"
#include "model/recurrence.h"
#include "model/safetensors.h"
#include "model/weight_files.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace baton::engine {

struct LoadedGpt2 {
    ModelConfig config;
    Gpt2 net{nullptr};
    std::string storageDtype; // "F32", "F16", "BF16" or "mixed"
    std::string contentHash;  // over config.json and every tensor's bytes
    uint64_t mappedBytes = 0; // of the stored tensors, those the weights share (no copy)
    uint64_t keptBytes = 0;   // converted weights mapped from converted_weights.h's files
};

// Validates config.json against the weight files (weight_files.h: model.safetensors or
// its shards) completely, then loads the
// weights tensor by tensor from a memory map of the file, checking `cancel` and
// reporting progress: as float32, or with `packTo` other than F32 the weight matrices
// (Gpt2Impl::packableWeights) straight into that format (a CPU model), never holding
// them in float32. With `share`, a tensor stored in the format it is held in is not
// copied at all: the weights are the map's pages (a Conv1D weight seen transposed),
// kept mapped for as long as the model lives. The content hash runs beside the
// conversions on a thread of its own. With `keepConverted`, the matrices converted to
// packTo are mapped from the weights an earlier load kept (converted_weights.h) when the
// content hash is remembered (identity_memo.h) and such a file qualifies; otherwise they
// are converted and then kept for the next load.
Result<LoadedGpt2> loadGpt2(const std::string& folder, const CancelToken& cancel,
                            const std::function<bool(double)>& progress,
                            WeightFormat packTo = WeightFormat::F32, bool share = false,
                            bool keepConverted = false);

// Writes model.safetensors in Hugging Face layout (Conv1D weights [in, out]) with
// the given storage dtype and optional name prefix ("transformer.").
Result<void> saveGpt2Weights(Gpt2Impl& net, const std::string& path, StDtype dtype,
                             const std::string& prefix = "");

struct LoadedRecurrence {
    RecurrenceConfig config;
    Recurrence module{nullptr};
    std::string contentHash; // over baton.json and the module's bytes
};

// Loads baton.json + recurrence.safetensors when the folder has them (a plain
// Hugging Face folder gives an empty optional: a baseline model). Refuses a
// baton.json that disagrees with the weights, the model or the tokenizer.
Result<std::optional<LoadedRecurrence>> loadRecurrence(const std::string& folder,
                                                       const ModelConfig& model,
                                                       const std::string& tokenizerIdentity);

// Writes recurrence.safetensors and baton.json into `folder`.
Result<void> saveRecurrence(RecurrenceImpl& module, const std::string& folder,
                            const std::string& tokenizerIdentity, StDtype dtype = StDtype::F32);

// Writes a complete model folder (config.json, model.safetensors, the tokenizer
// files copied from tokenizerSourceDir, and for recurrent models
// recurrence.safetensors + baton.json). The folder is built beside the target and
// renamed into place, replacing an older one only once the new one is complete. With
// `tokenizerIdentity` set, no tokenizer files are written and baton.json records that
// identity (a model whose token ids are a synthetic task's; loadModelWithoutTokenizer).
Result<void> saveModelFolder(Model::Impl& model, const std::string& folder, StDtype dtype,
                             const std::string& tokenizerSourceDir,
                             const std::string& tokenizerIdentity = "");

// A recurrence adapter (train --adapter): recurrence.safetensors and baton.json, as a
// recurrent model folder holds them, and adapter.json naming the baseline model it was
// trained on (its identity: the hash of its weights and tokenizer) so that it is never
// loaded on another. Built beside the target and renamed into place.
Result<void> saveAdapterFolder(RecurrenceImpl& module, const std::string& folder,
                               const std::string& tokenizerIdentity, StDtype dtype,
                               const std::string& baseIdentity, const std::string& baseName);
// AdapterBase and readAdapterBase: baton/engine/model.h.

// Copies a model's tokenizer files (vocab.json + merges.txt, or tokenizer.model)
// from one folder to another; an error if there are none.
Result<void> copyTokenizerFiles(const std::string& fromDir, const std::string& toDir);

// Parses "f32", "f16" or "bf16".
Result<StDtype> storageDtype(const std::string& name);

} // namespace baton::engine
