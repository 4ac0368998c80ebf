// GPT-2 as Hugging Face's GPT2LMHeadModel computes it, in LibTorch, with
// hand-written causal attention, a KV cache, and one optional extra key/value
// "state slot" in one block (the recurrence of ../shared/docs/method.md section 2).
//
// Parameter names match Hugging Face's (wte, wpe, h.N.ln_1, h.N.attn.c_attn, ...).
// Linear weights are [out, in] (torch's Linear layout): contiguous when the checkpoint
// code converted them (it transposes Hugging Face's Conv1D [in, out] on the way in and
// out), or the transposed view of a mapped checkpoint's [in, out] bytes (no copy).
#pragma once

#include "baton/engine/model_info.h"
#include "kernels/weight_matrix.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace baton::engine {

// A weight matrix that an inference model may hold packed (--weights f16|bf16|int8|q4
// on the CPU): `packed` is then set and `weight` emptied (no float32 copy stays in
// memory). Batched calls multiply it as it is held where the CPU can
// (cpu::batchedProducts), and unpack it to float32 otherwise.
struct PackableWeight {
    torch::Tensor weight; // [rows, cols] float32 (row- or column-major), or empty while packed
    std::shared_ptr<const cpu::PackedMatrix> packed;

    // The weight as float32 (unpacked when packed).
    torch::Tensor dense() const;
    // The weight for the CPU decoder (float32 CPU weights are shared, not copied).
    cpu::MatrixView view() const;
    // x W^T (+ bias): a packed matrix as it is held where cpu::batchedProducts() takes
    // its format and x needs no gradient, else blocks::linear of dense().
    torch::Tensor multiply(const torch::Tensor& x, const torch::Tensor& bias) const;
    // Converts to `format` and drops the float32 weight (F32: nothing to do).
    void pack(WeightFormat format);
};

// y = x W^T + b with W [out, in].
class AffineImpl : public torch::nn::Module, public PackableWeight {
public:
    AffineImpl(int64_t in, int64_t out);
    torch::Tensor forward(const torch::Tensor& x) const;
    torch::Tensor bias;
};
TORCH_MODULE(Affine);

// An embedding table: weight [rows, dim].
class TableImpl : public torch::nn::Module, public PackableWeight {
public:
    TableImpl(int64_t rows, int64_t dim);
    torch::Tensor forward(const torch::Tensor& ids) const;
};
TORCH_MODULE(Table);

class NormImpl : public torch::nn::Module {
public:
    NormImpl(int64_t size, double eps);
    torch::Tensor forward(const torch::Tensor& x) const;
    torch::Tensor weight, bias;
    double eps;
};
TORCH_MODULE(Norm);

class AttentionImpl : public torch::nn::Module {
public:
    AttentionImpl(const ModelConfig& config);
    Affine c_attn{nullptr}, c_proj{nullptr};
};
TORCH_MODULE(Attention);

class MlpImpl : public torch::nn::Module {
public:
    MlpImpl(const ModelConfig& config);
    Affine c_fc{nullptr}, c_proj{nullptr};
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
public:
    BlockImpl(const ModelConfig& config);
    Norm ln_1{nullptr}, ln_2{nullptr};
    Attention attn{nullptr};
    Mlp mlp{nullptr};
};
TORCH_MODULE(Block);

// Keys and values of the tokens of one window. The first `slots` indices of every
// layer's buffer are reserved for the state slots; only the slot layers use them.
// Tokens live at slots..slots + length - 1.
struct KvCache {
    std::vector<torch::Tensor> k, v; // per layer [B, H, slots + capacity, D]
    int64_t capacity = 0;            // token positions
    int64_t slots = 1;               // reserved state slots
    int64_t length = 0;              // tokens cached
    int slotLayer = -1;              // the first layer whose reserved indices hold a state, or -1
    int slotLayers = 1;              // how many layers from slotLayer on hold it

    void allocate(const ModelConfig& config, int64_t batch, int64_t capacity,
                  torch::ScalarType dtype, torch::Device device, int64_t slots = 1);
    void clear() {
        length = 0;
        slotLayer = -1;
        slotLayers = 1;
    }
    bool holdsState(int layer) const {
        return slotLayer >= 0 && layer >= slotLayer && layer < slotLayer + slotLayers;
    }
};

