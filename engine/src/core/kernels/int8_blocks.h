// 8-bit weights (WeightFormat::Int8): every 32 consecutive weights of a row (a block)
// share one float32 scale d, and a weight is d * q with q in [-127, 127]
// (quantizeInt8Rows in weight_kernels.h: d = max |w| / 127, q rounded to nearest
// even). Storage: the q row-major (rows * cols bytes), then the scales ([rows, blocks]).
//
// The decoder's products quantize the activations once per call to 8 bits in blocks
// of 32 (quantizeActivationBlock, as the 4-bit products and the batched 8-bit products
// do): a block's sum is d s times the exact integer sum of q x_q, accumulated in
// float32. On AVX-512 CPUs with VNNI one `vpdpbusd` per 64-byte load sums two blocks
// (q + 128 against x_q; the 128 is taken back once per block from the sum of its x_q);
// AVX2 CPUs use `vpmaddubsw` on |q| and x_q with q's sign.
// Internal to the kernels; no torch here.
#pragma once

#include "kernels/weight_kernels.h"

#include <cstdint>
#include <vector>

namespace baton::engine::cpu {

// The activations of one product, quantized (quantizeActivationBlock): block b's 32
// values at q[32 b] (zeros past the width), its scale and the sum of its values. The
// arrays hold an even number of blocks (a last odd one is followed by a zero block).
struct Int8Activations {
    int64_t blocks = 0;
    std::vector<int8_t> q;
    std::vector<float> scale;
    std::vector<int32_t> sum;
};
// Quantizes x (cols values) into a; the same values on every path.
void quantizeInt8Activations(const float* x, int64_t cols, Int8Activations& a);

// y[r] = b[r] + the sum over the row's blocks of (integer sum) * (d s), rows [r0, r1)
// (RowsFn, quantizing x first), per path: the AVX-512 one uses AVX512-VNNI products
// where the CPU has them and the AVX2 code otherwise.
void rowsInt8Scalar(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                    int64_t r1);
void rowsInt8Avx2(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                  int64_t r1);
void rowsInt8Avx512(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                    int64_t r1);

} // namespace baton::engine::cpu
