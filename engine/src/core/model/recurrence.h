// The recurrence module: pooled hidden states of a window -> the state for the next.
//   z_j = mean over segment j of the pooled region of sum_l softmax(alpha)_l h_i^(l)
//         (or, with write tokens, the output of write token j after ln_f)
//   c_j = [z_j +] FFN(z_j) [+ slot_embedding_j]                  for j = 0..slots-1
//   h_j = c_j, or with the gate g_j * h_prev_j + (1 - g_j) * c_j,
//         g_j = sigmoid(gate([h_prev_j, c_j]))
// With one slot and the whole window pooled this is method.md section 2 exactly.
// Parameter names (as in recurrence.safetensors): alpha [L]; ffn.N.weight [out, in]
// and ffn.N.bias for N = 0..depth; slot_bias [H]; slot_embedding [S, k] (S > 1,
// pooling); sink [H]; write_tokens [S, k]; gate.weight [k, 2k] and gate.bias [k].
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/model_info.h"
#include "model/gpt2.h"

namespace baton::engine {

class RecurrenceImpl : public torch::nn::Module {
public:
    RecurrenceImpl(const ModelConfig& model, const RecurrenceConfig& config);

    // The state for the next window [B, S, k] from a window of T positions. Pooling:
    // `summary` [B, S, k] holds, per slot, the sum of the mixed hidden states over its
    // segment (see segmentOf), and each sum is divided by the number of its positions
    // in use; `filled` is how many positions of the window were in use (a window that
    // rolled over early to make room for guidance, see Generator::setGuide); -1: all
    // T. Write tokens: `summary` is their output [B, S, k]. `previous` is the state
    // that entered the window ([B, S, k], or undefined for none): the gate's other
    // input.
    torch::Tensor forward(const torch::Tensor& summary, const torch::Tensor& previous,
                          int64_t window, int64_t filled = -1);
    // softmax(alpha): the layer weights of the pooling [L].
    torch::Tensor layerWeights() const;
    // The slot whose segment holds window position `position` of a window of T, or -1
    // when the position is not pooled (never with write tokens).
    int segmentOf(int64_t position, int64_t window) const;
    // [S, n] with a 1 where position first + i belongs to slot j's segment: multiplied
    // with hidden states [B, n, k] it gives the segment sums.
    torch::Tensor segmentMatrix(int64_t first, int64_t n, int64_t window,
                                const torch::TensorOptions& options) const;
    // Fresh initialisation for training (seeded by the caller): alpha = 0, the
    // FFN as torch's Linear default, the last layer zero when residual, slot bias,
    // slot embeddings and sink 0, write tokens N(0, 0.02) (GPT-2's embedding scale),
    // the gate as torch's Linear default (g near 1/2 at the start).
    void initialise();

    const RecurrenceConfig& config() const { return m_config; }
    int slots() const { return m_config.slots; }

    torch::Tensor alpha;
    std::vector<Affine> ffn;
    torch::Tensor slotBias;      // [H], undefined unless config.slotBias
    torch::Tensor slotEmbedding; // [S, k], undefined unless S > 1
    torch::Tensor sink;          // [H], undefined unless config.sink
    torch::Tensor writeTokens;   // [S, k], undefined unless config.writeTokens
    Affine gate{nullptr};        // 2k -> k, null unless config.gate

private:
    RecurrenceConfig m_config;
};
TORCH_MODULE(Recurrence);

// The names and shapes recurrence.safetensors must hold.
std::vector<std::pair<std::string, std::vector<int64_t>>>
expectedRecurrenceTensors(const ModelConfig& model, const RecurrenceConfig& config);

// Checks the module's shape against the model (insertion block, FFN, slots).
Result<void> validateRecurrenceConfig(const RecurrenceConfig& config, const ModelConfig& model);

} // namespace baton::engine
