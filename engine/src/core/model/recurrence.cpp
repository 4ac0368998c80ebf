#include "model/recurrence.h"

#include <torch/torch.h>

#include <algorithm>
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
    if (config.slots > 1 && !config.writeTokens)
        slotEmbedding =
            register_parameter("slot_embedding", torch::zeros({config.slots, model.nEmbd}));
    if (config.sink)
        sink = register_parameter("sink", torch::zeros({model.nHead}));
    if (config.writeTokens)
        writeTokens = register_parameter("write_tokens", torch::zeros({config.slots, model.nEmbd}));
    if (config.gate)
        gate = register_module("gate", Affine(2 * model.nEmbd, model.nEmbd));
}

int RecurrenceImpl::segmentOf(int64_t position, int64_t window) const {
    if (m_config.writeTokens)
        return -1;
    const int64_t pooled = m_config.pooledPositions(static_cast<int>(window));
    const int64_t first = window - pooled;
    if (position < first || position >= window)
        return -1;
    return static_cast<int>((position - first) * m_config.slots / pooled);
}

torch::Tensor RecurrenceImpl::segmentMatrix(int64_t first, int64_t n, int64_t window,
                                            const torch::TensorOptions& options) const {
    auto m = torch::zeros({m_config.slots, n}, torch::TensorOptions().dtype(torch::kFloat32));
    auto a = m.accessor<float, 2>();
    for (int64_t i = 0; i < n; ++i)
        if (const int j = segmentOf(first + i, window); j >= 0)
            a[j][i] = 1.f;
    return m.to(options);
}

torch::Tensor RecurrenceImpl::forward(const torch::Tensor& summary, const torch::Tensor& previous,
                                      int64_t window, int64_t filled) {
    const int S = m_config.slots;
    torch::Tensor z = summary;
    if (!m_config.writeTokens) {
        std::vector<float> inverse(static_cast<size_t>(S), 0.f);
        const int64_t used = filled < 0 ? window : std::min(filled, window);
        for (int64_t p = 0; p < used; ++p)
            if (const int j = segmentOf(p, window); j >= 0)
                inverse[static_cast<size_t>(j)] += 1.f;
        for (float& v : inverse)
            v = v > 0 ? 1.f / v : 0.f;
        const auto scale = torch::tensor(inverse).to(summary.options()).view({1, S, 1});
        z = summary * scale;
    }
    auto x = z;
    for (size_t i = 0; i < ffn.size(); ++i) {
        x = ffn[i]->forward(x);
        if (i + 1 < ffn.size())
            x = torch::gelu(x);
    }
    auto h = m_config.residual ? z + x : x;
    if (slotEmbedding.defined())
        h = h + slotEmbedding.unsqueeze(0);
    if (!gate.is_empty() && previous.defined()) {
        const auto g = torch::sigmoid(gate->forward(torch::cat({previous.to(h.dtype()), h}, -1)));
        h = g * previous.to(h.dtype()) + (1 - g) * h;
    }
    return h;
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
    for (auto* t : {&slotBias, &slotEmbedding, &sink})
        if (t->defined())
            t->zero_();
    if (writeTokens.defined())
        writeTokens.normal_(0, 0.02);
    if (!gate.is_empty()) {
        const double bound = 1.0 / std::sqrt(double(gate->weight.size(1)));
        gate->weight.uniform_(-bound, bound);
        gate->bias.uniform_(-bound, bound);
    }
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
    if (config.slots > 1 && !config.writeTokens)
        out.push_back({"slot_embedding", {config.slots, model.nEmbd}});
    if (config.sink)
        out.push_back({"sink", {model.nHead}});
    if (config.writeTokens)
        out.push_back({"write_tokens", {config.slots, model.nEmbd}});
    if (config.gate) {
        out.push_back({"gate.weight", {model.nEmbd, 2 * model.nEmbd}});
        out.push_back({"gate.bias", {model.nEmbd}});
    }
    return out;
}

Result<void> validateRecurrenceConfig(const RecurrenceConfig& r, const ModelConfig& model) {
    auto bad = [](const std::string& what) {
        return makeError(ErrorCode::InvalidArgument, "invalid recurrence configuration: " + what);
    };
    if (r.insertBlock < 0 || r.insertBlock >= model.nLayer)
        return bad("the insertion block must be less than the model's " +
                   std::to_string(model.nLayer) + " layers");
    if (r.ffnWidth < 1 || r.ffnDepth < 0)
        return bad("the FFN needs a width of at least 1 and a depth of at least 0");
    if (r.slots < 1 || r.slots > 64)
        return bad("slots must be in [1, 64]");
    if (r.poolLast < 0)
        return bad("pool-last must not be negative");
    if (r.poolLast > 0 && r.poolLast < r.slots)
        return bad("pool-last must cover at least one position per slot");
    if (r.readBlocks < 1 || r.insertBlock + r.readBlocks > model.nLayer)
        return bad("the state must be read by 1 to " +
                   std::to_string(model.nLayer - r.insertBlock) +
                   " blocks from the insertion block on");
    if (r.writeTokens && r.poolLast > 0)
        return bad("write tokens pool nothing: pool-last does not apply");
    if (r.memoryTokens && r.readBlocks < 2)
        return bad("memory tokens pass from one reading block to the next: read the state by "
                   "2 blocks or more");
    return {};
}

} // namespace baton::engine
