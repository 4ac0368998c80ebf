// The recurrence module: pooled hidden states of a window -> h_prev for the next.
//   z = (1/T) sum_i sum_l softmax(alpha)_l h_i^(l);  h_prev = [z +] FFN(z)
// Parameter names (as in recurrence.safetensors): alpha [L]; ffn.N.weight [out, in]
// and ffn.N.bias for N = 0..depth; slot_bias [H] when enabled.
#pragma once

#include "baton/engine/model_info.h"
#include "model/gpt2.h"

namespace baton::engine {

class RecurrenceImpl : public torch::nn::Module {
public:
    RecurrenceImpl(const ModelConfig& model, const RecurrenceConfig& config);

    // h_prev from the mean pooled state z [B, k].
    torch::Tensor forward(const torch::Tensor& z);
    // softmax(alpha): the layer weights of the pooling [L].
    torch::Tensor layerWeights() const;
    // Fresh initialisation for training (seeded by the caller): alpha = 0, the
    // FFN as torch's Linear default, the last layer zero when residual, slot bias 0.
    void initialise();

    const RecurrenceConfig& config() const { return m_config; }

    torch::Tensor alpha;
    std::vector<Affine> ffn;
    torch::Tensor slotBias; // undefined unless config.slotBias

private:
    RecurrenceConfig m_config;
};
TORCH_MODULE(Recurrence);

// The names and shapes recurrence.safetensors must hold.
std::vector<std::pair<std::string, std::vector<int64_t>>>
expectedRecurrenceTensors(const ModelConfig& model, const RecurrenceConfig& config);

} // namespace baton::engine
