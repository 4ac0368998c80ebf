// The inside of weight_matrix.cpp: the scalar conversions that define each format's
// rounding (packing uses them, every vector path must match them) and the per-ISA
// kernel tables (AVX-512, AVX2, scalar) that the public functions dispatch to.
#pragma once

#include "kernels/weight_matrix.h"

#include <cmath>
#include <cstdint>

namespace baton::engine::cpu {

// v, or 0 for a NaN or an infinity (how the 8- and 4-bit formats take such weights).
inline float finiteOrZero(float v) {
    return std::fabs(v) <= 3.40282347e38f ? v : 0.f; // FLT_MAX
}

// x rounded to the nearest integer, ties to even (std::nearbyint in the default rounding
// mode), for |x| < 2^22; inline and branch-free, where std::nearbyint is a library call.
inline float roundEven(float x) {
    constexpr float kMagic = 12582912.f; // 1.5 * 2^23: adding it drops the fraction
    return std::copysign((std::fabs(x) + kMagic) - kMagic, x);
}

float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f); // round to nearest even; NaN stays NaN
float f16ToFloat(uint16_t h);
uint16_t floatToF16(float f); // round to nearest even, overflow to infinity
// n values at once: out[i] = floatToF16(x[i]) / floatToBf16(x[i]), in vector code.
void floatsToF16(const float* x, int64_t n, uint16_t* out);
void floatsToBf16(const float* x, int64_t n, uint16_t* out);

// Rows of `cols` weights (held one after another at w) in the Int8 format, block by
// block (32 weights; the last may hold fewer): a block's scale is max |w| / 127 and
// q[i] = round(w[i] / scale) (ties to even, within [-127, 127]; 0 for a zero block).
// NaN and infinite weights count as 0. Row r's cols values go to q + r * qStride and
// its blocks' scales to scales + r * scaleStride. The same values on every path.
void quantizeInt8Rows(const float* w, int64_t rows, int64_t cols, int8_t* q, int64_t qStride,
                      float* scales, int64_t scaleStride);

// Activations in 8 bits, one block of n <= 32 values x (llama.cpp's Q8_0): scale =
// max |x| / 127 and q[i] = round(x[i] * (127 / max |x|)) (ties to even), zeros past n;
// returns the sum of the q. A block holding an infinity or a NaN gets q = 0 and a NaN
// scale. The same values on every path (q4_kernels.cpp). The 4-bit products and the
// batched 8-bit products (batched_products.h) both quantize this way.
int32_t quantizeActivationBlock(const float* x, int64_t n, int8_t q[32], float& scale);

using RowsFn = void (*)(const MatrixView&, const float*, const float*, float*, int64_t, int64_t);
using AxpyFn = void (*)(float*, const float*, float, int64_t);
using UnpackFn = void (*)(const MatrixView&, int64_t, int64_t, float*);

struct Kernels {
    RowsFn rows[5];     // by WeightFormat
    UnpackFn unpack[5]; // by WeightFormat (F32 is a copy and never comes here)
    AxpyFn axpy;
};

// The kernels of the path in use (setIsa).
const Kernels& kernels();

// Products over a transposed (column-major) matrix (column_kernels.cpp): adds to
// acc[r], r in [r0, r1), fma(x[c], W(r, c), .) for the columns c0, c0 + 1, ..., c1 - 1
// in turn. For a path and a format (F32, F16 or BF16).
using ColumnsFn = void (*)(const MatrixView&, const float* x, int64_t c0, int64_t c1, float* acc,
                           int64_t r0, int64_t r1);
ColumnsFn columnKernel(Isa isa, WeightFormat format);
// Rows [r0, r1) by columns [c0, c1) of a column-major matrix (F32, F16 or BF16) as
// float32 rows, c1 - c0 wide, with AVX-512 (unpackTile of a transposed view on that
// path).
void unpackColumnMajorAvx512(const MatrixView& m, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                             float* out);

// One weight as float32, in the format's exact value (the scalar reference).
float weightAt(const MatrixView& m, int64_t r, int64_t c);

} // namespace baton::engine::cpu
