#include "model/recurrence.h"

#include <torch/torch.h>

#include <cmath>

namespace baton::engine {

RecurrenceImpl::RecurrenceImpl(const ModelConfig& model, const RecurrenceConfig& config)
    : m_config(config) {
    alpha = register_parameter("alpha", torch::zeros({model.nLayer}));
    auto holder = register_module("ffn", std::make_shared<torch::nn::Module>());
    int64_t in = model.nEmbd;
    for (int i = 0; i <= config.ffnDepth; ++i) {
        const int64_t out = (i == config.ffnDepth) ? model.nEmbd : config.ffnWidth;
        ffn.push_back(holder->register_module(std::to_string(i), Affine(in, out)));
        in = out;
    }
    if (config.slotBias)
        slotBias = register_parameter("slot_bias", torch::zeros({model.nHead}));
}

torch::Tensor RecurrenceImpl::forward(const torch::Tensor& z) {
    auto x = z;
    for (size_t i = 0; i < ffn.size(); ++i) {
        x = ffn[i]->forward(x);
        if (i + 1 < ffn.size())
            x = torch::gelu(x);
    }
    return m_config.residual ? z + x : x;
}

torch::Tensor RecurrenceImpl::layerWeights() const {
    return torch::softmax(alpha, 0);
}

void RecurrenceImpl::initialise() {
    torch::NoGradGuard noGrad;
    alpha.zero_();
    for (size_t i = 0; i < ffn.size(); ++i) {
        auto& a = ffn[i];
        const double bound = 1.0 / std::sqrt(double(a->weight.size(1)));
        a->weight.uniform_(-bound, bound);
        a->bias.uniform_(-bound, bound);
        if (m_config.residual && i + 1 == ffn.size()) {
            a->weight.zero_();
            a->bias.zero_();
        }
    }
    if (slotBias.defined())
        slotBias.zero_();
}

std::vector<std::pair<std::string, std::vector<int64_t>>>
expectedRecurrenceTensors(const ModelConfig& model, const RecurrenceConfig& config) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> out = {{"alpha", {model.nLayer}}};
    int64_t in = model.nEmbd;
    for (int i = 0; i <= config.ffnDepth; ++i) {
        const int64_t o = (i == config.ffnDepth) ? model.nEmbd : config.ffnWidth;
        out.push_back({"ffn." + std::to_string(i) + ".weight", {o, in}});
        out.push_back({"ffn." + std::to_string(i) + ".bias", {o}});
        in = o;
    }
    if (config.slotBias)
        out.push_back({"slot_bias", {model.nHead}});
    return out;
}

} // namespace baton::engine
