// The decoder's element-wise and row operations besides the matrix products
// (weight_matrix.h): layer norm, and GPT-2's tanh GELU with AVX-512 and AVX2 paths (the
// path of the products in use, setIsa). No torch here.
#pragma once

#include <cstdint>

namespace baton::engine::cpu {

// y = (x - mean) / sqrt(variance + eps) * gamma + beta over n floats (the mean and the
// variance summed in double).
void layerNorm(const float* x, const float* gamma, const float* beta, float* y, int64_t n,
               float eps);

// x = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), in place. The vector paths
// compute the same function as x / (1 + exp(-2 u)), u the tanh's argument, with a
// polynomial exp: within a few float32 ulps of geluTanhScalar (tests check it). A
// value's result does not depend on where it sits in x (the tail goes through the
// vector code too), so a product split among threads at any row gives the same bits.
void geluTanh(float* x, int64_t n);
// The plain C++ path (std::tanh), the reference of the vector paths.
void geluTanhScalar(float* x, int64_t n);

// The sum of n floats read with the widest loads of the path in use (64-byte loads on
// AVX-512, 32-byte on AVX2) as eight streams at once (eight stretches of x, a cache
// line of each per step, each into its own sums): a loop bound by memory, which the
// benchmarks' read-bandwidth probe times. The order of the additions is the vector
// path's (not a reference sum).
float readSum(const float* x, int64_t n);

} // namespace baton::engine::cpu
