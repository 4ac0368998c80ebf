// Gradients of one micro-batch: exact backpropagation through windows by
// window-level recomputation (../shared/docs/method.md section 5).
#pragma once

#include "model/model_impl.h"

#include <array>

namespace baton::engine {

// B sequences of W full windows of T tokens.
struct WindowBatch {
    torch::Tensor inputs;  // [W, B, T] int64
    torch::Tensor targets; // [W, B, T] int64: the token each position predicts, -1 if not scored
    int64_t scored = 0;    // targets that are not -1
};

struct BatchStats {
    double nllSum = 0; // nats over the scored targets
    int64_t scored = 0;
    std::array<double, 3> slotMass{};   // summed attention on the slot by position band
    std::array<int64_t, 3> slotCount{}; // 0-15, 16-63, rest
};

// Adds to the trainable parameters' .grad the gradient of (sum of NLL) / normalizer.
// Recurrent: (1) forward all windows without gradients keeping only each h_prev,
// (2) for n = W..1 recompute window n with gradients from a leaf h_prev(n-1) and
// backpropagate loss_n + sum(h_prev(n) * g_n), reading h_prev(n-1).grad as g_(n-1).
// Peak memory is one window's activations plus 2 k floats per window.
// Baseline: the same windows, independently, with no state.
// The batch is moved to the model's device; bf16Autocast (CUDA) runs the forward passes
// under bfloat16 autocast (training/autocast.h).
BatchStats accumulateGradients(Model::Impl& m, const WindowBatch& batch, bool recurrent,
                               double normalizer, bool bf16Autocast = false);

} // namespace baton::engine
