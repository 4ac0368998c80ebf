// GPT-2's four published shapes and the work of a prefill, shared by the CPU and GPU
// benchmarks (bench_gpt2, bench_gpu).
#pragma once

#include <baton/engine/model_info.h>

#include <cstdint>

namespace baton::bench {

struct Shape {
    const char* name;
    int layers, embd, heads;
};
constexpr Shape kShapes[] = {{"small", 12, 768, 12},
                             {"medium", 24, 1024, 16},
                             {"large", 36, 1280, 20},
                             {"xl", 48, 1600, 25}};

// FLOPs of reading n tokens into an empty KV cache: the blocks' matrix products
// (multiply-add counted as two), causal attention (QK^T and AV), and the LM head for
// the last position only.
inline double prefillFlops(const engine::ModelConfig& c, int64_t n) {
    const double k = c.nEmbd, blockWeights = 4.0 * k * k + 2.0 * k * c.nInner;
    const double attention = 2.0 * double(n) * double(n + 1) * k; // QK^T and AV, causal
    return c.nLayer * (2.0 * double(n) * blockWeights + attention) + 2.0 * c.vocabSize * k;
}

} // namespace baton::bench
