// Adam and AdamW written out (not torch::optim) so that their whole state is
// plain named tensors: saved as safetensors, restored bit for bit on resume.
#pragma once

#include "baton/engine/error.h"

#include <torch/types.h>

#include <string>
#include <vector>

namespace baton::engine {

struct NamedParam {
    std::string name;
    torch::Tensor param;
};

struct ParamGroup {
    std::vector<NamedParam> params;
    double lrScale = 1.0;
    double weightDecay = 0.0;
};

// The gradients' norms over two parameter lists (the network and the recurrence
// module), summed in a fixed order whatever the thread count (model/fixed_blocks.h);
// then every gradient is scaled so that the norm of both lists together is at most
// clipNorm, as torch::nn::utils::clip_grad_norm_ does (0: no clipping). Returns the
// two norms before clipping.
struct GradNorms {
    double net = 0, module = 0;
};
GradNorms clipGradients(const std::vector<torch::Tensor>& net,
                        const std::vector<torch::Tensor>& module, double clipNorm);

class AdamOptimizer {
public:
    // decoupled: AdamW (weight decay applied to the weights) or Adam (L2 in the gradient).
    AdamOptimizer(std::vector<ParamGroup> groups, bool decoupled, double beta1, double beta2,
                  double eps);

    void step(double lr);
    void zeroGrad();
    int64_t stepCount() const { return m_step; }

    Result<void> save(const std::string& path) const;
    Result<void> load(const std::string& path);
    // A hash of the step count and every moment (ranks compare theirs).
    std::string fingerprint() const;

private:
    struct Slot {
        torch::Tensor m, v;
    };
    std::vector<ParamGroup> m_groups;
    std::vector<std::vector<Slot>> m_state;
    bool m_decoupled;
    double m_beta1, m_beta2, m_eps;
    int64_t m_step = 0;
};

} // namespace baton::engine
