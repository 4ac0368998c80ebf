// Products of a packed weight matrix with many activation vectors at once: the batched
// work (prefill, scoring, evaluation) of a model held in F16, BF16 or int8, without
// unpacking the matrix to float32.
//
// On a CPU with AVX512-BF16 (the AVX-512 path in use): the activations are rounded to
// bfloat16 once per product; each thread converts 32 rows of the weights at a time to
// bfloat16 into a buffer of its own (a panel, in the pair-interleaved order vdpbf16ps
// reads, about 100 KB for a GPT-2 matrix) and multiplies it with every activation
// vector, accumulating in float32. The weights are read once per product, in whatever
// layout they are held (row-major, or a mapped checkpoint's column-major bytes). Other
// CPUs unpack the matrix (unpackRows) and use float32 products. No torch here.
#pragma once

#include "kernels/weight_matrix.h"

#include <cstdint>

namespace baton::engine::cpu {

// Whether batchedProductRows() multiplies matrices of this format now: F16, BF16 or
// Int8, with the AVX-512 path in use on a CPU with AVX512-BF16. F32 weights stay with
// float32 products (their precision is the user's choice).
bool batchedProducts(WeightFormat format);

// The activations as batchedProductRows() reads them: m rows of bf16Stride(cols)
// bfloat16 values (cols rounded up to a multiple of 32, zero-padded), each rounded to
// nearest even.
int64_t bf16Stride(int64_t cols);
void roundRowsToBf16(const float* x, int64_t m, int64_t cols, uint16_t* out);

// y[i * ldy + r] = b[r] + the sum over the column pairs p, in order, of
// xb(i, 2p) w(r, 2p) + xb(i, 2p + 1) w(r, 2p + 1), accumulated in float32, for every
// i < m and r in [r0, r1); w is the weight rounded to bfloat16 (F16 and int8 weights
// are converted to float32, then rounded to nearest even). xb: roundRowsToBf16's rows.
// b may be null. Runs on the calling thread; an element's value does not depend on r0
// and r1, so any split of the rows among threads gives the same bits.
// Requires batchedProducts(W.format).
void batchedProductRows(const MatrixView& W, const uint16_t* xb, int64_t m, const float* b,
                        float* y, int64_t ldy, int64_t r0, int64_t r1);

} // namespace baton::engine::cpu
