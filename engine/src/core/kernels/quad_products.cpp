// 8-bit products of int8 and 4-bit weights (batched_products.h: Int8Quads).
#include "kernels/product_panels.h"
#include "kernels/q4_blocks.h"
#include "kernels/weight_kernels.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

namespace baton::engine::cpu {

namespace {

// A quads panel holds, for every block b of 32 columns, its 8 steps (the lane
// (9 b + s) * kPanel + j holds the weights (r0 + j, 32 b + 4 s .. 32 b + 4 s + 3) as
// unsigned bytes) and then the 32 rows' scales of the block as float32. Rows past the
// matrix are zeros (scale 0); columns past the width hold the format's zero (128 for
// Int8, 8 for Q4). The activations: kQuadWords words a block (batched_products.h).
constexpr int64_t kQuadSteps = 8, kQuadBlock = (kQuadSteps + 1) * kPanel, kQuadWords = 10;
constexpr int kMaxQuadTokens = 6; // activation rows per tile: 12 integer and 12 float sums

// The panel's lanes [16 h, 16 h + 16) of block b's step s.
inline uint32_t* quadLanes(uint32_t* panel, int64_t b, int64_t s, int64_t h) {
    return panel + b * kQuadBlock + s * kPanel + 16 * h;
}

// Row-major int8 weights: for each 16 rows, two blocks (64 bytes) of each, + 128, are
// one 16 x 16 transpose of 32-bit lanes away from the panel's 16 steps.
BATON_VNNI void packInt8Quads(const MatrixView& m, int64_t r0, int64_t n, uint32_t* panel) {
    const int64_t nb = m.blocksPerRow();
    const auto* data = static_cast<const int8_t*>(m.data);
    const __m512i offset = _mm512_set1_epi8(char(0x80));
    for (int64_t h = 0; h < 2; ++h)
        for (int64_t b = 0; b < nb; b += 2) {
            const int64_t c = b * kInt8Block, width = std::min<int64_t>(64, m.cols - c);
            const __mmask64 mask = width >= 64 ? ~__mmask64(0) : (__mmask64(1) << width) - 1;
            __m512i r[16];
            for (int64_t j = 0; j < 16; ++j) {
                const int64_t row = 16 * h + j;
                if (row >= n) {
                    r[j] = _mm512_setzero_si512();
                    continue;
                }
                const int8_t* at = data + (r0 + row) * m.cols + c;
                if (c + 256 < m.cols)
                    _mm_prefetch(reinterpret_cast<const char*>(at + 256), _MM_HINT_T0);
                r[j] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, at), offset);
            }
            simd::transpose16(r);
            for (int64_t s = 0; s < kQuadSteps; ++s) {
                _mm512_storeu_si512(quadLanes(panel, b, s, h), r[s]);
                if (b + 1 < nb)
                    _mm512_storeu_si512(quadLanes(panel, b + 1, s, h), r[kQuadSteps + s]);
            }
        }
    for (int64_t b = 0; b < nb; ++b) {
        float* scales = reinterpret_cast<float*>(quadLanes(panel, b, kQuadSteps, 0));
        for (int64_t j = 0; j < kPanel; ++j)
            scales[j] = j < n ? m.scales[(r0 + j) * nb + b] : 0.f;
    }
}

// Row-major 4-bit weights (q4_blocks.h): part p of a group of 16 blocks of 16 rows is
// one transpose away from lanes per block; its low nibbles are the block's step 2 p,
// its high ones step 2 p + 1. (F16C converts the scales: every AVX-512 CPU has it.)
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c"))) void
packQ4Quads(const MatrixView& m, int64_t r0, int64_t n, uint32_t* panel) {
    const int64_t nb = m.blocksPerRow();
    const size_t rowBytes = q4RowBytes(m.cols);
    const auto* data = static_cast<const uint8_t*>(m.data);
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int64_t h = 0; h < 2; ++h)
        for (int64_t first = 0; first < nb; first += kQ4Group) {
            const int64_t count = std::min(kQ4Group, nb - first);
            const __mmask16 lanes = __mmask16(count >= 16 ? 0xffff : (1u << count) - 1);
            for (int64_t p = 0; p < 4; ++p) {
                __m512i r[16];
                for (int64_t j = 0; j < 16; ++j) {
                    const int64_t row = 16 * h + j;
                    r[j] = row < n ? _mm512_maskz_loadu_epi32(
                                         lanes, data + size_t(r0 + row) * rowBytes +
                                                    size_t(first) * 16 + size_t(p * 4 * count))
                                   : _mm512_setzero_si512();
                }
                simd::transpose16(r);
                for (int64_t k = 0; k < count; ++k) {
                    _mm512_storeu_si512(quadLanes(panel, first + k, 2 * p, h),
                                        _mm512_and_si512(r[k], low));
                    _mm512_storeu_si512(quadLanes(panel, first + k, 2 * p + 1, h),
                                        _mm512_and_si512(_mm512_srli_epi32(r[k], 4), low));
                }
            }
        }
    for (int64_t b = 0; b < nb; ++b) {
        float* scales = reinterpret_cast<float*>(quadLanes(panel, b, kQuadSteps, 0));
        for (int64_t j = 0; j < kPanel; ++j)
            scales[j] = j < n ? _cvtsh_ss(m.q4Scales[(r0 + j) * nb + b]) : 0.f;
    }
}

