// The weight files of a Hugging Face GPT-2 folder, checked before anything is loaded:
// model.safetensors, or the shards model.safetensors.index.json names (as
// transformers writes a large model: {"metadata": {...}, "weight_map": {tensor: file}}).
// Pickled checkpoints are refused. Torch-free.
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/model_info.h"
#include "model/safetensors.h"

#include <map>
#include <string>
#include <vector>

namespace baton::engine {

// One tensor a GPT-2 checkpoint must hold, by its unprefixed Hugging Face name.
struct ExpectedTensor {
    std::string name;
    std::vector<int64_t> hfShape; // as stored: Conv1D weights are [in, out]
    bool conv1d = false;          // stored transposed relative to Gpt2's [out, in]
};
std::vector<ExpectedTensor> expectedGpt2Tensors(const ModelConfig& config);

// "[768, 2304]"
std::string shapeText(const std::vector<int64_t>& shape);

// Refuses pickled checkpoints (pytorch_model.bin and friends) with PickleRefused
// when the folder has neither model.safetensors nor a shard index.
Result<void> refusePickles(const std::string& folder);

// Opens the folder's weight files: model.safetensors alone, else every shard the
// index names, in file-name order. The index must name plain files of the folder, each
// of which exists, and every tensor it maps must be in the file it names.
Result<std::vector<SafetensorsFile>> openWeightFiles(const std::string& folder);

struct MatchedTensor {
    const StTensor* tensor = nullptr;
    size_t file = 0; // index into the files
};
// Checks that the files hold, between them, exactly the GPT-2 tensors `config`
// implies, each once. Returns, for each expected name, where it is.
Result<std::map<std::string, MatchedTensor>>
matchGpt2Tensors(const std::vector<SafetensorsFile>& files, const ModelConfig& config);

} // namespace baton::engine
