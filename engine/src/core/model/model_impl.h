// The inside of baton::engine::Model, shared by the engine's torch translation units.
#pragma once

#include "baton/engine/model.h"
#include "inference/cpu_decoder.h"
#include "model/gpt2.h"
#include "model/recurrence.h"

#include <memory>

namespace baton::engine {

class Model::Impl {
public:
    ModelInfo info;
    Gpt2 net{nullptr};
    std::shared_ptr<const Tokenizer> tokenizer;
    torch::Device device{torch::kCPU};
    torch::ScalarType dtype = torch::kFloat32;
    // The raw-pointer decode path: CPU and float32 only, else null.
    std::unique_ptr<cpu::Decoder> decoder;

    // Recurrent models only (recurrence.is_empty() for a baseline).
    Recurrence recurrence{nullptr};
    torch::Tensor layerWeights;          // softmax(alpha) [L], compute dtype, on device
    torch::Tensor slotBias;              // [H] or undefined
    std::vector<float> layerWeightsHost; // for the CPU decoder
    std::vector<float> slotBiasHost;

    bool recurrent() const { return !recurrence.is_empty(); }
    int insertBlock() const { return recurrent() ? recurrence->config().insertBlock : -1; }
    // h_prev for the next window from a window's pooled sum over `positions` positions.
    torch::Tensor stateFromPooled(const torch::Tensor& pooledSum, int64_t positions);
    // Refreshes layerWeights/slotBias (and their host copies) from the module.
    void refreshRecurrenceCaches();

    torch::TensorOptions idOptions() const {
        return torch::TensorOptions().dtype(torch::kLong).device(device);
    }
    // Builds `decoder` over the current parameters when the fast path applies.
    void buildDecoder();
};

// A model with freshly initialised weights (GPT-2's scheme, from `seed`), for
// training from scratch, tests and benchmarks. The tokenizer may be null when the
// caller only works with ids.
Result<std::shared_ptr<Model>> createModel(const ModelConfig& config,
                                           std::shared_ptr<const Tokenizer> tokenizer,
                                           uint64_t seed, const LoadOptions& options = {},
                                           const std::optional<RecurrenceConfig>& recurrence = {});

} // namespace baton::engine
