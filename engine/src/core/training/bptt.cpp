#include "training/bptt.h"

#include "training/autocast.h"

#include <torch/torch.h>

namespace baton::engine {

namespace {

void addSlotMass(BatchStats& stats, const torch::Tensor& mass) {
    // mass [B, T]: attention on the slot at each query position
    const auto perPosition = mass.detach().sum(0).to(torch::kCPU, torch::kFloat64).contiguous();
    const double* p = perPosition.data_ptr<double>();
    const int64_t B = mass.size(0);
    for (int64_t i = 0; i < perPosition.numel(); ++i) {
        const size_t band = i < 16 ? 0 : (i < 64 ? 1 : 2);
        stats.slotMass[band] += p[i];
        stats.slotCount[band] += B;
    }
}

} // namespace

BatchStats accumulateGradients(Model::Impl& m, const WindowBatch& batch, bool recurrent,
                               double normalizer, bool bf16Autocast) {
    const int64_t W = batch.inputs.size(0), T = batch.inputs.size(2);
    const auto inputs = batch.inputs.to(m.device), targets = batch.targets.to(m.device);
    Bf16Autocast autocast(bf16Autocast);
    const int64_t V = m.info.config.vocabSize;
    BatchStats stats;
    std::vector<torch::Tensor> states(static_cast<size_t>(W)); // the state entering window n
    auto args = [&](const torch::Tensor& state) {
        ForwardArgs a = m.windowArgs(state, 0, T, T, true);
        a.wantSlotMass = state.defined();
        return a;
    };
    if (recurrent) {
        torch::NoGradGuard noGrad;
        for (int64_t n = 0; n + 1 < W; ++n) {
            auto out = m.net->forward(inputs[n], args(states[size_t(n)]));
            states[size_t(n) + 1] = m.nextState(out, states[size_t(n)], T);
        }
    }
    torch::Tensor g; // dLoss / d(state entering window n + 1)
    for (int64_t n = W - 1; n >= 0; --n) {
        torch::Tensor leaf;
        if (states[size_t(n)].defined())
            leaf = states[size_t(n)].detach().requires_grad_(true);
        auto out = m.net->forward(inputs[n], recurrent ? args(leaf) : ForwardArgs{});
        auto logits = m.net->logits(out.hidden);
        auto nll = torch::nn::functional::cross_entropy(
            logits.reshape({-1, V}), targets[n].reshape({-1}),
            torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(
                torch::kSum));
        auto total = nll / normalizer;
        if (recurrent && g.defined()) {
            auto h = m.nextState(out, leaf, T);
            total = total + (h * g).sum();
        }
        total.backward();
        stats.nllSum += nll.item<double>();
        if (out.slotMass.defined())
            addSlotMass(stats, out.slotMass);
        g = leaf.defined() ? leaf.grad().detach() : torch::Tensor();
    }
    stats.scored = batch.scored;
    return stats;
}

} // namespace baton::engine
