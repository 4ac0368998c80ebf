// Products of a weight matrix with many activation vectors at once: the batched work
// (prefill, scoring, evaluation) on the CPU without unpacking packed weights to
// float32, and without LibTorch's BLAS for float32 ones.
//
// Each thread converts 32 rows of the matrix at a time into a buffer of its own (a
// panel, in the order the products read it: 100-800 KB for GPT-2's matrices; for a
// mapped checkpoint's column-major bytes, 16 panels at a time over 64 steps) and
// multiplies it with every activation vector; the weights are read once per product,
// in whatever layout they are held. Column-major weights with up to 16 activation
// vectors are not packed: they are read where they lie (readsInPlace). A step is
// what one 32-bit lane of a product holds; a panel holds the weights in steps of one
// of three kinds (ProductSteps):
//  - Float32: one weight, multiplied with FMA in float32. Float32 weights; 16-bit ones
//    on a CPU without AVX512-BF16, 8- and 4-bit ones on a CPU without AVX512-VNNI,
//    converted to float32 exactly.
//  - Bf16Pairs: two weights rounded to bfloat16 (to nearest even), the activations
//    likewise once per product, multiplied with vdpbf16ps (AVX512-BF16): F16 and BF16
//    weights, about four times the float32 rate.
//  - Int8Quads: four weights as unsigned bytes (int8 weights + 128; 4-bit ones as held,
//    u in [0, 15]), the activations quantized to 8 bits in blocks of 32 once per product
//    (quantizeActivationBlock in weight_kernels.h), multiplied with vpdpbusd
//    (AVX512-VNNI): a block's sum is exact in integers, then scaled by the weights' and
//    the activations' scales and accumulated in float32, as the 4-bit decoder does (and
//    llama.cpp's Q8_0 products).
// The Debian OpenBLAS that LibTorch uses picks its AVX2 kernels on AMD Zen 4 and 5,
// half the float32 rate of the AVX-512 ones. CPUs without AVX-512 use LibTorch's float32
// products (unpacking packed matrices). No torch here.
#pragma once

#include "kernels/weight_matrix.h"

#include <cstdint>

namespace baton::engine::cpu {

// Whether batchedProductRows() multiplies matrices of this format now: the AVX-512
// path is in use (every format then).
bool batchedProducts(WeightFormat format);

enum class ProductSteps { Float32, Bf16Pairs, Int8Quads };
const char* productStepsName(ProductSteps steps);
// How batchedProductRows() multiplies a format's weights on this CPU now.
ProductSteps productSteps(WeightFormat format);
// Tests and benchmarks: whether bf16 pairs and 8-bit quads are used where the CPU has
// them (both by default); a kind not allowed gives its formats float32 steps. Activations
// prepared before a change do not fit the products after it.
void allowProductSteps(bool bf16Pairs, bool int8Quads);

// Whether batchedProductRows() reads W where it lies for m activation rows instead of
// packing panels: column-major weights, at most 16 rows, float32 steps. A call then
// reads its rows of every column as one stretch of memory, so each call should take a
// thread's share of the rows at once rather than a small block.
bool readsInPlace(const MatrixView& W, int64_t m);

// The activations as batchedProductRows() reads them for a matrix of this format: m
// rows of activationWords(format, cols) 32-bit words each: float32 values as they are
// (Float32 steps), pairs of values rounded to bfloat16 (Bf16Pairs), zero-padded to a
// multiple of 16 steps; or per block of 32 values (Int8Quads) its 8-bit values in 8
// words, its scale (float32) and -o times the sum of its values (int32; o = 128 for
// Int8 weights, 8 for Q4), zeros past the width.
int64_t activationWords(WeightFormat format, int64_t cols);
void prepareActivations(WeightFormat format, const float* x, int64_t m, int64_t cols,
                        uint32_t* out);

// y[i * ldy + r] = b[r] + the product of row r of W with activation row i, for every
// i < m and r in [r0, r1), as the steps of productSteps(W.format) compute it: the sum
// over the columns c in order (in pairs for bfloat16, each pair one vdpbf16ps step) of
// x(i, c) w(r, c), accumulated in float32 with one rounding per step, w the weight as
// held or converted to float32 (Float32), rounded to bfloat16 (Bf16Pairs); or (Int8Quads)
// the sum over the blocks in order of float(the block's integer sum of q_w q_x) times
// (d_w times s_x), each term one fused multiply-add. x the activations of
// prepareActivations(W.format, ...). b may be null. Runs on the calling thread; an
// element's value does not depend on r0 and r1, so any split of the rows among threads
// gives the same bits. With m = 0 it does nothing. Requires batchedProducts(W.format).
void batchedProductRows(const MatrixView& W, const uint32_t* xs, int64_t m, const float* b,
                        float* y, int64_t ldy, int64_t r0, int64_t r1);

} // namespace baton::engine::cpu
