// 4-bit weights (WeightFormat::Q4), 4.5 bits a weight as in llama.cpp's Q4_0: every
// 32 consecutive weights of a row (a block) share one float16 scale d, and a weight is
// d * (u - 8) with u in [0, 15].
//
// Rounding (packQ4Tile): d0 = the block's weight of largest magnitude / -8 (Q4_0's
// choice: that weight is exactly -8 d0), rounded to float16, and u = round(w * (1 / d0))
// + 8 (ties to even) clamped to [0, 15]; then the least-squares scale for those u,
// d1 = sum(w q) / sum(q q) (q = u - 8), rounded to float16, and the u it rounds to. The
// block keeps whichever of the two has the smaller squared error, compared as
// d^2 sum(q q) - 2 d sum(w q) in double (d0 on a tie). A zero block has d = 0 and u = 8;
// non-finite weights count as 0, and |d| is at most 65504 (float16's largest).
//
// Storage: a row's 16-byte blocks of nibbles, rows one after another, then the float16
// scales ([rows, blocks]). A row's blocks lie in groups of 16 (the row's last group may
// hold fewer, n): a group's 16 n bytes are four parts of 4 n bytes, and in part p the
// 4 bytes at 4 j belong to block j of the group: their low nibbles are the block's
// weights 8 p .. 8 p + 3, their high nibbles 8 p + 4 .. 8 p + 7. A 32-bit lane of a
// 64-byte load then holds one block's weights, so one product (vpdpbusd) per part
// sums 16 blocks at once, and a block's sum never leaves its lane. Columns past the
// row's width hold u = 8 (zero).
//
// Products quantize the activations once per call to 8 bits in blocks of 32
// (quantizeActivationBlock, the same as llama.cpp's Q8_0): a block's sum is d s times
// the exact integer sum of (u - 8) x_q, accumulated in float32.
// Internal to the kernels; no torch here.
#pragma once

#include "kernels/weight_kernels.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace baton::engine::cpu {

constexpr int64_t kQ4Group = 16; // blocks laid out together (one 32-bit lane each)

// Bytes of nibbles a row of `cols` weights takes.
constexpr size_t q4RowBytes(int64_t cols) {
    return size_t((cols + kInt8Block - 1) / kInt8Block) * 16;
}

// Block `blk` of a row of nb blocks: the offset of its part 0 from the row's first
// byte; `partBytes` is the distance between its parts (4 n).
inline int64_t q4BlockOffset(int64_t nb, int64_t blk, int64_t& partBytes) {
    const int64_t g = blk / kQ4Group;
    partBytes = 4 * std::min(kQ4Group, nb - g * kQ4Group);
    return g * kQ4Group * 16 + 4 * (blk % kQ4Group);
}

// Converts the float32 tile of rows [r0, r1) by columns [c0, c1), held row-major at w
// (c1 - c0 wide), into those weights of a Q4 matrix `cols` wide: its nibbles and
// scales (the whole matrix's arrays). c0 is a multiple of a group (kQ4Group blocks),
// and so is c1 unless it is `cols`.
void packQ4Tile(const float* w, int64_t cols, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                uint8_t* nibbles, uint16_t* scales);

// The activations of one product, quantized: for group g (16 blocks) and part v in
// [0, 8), the 64 bytes at (8 g + v) * 64 hold in lane j block 16 g + j's values
// 4 v .. 4 v + 3; scale[b] is block b's s, bias[b] = -8 times the sum of its x_q (the
// "- 8" of every weight, applied once). Blocks past the width are zeros.
struct Q4Activations {
    int64_t groups = 0;
    std::vector<int8_t> q;
    std::vector<float> scale;
    std::vector<int32_t> bias;
};
// Quantizes x (cols values) into a; the same values on every path.
void quantizeQ4Activations(const float* x, int64_t cols, Q4Activations& a);

// y[r] = b[r] + the sum over the row's blocks of (integer sum) * (d s), rows [r0, r1)
// (RowsFn, quantizing x first), per path: the AVX-512 one uses AVX512-VNNI products
// where the CPU has them and the AVX2 code otherwise.
void rowsQ4Scalar(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                  int64_t r1);
void rowsQ4Avx2(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                int64_t r1);
void rowsQ4Avx512(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                  int64_t r1);
// The 32 weights of block `blk` of row r as float32, d * (u - 8) (zeros past the
// width), with AVX-512 when that path is in use. Unpacking and the batched products'
// panels both read blocks this way.
void q4BlockWeights(const MatrixView& m, int64_t r, int64_t blk, float out[32]);
// Rows [r0, r1) as float32 (UnpackFn).
void unpackQ4(const MatrixView& m, int64_t r0, int64_t r1, float* out);
// One weight as float32.
float q4WeightAt(const MatrixView& m, int64_t r, int64_t c);

} // namespace baton::engine::cpu