// y[i][0, 32) = bias + panel x activation rows i < T for one quads panel of nb blocks.
template <int T>
BATON_VNNI void quadTile(const uint32_t* panel, int64_t nb, const uint32_t* xs, int64_t ldx,
                         const float* b, float* y, int64_t ldy, __mmask32 rows) {
    __m512 acc[T][2];
    const uint32_t* x[T]; // each row's block, walked along (one register each)
#pragma GCC unroll 6
    for (int i = 0; i < T; ++i) {
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
        x[i] = xs + i * ldx;
    }
    for (int64_t blk = 0; blk < nb; ++blk) {
        const uint32_t* p = panel + blk * kQuadBlock;
        __m512i sum[T][2];
#pragma GCC unroll 6
        for (int i = 0; i < T; ++i) // the weights' offset, taken once
            sum[i][0] = sum[i][1] = _mm512_set1_epi32(int32_t(x[i][kQuadSteps + 1]));
#pragma GCC unroll 8
        for (int64_t s = 0; s < kQuadSteps; ++s) {
            const __m512i w0 = _mm512_loadu_si512(p + s * kPanel);
            const __m512i w1 = _mm512_loadu_si512(p + s * kPanel + 16);
#pragma GCC unroll 6
            for (int i = 0; i < T; ++i) {
                const __m512i xv = _mm512_set1_epi32(int32_t(x[i][s]));
                sum[i][0] = _mm512_dpbusd_epi32(sum[i][0], w0, xv);
                sum[i][1] = _mm512_dpbusd_epi32(sum[i][1], w1, xv);
            }
        }
        const __m512 d0 = _mm512_loadu_ps(p + kQuadSteps * kPanel);
        const __m512 d1 = _mm512_loadu_ps(p + kQuadSteps * kPanel + 16);
#pragma GCC unroll 6
        for (int i = 0; i < T; ++i) {
            float sx;
            std::memcpy(&sx, x[i] + kQuadSteps, sizeof sx);
            const __m512 sv = _mm512_set1_ps(sx);
            acc[i][0] =
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[i][0]), _mm512_mul_ps(d0, sv), acc[i][0]);
            acc[i][1] =
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[i][1]), _mm512_mul_ps(d1, sv), acc[i][1]);
            x[i] += kQuadWords;
        }
    }
    storeTile<T>(acc, b, y, ldy, rows);
}

template <int... T>
constexpr std::array<TileFn, sizeof...(T)> quadTiles(std::integer_sequence<int, T...>) {
    return {quadTile<T + 1>...};
}
constexpr auto kQuadTiles = quadTiles(std::make_integer_sequence<int, kMaxQuadTokens>());

} // namespace

int64_t quadActivationWords(int64_t cols) {
    return (cols + kInt8Block - 1) / kInt8Block * kQuadWords;
}

// Rows of activations as quads: a block's values, its scale and -offset times their sum.
void prepareQuads(WeightFormat f, const float* x, int64_t m, int64_t cols, uint32_t* out) {
    const int64_t nb = (cols + kInt8Block - 1) / kInt8Block;
    const int32_t offset = f == WeightFormat::Int8 ? 128 : 8;
    int8_t q[kInt8Block];
    for (int64_t i = 0; i < m; ++i)
        for (int64_t blk = 0; blk < nb; ++blk) {
            const int64_t c = blk * kInt8Block;
            uint32_t* o = out + i * nb * kQuadWords + blk * kQuadWords;
            float scale = 0.f;
            const int32_t sum =
                quantizeActivationBlock(x + i * cols + c, std::min(kInt8Block, cols - c), q, scale);
            std::memcpy(o, q, sizeof q);
            std::memcpy(o + kQuadSteps, &scale, sizeof scale);
            o[kQuadSteps + 1] = uint32_t(-offset * sum);
        }
}

// Quads panels over the rows [r0, r1).
void quadProducts(const MatrixView& W, const uint32_t* xs, int64_t m, const float* b, float* y,
                  int64_t ldy, int64_t r0, int64_t r1) {
    const int64_t nb = W.blocksPerRow(), words = nb * kQuadWords;
    thread_local std::vector<uint32_t> panel;
    panel.resize(size_t(nb * kQuadBlock));
    const auto pack = W.format == WeightFormat::Int8 ? packInt8Quads : packQ4Quads;
    for (int64_t p0 = r0; p0 < r1; p0 += kPanel) {
        const int64_t n = std::min(kPanel, r1 - p0);
        pack(W, p0, n, panel.data());
        const __mmask32 rows = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
        for (int64_t i = 0; i < m; i += kMaxQuadTokens) {
            const int64_t t = std::min<int64_t>(kMaxQuadTokens, m - i);
            kQuadTiles[size_t(t - 1)](panel.data(), nb, xs + i * words, words, b ? b + p0 : nullptr,
                                      y + i * ldy + p0, ldy, rows);
        }
    }
}

} // namespace baton::engine::cpu
