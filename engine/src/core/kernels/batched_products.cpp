// Batched products over packed weights with vdpbf16ps (batched_products.h).
#include "kernels/batched_products.h"

#include "kernels/weight_kernels.h"
#include "kernels/weight_loads.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

namespace baton::engine::cpu {

namespace {

#define BATON_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

constexpr int64_t kPanel = 32; // weight rows per panel: two vectors of 16 sums
constexpr int kMaxTokens = 12; // activation rows per tile: 24 accumulators
constexpr int64_t kChunk = 32; // columns converted at a time (one int8 block)
constexpr int64_t kAhead = 16; // columns prefetched ahead of the column-major conversion

// A panel holds, for every column pair p and every row j of the panel, the two weights
// (r0 + j, 2p) and (r0 + j, 2p + 1) as bfloat16, at (p * kPanel + j) * 2: the 32-bit
// lane j of the pair's two vectors. Rows past the matrix are zeros.

// 32 weights of one row from column c as bfloat16 (columns past `cols` are zeros).
template <WeightFormat F>
BATON_BF16 inline __m512i rowChunk(const MatrixView& m, int64_t r, int64_t c) {
    const int64_t n = std::min<int64_t>(kChunk, m.cols - c);
    const __mmask32 mask = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
    if constexpr (F == WeightFormat::BF16) {
        return _mm512_maskz_loadu_epi16(mask,
                                        static_cast<const uint16_t*>(m.data) + r * m.cols + c);
    } else if constexpr (F == WeightFormat::F16) {
        const __m512i h =
            _mm512_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(m.data) + r * m.cols + c);
        const __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
        const __m512 hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
        return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    } else {
        const __m256i q =
            _mm256_maskz_loadu_epi8(mask, static_cast<const int8_t*>(m.data) + r * m.cols + c);
        const __m512 scale = _mm512_set1_ps(m.scales[r * m.blocksPerRow() + c / kInt8Block]);
        const __m512 lo = _mm512_mul_ps(
            scale, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(q))));
        const __m512 hi = _mm512_mul_ps(
            scale, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(q, 1))));
        return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    }
}

// The transpose of 16 rows of 16 32-bit values, in place.
BATON_BF16 void transpose16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    // r[4g + k], 128-bit lane L: column 4L + k of rows 4g .. 4g + 3.
    for (int g = 0; g < 16; g += 4) {
        r[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        r[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        r[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        r[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int k = 0; k < 4; ++k) {
        t[k] = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88);
        t[4 + k] = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xdd);
        t[8 + k] = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88);
        t[12 + k] = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xdd);
    }
    for (int k = 0; k < 4; ++k) {
        r[k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0x88);
        r[8 + k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0xdd);
        r[4 + k] = _mm512_shuffle_i32x4(t[4 + k], t[12 + k], 0x88);
        r[12 + k] = _mm512_shuffle_i32x4(t[4 + k], t[12 + k], 0xdd);
    }
}

// Row-major weights: each row gives 16 pairs per chunk of 32 columns; the panel's
// chunk is the transpose of those 32 x 16 pairs (two 16 x 16 transposes).
template <WeightFormat F>
BATON_BF16 void packRows(const MatrixView& m, int64_t r0, int64_t n, int64_t pairs,
                         uint32_t* panel) {
    const auto* data = static_cast<const uint8_t*>(m.data);
    const size_t rowBytes = size_t(m.cols) * weightBytes(F);
    for (int64_t c = 0; c < pairs * 2; c += kChunk) {
        uint32_t* out = panel + (c / 2) * kPanel;
        for (int64_t half = 0; half < 2; ++half) {
            __m512i r[16];
            for (int64_t j = 0; j < 16; ++j) {
                const int64_t row = half * 16 + j;
                if (row >= n) {
                    r[j] = _mm512_setzero_si512();
                    continue;
                }
                // Many rows at once: prefetch each row ahead of its conversion.
                const size_t ahead = size_t(c + kAhead * 8) * weightBytes(F);
                if (ahead < rowBytes)
                    _mm_prefetch(
                        reinterpret_cast<const char*>(data + size_t(r0 + row) * rowBytes + ahead),
                        _MM_HINT_T0);
                r[j] = rowChunk<F>(m, r0 + row, c);
            }
            transpose16(r);
            for (int64_t q = 0; q < 16; ++q)
                _mm512_storeu_si512(out + q * kPanel + half * 16, r[q]);
        }
    }
}

// 32 weights of one stored row (a column of the matrix) from row r0 of the matrix, as
// bfloat16 (rows past r0 + n are zeros).
template <WeightFormat F>
BATON_BF16 inline __m512i columnChunk(const MatrixView& m, int64_t c, int64_t r0, int64_t n) {
    if (c >= m.cols)
        return _mm512_setzero_si512();
    const __mmask32 mask = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
    const __m512i h =
        _mm512_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(m.data) + c * m.rows + r0);
    if constexpr (F == WeightFormat::BF16) {
        return h;
    } else {
        const __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
        const __m512 hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
        return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    }
}

