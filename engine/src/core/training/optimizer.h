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
