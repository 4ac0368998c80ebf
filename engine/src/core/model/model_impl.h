// The inside of baton::engine::Model, shared by the engine's torch translation units.
#pragma once

#include "baton/engine/model.h"
#include "kernels/cpu_decoder.h"
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
    torch::Tensor sink;                  // [H] or undefined
    std::vector<float> layerWeightsHost; // for the CPU decoder
    std::vector<float> slotBiasHost;
    std::vector<float> sinkHost;

    bool recurrent() const { return !recurrence.is_empty(); }
    int insertBlock() const { return recurrent() ? recurrence->config().insertBlock : -1; }
    // State slots per window (1 for a baseline: the KV cache keeps one index reserved).
    int stateSlots() const { return recurrent() ? recurrence->slots() : 1; }
    // The forward arguments for positions [first, first + n) of a window of T: the
    // state (or none), the insertion block(s), slot bias, sink and pooling, and for a
    // module with write tokens, the write tokens when first == 0 (a whole window run
    // at once; a cached window runs them at its roll-over). `trainable` takes the
    // module's parameters themselves (with their gradients) instead of the inference
    // copies. A baseline model gets plain arguments.
    ForwardArgs windowArgs(const torch::Tensor& state, int64_t first, int64_t n, int64_t window,
                           bool trainable = false) const;
    // The state for the next window [B, S, k] from a window's forward pass (its pooled
    // sums, or its write tokens' outputs) and the state that entered it (`previous`,
    // undefined for none; the gate's other input). `filled`: positions in use, -1: the
    // full window.
    torch::Tensor nextState(const ForwardOut& out, const torch::Tensor& previous, int64_t window,
                            int64_t filled = -1);
    // The same from the summary itself (pooled sums or written outputs).
    torch::Tensor nextStateFrom(const torch::Tensor& summary, const torch::Tensor& previous,
                                int64_t window, int64_t filled = -1);
    // Whether the module writes the state with write tokens (then every window the next
    // state is taken from must run them: windowArgs appends them when first == 0).
    bool writesWithTokens() const { return recurrent() && recurrence->config().writeTokens; }
    // Blocks that read the state, from insertBlock() on (1 for a baseline).
    int readBlocks() const { return recurrent() ? recurrence->config().readBlocks : 1; }
    // Refreshes layerWeights/slotBias/sink (and their host copies) from the module.
    void refreshRecurrenceCaches();

    torch::TensorOptions idOptions() const {
        return torch::TensorOptions().dtype(torch::kLong).device(device);
    }
    // Builds `decoder` over the current parameters when the fast path applies.
    void buildDecoder();
};

// The engine's (and its white-box tests') way inside a Model: the public header keeps
// the network, the module and the decoder private.
struct ModelAccess {
    static Model::Impl& of(const Model& model) { return *model.m_impl; }
    // A model around a finished Impl (Model::load, createModel).
    static std::shared_ptr<Model> make(std::unique_ptr<Model::Impl> impl) {
        return std::shared_ptr<Model>(new Model(std::move(impl)));
    }
};

// A model with freshly initialised weights (GPT-2's scheme, from `seed`), for
// training from scratch, tests and benchmarks. The tokenizer may be null when the
// caller only works with ids.
Result<std::shared_ptr<Model>> createModel(const ModelConfig& config,
                                           std::shared_ptr<const Tokenizer> tokenizer,
                                           uint64_t seed, const LoadOptions& options = {},
                                           const std::optional<RecurrenceConfig>& recurrence = {});

// A model folder without tokenizer files (a synthetic task's model, whose token ids
// are the task's): `identity` stands for the tokenizer's in baton.json and the model's
// identity. Model::tokenizer() is null.
Result<std::shared_ptr<Model>> loadModelWithoutTokenizer(const std::string& folder,
                                                         const std::string& identity,
                                                         const LoadOptions& options = {});

} // namespace baton::engine