struct ForwardArgs {
    KvCache* cache = nullptr; // append to this cache (positions continue from its length)
    torch::Tensor state;      // [B, S, k] the state slots, undefined for none
    int slotLayer = 1;        // the (first) block that receives the state
    int slotLayers = 1;       // how many blocks from slotLayer on receive it
    // The state's slots pass through the reading blocks as memory tokens of their own
    // (attending to each other causally, never to the window); each reading block takes
    // their keys and values from that pass (RecurrenceConfig::memoryTokens).
    bool memoryTokens = false;
    torch::Tensor slotBias;     // [H] added to the slots' attention logits, or undefined
    torch::Tensor sink;         // [H] an attention sink's logit beside the slots, or undefined
    torch::Tensor layerWeights; // [L] softmax(alpha): with poolMatrix, `pooled` is computed
    torch::Tensor poolMatrix;   // [S, n] which positions of this call each slot pools
    bool wantSlotMass = false;  // report attention mass on the slots
    std::vector<torch::Tensor>* blockOutputs = nullptr; // if set, receives each block's output
    // [S, k] write tokens appended after the n tokens (no position embedding; causal
    // like tokens at positions past + n ..): their outputs come back as `written`.
    // With a cache they are cached too (the cache needs room for them).
    torch::Tensor writeTokens;
};

struct ForwardOut {
    torch::Tensor hidden;   // [B, n, k] after ln_f (the tokens; write tokens left out)
    torch::Tensor pooled;   // [B, S, k] poolMatrix times sum_l w_l h^(l)
    torch::Tensor written;  // [B, S, k] the write tokens' outputs after ln_f
    torch::Tensor slotMass; // [B, n] attention probability on the slots, mean over heads
};

class Gpt2Impl : public torch::nn::Module {
public:
    explicit Gpt2Impl(const ModelConfig& config);

    // ids: [B, n] int64. Without a cache the positions are 0..n-1.
    ForwardOut forward(const torch::Tensor& ids, const ForwardArgs& args = {});
    // The slots' keys and values for block `layer`: [B, H, S, D] each.
    std::pair<torch::Tensor, torch::Tensor> slotKeyValue(const torch::Tensor& state, int layer);
    // Block `layer` run on the slots alone, as tokens (memory tokens): [B, S, k].
    torch::Tensor memoryBlock(const torch::Tensor& slots, int layer);
    // The keys and values of the reading blocks first .. first + count - 1, in order:
    // each block's of the state itself, or with memoryTokens of the slots' pass through
    // the reading blocks before it.
    std::vector<std::pair<torch::Tensor, torch::Tensor>>
    slotKeyValues(const torch::Tensor& state, int first, int count, bool memoryTokens);
    // Logits through the tied LM head.
    torch::Tensor logits(const torch::Tensor& hidden) const;
    // GPT-2's initialisation for training from scratch (normal 0.02, residual
    // projections scaled by 1/sqrt(2 L)), seeded by the caller.
    void initialiseForTraining();
    // The weight matrices a CPU model may hold packed (wte and the blocks' linear
    // layers), by parameter name ("wte.weight", "h.0.attn.c_attn.weight", ...).
    std::vector<std::pair<std::string, PackableWeight*>> packableWeights();
    // Holds the weight matrices (blocks' linear layers, wte) in `format` (CPU only).
    void packWeights(WeightFormat format);
    // The number of parameters, packed ones included.
    int64_t parameterCount();
    // Whether some weight matrix is packed (such a model cannot be saved or trained).
    bool packed() const;

    const ModelConfig& config() const { return m_config; }

    Table wte{nullptr}, wpe{nullptr};
    std::vector<Block> blocks; // registered as h.0 .. h.(L-1)
    Norm ln_f{nullptr};

private:
    torch::Tensor attention(int layer, const torch::Tensor& x, KvCache* cache, int64_t past,
                            const torch::Tensor& slotK, const torch::Tensor& slotV,
                            const torch::Tensor& slotBias, const torch::Tensor& sink,
                            torch::Tensor* slotMass);
    ModelConfig m_config;
};
TORCH_MODULE(Gpt2);

} // namespace baton::engine
