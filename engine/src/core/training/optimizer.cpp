#include "training/optimizer.h"

#include "model/fixed_blocks.h"
#include "model/safetensors.h"
#include "util/hash.h"

#include <torch/torch.h>

#include <cmath>
#include <map>

namespace baton::engine {

GradNorms clipGradients(const std::vector<torch::Tensor>& net,
                        const std::vector<torch::Tensor>& module, double clipNorm) {
    auto squared = [](const std::vector<torch::Tensor>& ps) {
        double sq = 0;
        for (const auto& p : ps)
            if (p.grad().defined())
                sq += blocks::sumOfSquares(p.grad());
        return sq;
    };
    const double netSq = squared(net), moduleSq = squared(module);
    const double coefficient = clipNorm / (std::sqrt(netSq + moduleSq) + 1e-6);
    if (clipNorm > 0 && coefficient < 1) {
        torch::NoGradGuard noGrad;
        for (const auto* ps : {&net, &module})
            for (const auto& p : *ps)
                if (p.grad().defined())
                    p.grad().mul_(coefficient);
    }
    return {std::sqrt(netSq), std::sqrt(moduleSq)};
}

AdamOptimizer::AdamOptimizer(std::vector<ParamGroup> groups, bool decoupled, double beta1,
                             double beta2, double eps)
    : m_groups(std::move(groups))
    , m_decoupled(decoupled)
    , m_beta1(beta1)
    , m_beta2(beta2)
    , m_eps(eps) {
    for (const auto& g : m_groups) {
        std::vector<Slot> slots;
        for (const auto& p : g.params)
            slots.push_back({torch::zeros_like(p.param), torch::zeros_like(p.param)});
        m_state.push_back(std::move(slots));
    }
}

void AdamOptimizer::zeroGrad() {
    for (auto& g : m_groups)
        for (auto& p : g.params)
            if (p.param.grad().defined())
                p.param.mutable_grad().zero_();
}

void AdamOptimizer::step(double lr) {
    torch::NoGradGuard noGrad;
    ++m_step;
    const double c1 = 1.0 - std::pow(m_beta1, double(m_step));
    const double c2 = 1.0 - std::pow(m_beta2, double(m_step));
    for (size_t gi = 0; gi < m_groups.size(); ++gi) {
        const ParamGroup& g = m_groups[gi];
        const double groupLr = lr * g.lrScale;
        for (size_t pi = 0; pi < g.params.size(); ++pi) {
            torch::Tensor p = g.params[pi].param;
            if (!p.grad().defined())
                continue;
            torch::Tensor grad = p.grad();
            Slot& s = m_state[gi][pi];
            if (g.weightDecay != 0) {
                if (m_decoupled)
                    p.mul_(1.0 - groupLr * g.weightDecay);
                else
                    grad = grad + p * g.weightDecay;
            }
            s.m.mul_(m_beta1).add_(grad, 1.0 - m_beta1);
            s.v.mul_(m_beta2).addcmul_(grad, grad, 1.0 - m_beta2);
            const auto denom = (s.v / c2).sqrt_().add_(m_eps);
            p.addcdiv_(s.m, denom, -groupLr / c1);
        }
    }
}

Result<void> AdamOptimizer::save(const std::string& path) const {
    std::vector<StWriteTensor> out;
    std::vector<torch::Tensor> keep;
    for (size_t gi = 0; gi < m_groups.size(); ++gi)
        for (size_t pi = 0; pi < m_groups[gi].params.size(); ++pi) {
            const std::string& name = m_groups[gi].params[pi].name;
            for (const auto& [prefix, t] :
                 {std::pair<const char*, torch::Tensor>{"m/", m_state[gi][pi].m},
                  {"v/", m_state[gi][pi].v}}) {
                auto c = t.to(torch::kCPU, torch::kFloat32).contiguous();
                keep.push_back(c);
                out.push_back({prefix + name, StDtype::F32, c.sizes().vec(), c.data_ptr(),
                               static_cast<size_t>(c.numel() * 4)});
            }
        }
    return writeSafetensors(path, out, {{"step", std::to_string(m_step)}});
}

std::string AdamOptimizer::fingerprint() const {
    ContentHash h;
    h.update(std::to_string(m_step));
    for (const auto& group : m_state)
        for (const auto& slot : group)
            for (const auto* t : {&slot.m, &slot.v}) {
                const auto c = t->to(torch::kCPU).contiguous();
                h.update(c.data_ptr(), size_t(c.numel()) * c.element_size());
            }
    return h.hex();
}

Result<void> AdamOptimizer::load(const std::string& path) {
    auto file = openSafetensors(path);
    if (!file)
        return file.error();
    const auto it = file->metadata().find("step");
    if (it == file->metadata().end())
        return makeError(ErrorCode::BadHeader, path + ": no optimizer step count");
    torch::NoGradGuard noGrad;
    for (size_t gi = 0; gi < m_groups.size(); ++gi)
        for (size_t pi = 0; pi < m_groups[gi].params.size(); ++pi) {
            const std::string& name = m_groups[gi].params[pi].name;
            for (auto [prefix, target] :
                 {std::pair<const char*, torch::Tensor*>{"m/", &m_state[gi][pi].m},
                  {"v/", &m_state[gi][pi].v}}) {
                const StTensor* t = file->find(prefix + name);
                if (!t || t->dtype != StDtype::F32 || t->shape != target->sizes().vec())
                    return makeError(ErrorCode::ConfigMismatch,
                                     path + ": optimizer state for " + name +
                                         " is missing or has another shape");
                auto host = torch::empty(t->shape, torch::kFloat32);
                if (auto r = file->read(*t, host.data_ptr()); !r)
                    return r;
                target->copy_(host);
            }
        }
    m_step = std::stoll(it->second);
    return {};
}

} // namespace baton::engine
