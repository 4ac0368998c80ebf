// The inside of batched_products.cpp that its 8-bit products (quad_products.cpp)
// share: the panel's height, the tiles' last step, and the 8-bit products' entry points
// (batched_products.h describes them). Internal to the kernels; no torch here.
#pragma once

#include "kernels/weight_loads.h"
#include "kernels/weight_matrix.h"

#include <immintrin.h>

#include <cstdint>

namespace baton::engine::cpu {

constexpr int64_t kPanel = 32; // weight rows per panel: two vectors of 16 sums

// A tile: y[i][0, 32) = bias + one panel x activation rows i < T (the mask: the panel's
// rows), for T = 1, 2, ...
using TileFn = void (*)(const uint32_t* panel, int64_t steps, const uint32_t* xs, int64_t ldx,
                        const float* b, float* y, int64_t ldy, __mmask32 rows);

// y[i][0, 32) = acc[i] + bias for the panel's rows (mask) and i < T.
template <int T>
BATON_AVX512 inline void storeTile(const __m512 (&acc)[T][2], const float* b, float* y, int64_t ldy,
                                   __mmask32 rows) {
    const __mmask16 m0 = __mmask16(rows), m1 = __mmask16(rows >> 16);
    const __m512 b0 = b ? _mm512_maskz_loadu_ps(m0, b) : _mm512_setzero_ps();
    const __m512 b1 = b ? _mm512_maskz_loadu_ps(m1, b + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int i = 0; i < T; ++i) {
        _mm512_mask_storeu_ps(y + i * ldy, m0, _mm512_add_ps(acc[i][0], b0));
        _mm512_mask_storeu_ps(y + i * ldy + 16, m1, _mm512_add_ps(acc[i][1], b1));
    }
}

// 8-bit quads (AVX512-VNNI): the activation words of a row of `cols` values, the
// activations for a matrix of this format (Int8 or Q4), and the rows [r0, r1) of the
// product.
int64_t quadActivationWords(int64_t cols);
void prepareQuads(WeightFormat f, const float* x, int64_t m, int64_t cols, uint32_t* out);
void quadProducts(const MatrixView& W, const uint32_t* xs, int64_t m, const float* b, float* y,
                  int64_t ldy, int64_t r0, int64_t r1);

} // namespace baton::engine::cpu