// Column-major weights (F16, BF16): the columns 2p and 2p + 1 hold the panel's rows
// contiguously; interleaving them gives the pair's two vectors.
template <WeightFormat F>
BATON_BF16 void packColumns(const MatrixView& m, int64_t r0, int64_t n, int64_t pairs,
                            uint32_t* panel) {
    alignas(64) static const uint16_t kLo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                 37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    alignas(64) static const uint16_t kHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                                 53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                                 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
    const __m512i lo = _mm512_load_si512(kLo), hi = _mm512_load_si512(kHi);
    const auto* data = static_cast<const uint16_t*>(m.data);
    for (int64_t p = 0; p < pairs; ++p) {
        // Each column is a line of its own, far from the last: prefetch ahead.
        if (2 * p + kAhead + 1 < m.cols) {
            _mm_prefetch(reinterpret_cast<const char*>(data + (2 * p + kAhead) * m.rows + r0),
                         _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(data + (2 * p + kAhead + 1) * m.rows + r0),
                         _MM_HINT_T0);
        }
        const __m512i a = columnChunk<F>(m, 2 * p, r0, n);
        const __m512i b = columnChunk<F>(m, 2 * p + 1, r0, n);
        _mm512_storeu_si512(panel + p * kPanel, _mm512_permutex2var_epi16(a, lo, b));
        _mm512_storeu_si512(panel + p * kPanel + 16, _mm512_permutex2var_epi16(a, hi, b));
    }
}

using PackFn = void (*)(const MatrixView&, int64_t, int64_t, int64_t, uint32_t*);

PackFn packer(const MatrixView& m) {
    switch (m.format) {
    case WeightFormat::F16:
        return m.transposed ? packColumns<WeightFormat::F16> : packRows<WeightFormat::F16>;
    case WeightFormat::BF16:
        return m.transposed ? packColumns<WeightFormat::BF16> : packRows<WeightFormat::BF16>;
    default:
        return packRows<WeightFormat::Int8>;
    }
}

// y[i][0, 32) = bias + panel x activation rows i < T, for one panel (mask: its rows).
template <int T>
BATON_BF16 void tile(const uint32_t* panel, int64_t pairs, const uint16_t* xb, int64_t ldx,
                     const float* b, float* y, int64_t ldy, __mmask32 rows) {
    __m512 acc[T][2];
#pragma GCC unroll 12
    for (int i = 0; i < T; ++i)
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t p = 0; p < pairs; ++p) {
        const __m512bh w0 = (__m512bh)_mm512_loadu_si512(panel + p * kPanel);
        const __m512bh w1 = (__m512bh)_mm512_loadu_si512(panel + p * kPanel + 16);
#pragma GCC unroll 12
        for (int i = 0; i < T; ++i) {
            int32_t pair;
            std::memcpy(&pair, xb + i * ldx + 2 * p, 4);
            const __m512bh xv = (__m512bh)_mm512_set1_epi32(pair);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], w0, xv);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], w1, xv);
        }
    }
    const __mmask16 m0 = __mmask16(rows), m1 = __mmask16(rows >> 16);
    const __m512 b0 = b ? _mm512_maskz_loadu_ps(m0, b) : _mm512_setzero_ps();
    const __m512 b1 = b ? _mm512_maskz_loadu_ps(m1, b + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int i = 0; i < T; ++i) {
        _mm512_mask_storeu_ps(y + i * ldy, m0, _mm512_add_ps(acc[i][0], b0));
        _mm512_mask_storeu_ps(y + i * ldy + 16, m1, _mm512_add_ps(acc[i][1], b1));
    }
}

using TileFn = void (*)(const uint32_t*, int64_t, const uint16_t*, int64_t, const float*, float*,
                        int64_t, __mmask32);
template <int... T>
constexpr std::array<TileFn, sizeof...(T)> tiles(std::integer_sequence<int, T...>) {
    return {tile<T + 1>...};
}
constexpr auto kTiles = tiles(std::make_integer_sequence<int, kMaxTokens>());

BATON_BF16 void roundRows(const float* x, int64_t m, int64_t cols, uint16_t* out) {
    const int64_t stride = bf16Stride(cols);
    for (int64_t i = 0; i < m; ++i) {
        const float* xr = x + i * cols;
        uint16_t* o = out + i * stride;
        for (int64_t c = 0; c < stride; c += 32) {
            const int64_t n = std::min<int64_t>(32, std::max<int64_t>(cols - c, 0));
            const __mmask16 lo = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
            const __mmask16 hi = __mmask16(n >= 32 ? 0xffff : n > 16 ? (1u << (n - 16)) - 1 : 0);
            const __m512 a = _mm512_maskz_loadu_ps(lo, xr + c);
            const __m512 b = _mm512_maskz_loadu_ps(hi, xr + c + 16);
            _mm512_storeu_si512(o + c, (__m512i)_mm512_cvtne2ps_pbh(b, a));
        }
    }
}

} // namespace

bool batchedProducts(WeightFormat format) {
    return format != WeightFormat::F32 && nativeBf16Products();
}

int64_t bf16Stride(int64_t cols) {
    return (cols + kChunk - 1) / kChunk * kChunk;
}

void roundRowsToBf16(const float* x, int64_t m, int64_t cols, uint16_t* out) {
    roundRows(x, m, cols, out);
}

void batchedProductRows(const MatrixView& W, const uint16_t* xb, int64_t m, const float* b,
                        float* y, int64_t ldy, int64_t r0, int64_t r1) {
    const int64_t ldx = bf16Stride(W.cols), pairs = ldx / 2;
    thread_local std::vector<uint32_t> buffer;
    buffer.resize(size_t(pairs * kPanel));
    const PackFn pack = packer(W);
    for (int64_t p0 = r0; p0 < r1; p0 += kPanel) {
        const int64_t n = std::min(kPanel, r1 - p0);
        pack(W, p0, n, pairs, buffer.data());
        const __mmask32 rows = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
        for (int64_t i = 0; i < m; i += kMaxTokens) {
            const int64_t t = std::min<int64_t>(kMaxTokens, m - i);
            kTiles[size_t(t - 1)](buffer.data(), pairs, xb + i * ldx, ldx, b ? b + p0 : nullptr,
                                  y + i * ldy + p0, ldy, rows);
        }
    }
}

} // namespace baton::engine::cpu
