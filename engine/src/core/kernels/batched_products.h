// Products of a weight matrix with many activation vectors at once: the batched work
// (prefill, scoring, evaluation) on the CPU without unpacking packed weights to
// float32, and without LibTorch's BLAS for float32 ones.
//
// Each thread converts 32 rows of the matrix at a time into a buffer of its own (a
// panel, in the order the products read it: 128 bytes per float32 weight column or
// bf16 column pair, 100-800 KB for GPT-2's matrices, four at once for column-major
// weights) and multiplies it with every activation vector, accumulating in float32;
// the weights are read once per product, in whatever layout they are held (row-major,
// or a mapped checkpoint's column-major bytes). Float32 weights are multiplied with
// FMA (AVX-512); F16, BF16, int8 and 4-bit weights are rounded to bfloat16 in the panel, the
// activations rounded to bfloat16 once per product, and multiplied with vdpbf16ps
// (AVX512-BF16).
// The Debian OpenBLAS that LibTorch uses picks its AVX2 kernels on AMD Zen 4 and 5,
// half the float32 rate of the AVX-512 ones. Other CPUs use LibTorch's float32
// products (unpacking packed matrices). No torch here.
#pragma once

#include "kernels/weight_matrix.h"

#include <cstdint>

namespace baton::engine::cpu {

// Whether batchedProductRows() multiplies matrices of this format now: the AVX-512
// path is in use, and for F16, BF16, Int8 and Q4 the CPU has AVX512-BF16.
bool batchedProducts(WeightFormat format);

// The activations as batchedProductRows() reads them for a matrix of this format: m
// rows of activationSteps(format, cols) 32-bit steps each, zero-padded: float32 values
// as they are (F32), or pairs of values rounded to bfloat16 (to nearest even).
int64_t activationSteps(WeightFormat format, int64_t cols);
void prepareActivations(WeightFormat format, const float* x, int64_t m, int64_t cols,
                        uint32_t* out);

// y[i * ldy + r] = b[r] + the sum over the columns c, in order (in pairs for bfloat16,
// each pair one vdpbf16ps step), of x(i, c) w(r, c), accumulated in float32 with one
// rounding per step, for every i < m and r in [r0, r1); w is the weight as held (F32)
// or rounded to bfloat16 (F16, int8 and Q4 weights are converted to float32, then rounded
// to nearest even), x the activations of prepareActivations(W.format, ...). b may be
// null. Runs on the calling thread; an element's value does not depend on r0 and r1,
// so any split of the rows among threads gives the same bits.
// Requires batchedProducts(W.format).
void batchedProductRows(const MatrixView& W, const uint32_t* xs, int64_t m, const float* b,
                        float* y, int64_t ldy, int64_t r0, int64_t r1);

} // namespace baton::engine::cpu
