// Batched products over packed weights (batched_products.h): float32 weights with
// FMA, the others (F16, BF16, int8, 4-bit) as bfloat16 with vdpbf16ps.
#include "kernels/batched_products.h"

#include "kernels/q4_blocks.h"
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
constexpr int64_t kChunk = 16; // steps converted at a time (16 lanes of 32 bits)
constexpr int64_t kAhead = 16; // steps prefetched ahead of the column-major conversion

// A step is what one 32-bit lane of a product holds: one float32 weight, or a pair of
// bfloat16 weights (vdpbf16ps multiplies pairs). Columns per step:
constexpr int64_t columnsPerStep(WeightFormat f) {
    return f == WeightFormat::F32 ? 1 : 2;
}
// A panel holds, for every step s and every row j of the panel, the weights
// (r0 + j, s * columnsPerStep ...) in the 32-bit lane at s * kPanel + j: the step's two
// vectors of 16 lanes. Rows past the matrix, columns past its width, are zeros.

// One chunk (16 steps) of one row from column c: 16 float32 weights, or 32 weights as
// bfloat16 (columns past `cols` are zeros).
template <WeightFormat F>
BATON_BF16 inline __m512i rowChunk(const MatrixView& m, int64_t r, int64_t c) {
    const int64_t n = std::min<int64_t>(kChunk * columnsPerStep(F), m.cols - c);
    const __mmask32 mask = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
    if constexpr (F == WeightFormat::F32) {
        return _mm512_castps_si512(_mm512_maskz_loadu_ps(
            __mmask16(mask), static_cast<const float*>(m.data) + r * m.cols + c));
    } else if constexpr (F == WeightFormat::BF16) {
        return _mm512_maskz_loadu_epi16(mask,
                                        static_cast<const uint16_t*>(m.data) + r * m.cols + c);
    } else if constexpr (F == WeightFormat::F16) {
        const __m512i h =
            _mm512_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(m.data) + r * m.cols + c);
        const __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
        const __m512 hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
        return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    } else if constexpr (F == WeightFormat::Q4) {
        // A chunk is one block (columns past the width are zeros).
        alignas(64) float w[kInt8Block];
        q4BlockWeights(m, r, c / kInt8Block, w);
        return (__m512i)_mm512_cvtne2ps_pbh(_mm512_load_ps(w + 16), _mm512_load_ps(w));
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

// Row-major weights: each row gives 16 steps per chunk; the panel's chunk is the
// transpose of those 32 x 16 steps (two 16 x 16 transposes).
template <WeightFormat F>
BATON_BF16 void packRows(const MatrixView& m, int64_t r0, int64_t n, int64_t steps,
                         uint32_t* panel) {
    const auto* data = static_cast<const uint8_t*>(m.data);
    // (Q4 rows: half a byte a weight, near enough for the prefetch.)
    constexpr size_t kHalves = F == WeightFormat::Q4 ? 1 : 2 * weightBytes(F);
    const size_t rowBytes =
        F == WeightFormat::Q4 ? q4RowBytes(m.cols) : size_t(m.cols) * weightBytes(F);
    for (int64_t s = 0; s < steps; s += kChunk) {
        const int64_t c = s * columnsPerStep(F);
        uint32_t* out = panel + s * kPanel;
        for (int64_t half = 0; half < 2; ++half) {
            __m512i r[16];
            for (int64_t j = 0; j < 16; ++j) {
                const int64_t row = half * 16 + j;
                if (row >= n) {
                    r[j] = _mm512_setzero_si512();
                    continue;
                }
                // Many rows at once: prefetch each row ahead of its conversion.
                const size_t ahead = size_t(c + 256) * kHalves / 2;
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

// The step s of one panel from column-major weights (rows r0 .. r0 + n): a float32
// column's 32 values as they are; for 16-bit weights the columns 2s and 2s + 1,
// interleaved into pairs.
template <WeightFormat F>
BATON_BF16 inline void columnStep(const MatrixView& m, int64_t s, int64_t r0, int64_t n,
                                  uint32_t* out) {
    if constexpr (F == WeightFormat::F32) {
        const __mmask32 mask = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
        const float* col = static_cast<const float*>(m.data) + s * m.rows + r0;
        const bool inside = s < m.cols;
        _mm512_storeu_ps(out, _mm512_maskz_loadu_ps(inside ? __mmask16(mask) : 0, col));
        _mm512_storeu_ps(out + 16,
                         _mm512_maskz_loadu_ps(inside ? __mmask16(mask >> 16) : 0, col + 16));
    } else {
        alignas(64) static const uint16_t kLo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                     37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                     11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
        alignas(64) static const uint16_t kHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                                     53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                                     27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
        const __m512i a = columnChunk<F>(m, 2 * s, r0, n);
        const __m512i b = columnChunk<F>(m, 2 * s + 1, r0, n);
        _mm512_storeu_si512(out, _mm512_permutex2var_epi16(a, _mm512_load_si512(kLo), b));
        _mm512_storeu_si512(out + 16, _mm512_permutex2var_epi16(a, _mm512_load_si512(kHi), b));
    }
}

// Column-major weights (F32, F16, BF16): each column lies in a page of its own (a
// GPT-2 XL column is 3-13 KB apart from the next), so one walk over the columns fills
// kColumnGroup panels: four lines of every page it visits instead of one (GPT-2 XL's
// first token spent a third of its time in single-panel walks).
constexpr int64_t kColumnGroup = 4;

template <WeightFormat F>
BATON_BF16 void packColumns(const MatrixView& m, int64_t r0, int64_t n, int64_t steps,
                            uint32_t* panels) {
    const auto* data = static_cast<const uint8_t*>(m.data);
    const size_t bytes = weightBytes(F);
    const int64_t count = (n + kPanel - 1) / kPanel;
    for (int64_t s = 0; s < steps; ++s) {
        // Prefetch the columns ahead: the hardware does not follow such strides.
        const int64_t ahead = (s + kAhead) * columnsPerStep(F);
        for (int64_t c = ahead; c < std::min(ahead + columnsPerStep(F), m.cols); ++c)
            for (int64_t g = 0; g < count; ++g)
                _mm_prefetch(
                    reinterpret_cast<const char*>(data + (c * m.rows + r0 + g * kPanel) * bytes),
                    _MM_HINT_T0);
        for (int64_t g = 0; g < count; ++g)
            columnStep<F>(m, s, r0 + g * kPanel, std::min(kPanel, n - g * kPanel),
                          panels + g * steps * kPanel + s * kPanel);
    }
}

using PackFn = void (*)(const MatrixView&, int64_t, int64_t, int64_t, uint32_t*);

PackFn packer(const MatrixView& m) {
    switch (m.format) {
    case WeightFormat::F32:
        return m.transposed ? packColumns<WeightFormat::F32> : packRows<WeightFormat::F32>;
    case WeightFormat::F16:
        return m.transposed ? packColumns<WeightFormat::F16> : packRows<WeightFormat::F16>;
    case WeightFormat::BF16:
        return m.transposed ? packColumns<WeightFormat::BF16> : packRows<WeightFormat::BF16>;
    case WeightFormat::Int8:
        return packRows<WeightFormat::Int8>;
    default:
        return packRows<WeightFormat::Q4>;
    }
}

// y[i][0, 32) = bias + panel x activation rows i < T, for one panel (mask: its rows);
// Bf16: the steps are pairs (vdpbf16ps), else float32 (FMA).
template <bool Bf16, int T>
BATON_BF16 void tile(const uint32_t* panel, int64_t steps, const uint32_t* xs, int64_t ldx,
                     const float* b, float* y, int64_t ldy, __mmask32 rows) {
    __m512 acc[T][2];
#pragma GCC unroll 12
    for (int i = 0; i < T; ++i)
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t s = 0; s < steps; ++s) {
        const __m512i w0 = _mm512_loadu_si512(panel + s * kPanel);
        const __m512i w1 = _mm512_loadu_si512(panel + s * kPanel + 16);
#pragma GCC unroll 12
        for (int i = 0; i < T; ++i) {
            const __m512i xv = _mm512_set1_epi32(int32_t(xs[i * ldx + s]));
            if constexpr (Bf16) {
                acc[i][0] = _mm512_dpbf16_ps(acc[i][0], (__m512bh)w0, (__m512bh)xv);
                acc[i][1] = _mm512_dpbf16_ps(acc[i][1], (__m512bh)w1, (__m512bh)xv);
            } else {
                acc[i][0] =
                    _mm512_fmadd_ps(_mm512_castsi512_ps(w0), _mm512_castsi512_ps(xv), acc[i][0]);
                acc[i][1] =
                    _mm512_fmadd_ps(_mm512_castsi512_ps(w1), _mm512_castsi512_ps(xv), acc[i][1]);
            }
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

using TileFn = void (*)(const uint32_t*, int64_t, const uint32_t*, int64_t, const float*, float*,
                        int64_t, __mmask32);
template <bool Bf16, int... T>
constexpr std::array<TileFn, sizeof...(T)> tiles(std::integer_sequence<int, T...>) {
    return {tile<Bf16, T + 1>...};
}
constexpr auto kBf16Tiles = tiles<true>(std::make_integer_sequence<int, kMaxTokens>());
constexpr auto kF32Tiles = tiles<false>(std::make_integer_sequence<int, kMaxTokens>());

// Rows of float32 activations as steps: float32 copied, or pairs of bfloat16 rounded
// to nearest even; zero-padded to a multiple of 16 steps.
BATON_BF16 void prepareRows(WeightFormat f, const float* x, int64_t m, int64_t cols,
                            uint32_t* out) {
    const int64_t steps = activationSteps(f, cols), width = steps * columnsPerStep(f);
    for (int64_t i = 0; i < m; ++i) {
        const float* xr = x + i * cols;
        uint32_t* o = out + i * steps;
        for (int64_t c = 0; c < width; c += 32) {
            const int64_t n = std::min<int64_t>(32, std::max<int64_t>(cols - c, 0));
            const __mmask16 lo = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
            const __mmask16 hi = __mmask16(n >= 32 ? 0xffff : n > 16 ? (1u << (n - 16)) - 1 : 0);
            const __m512 a = _mm512_maskz_loadu_ps(lo, xr + c);
            if (f == WeightFormat::F32) {
                _mm512_storeu_ps(o + c, a);
                if (c + 16 < width)
                    _mm512_storeu_ps(o + c + 16, _mm512_maskz_loadu_ps(hi, xr + c + 16));
            } else {
                const __m512 b = _mm512_maskz_loadu_ps(hi, xr + c + 16);
                _mm512_storeu_si512(o + c / 2, (__m512i)_mm512_cvtne2ps_pbh(b, a));
            }
        }
    }
}

} // namespace

bool batchedProducts(WeightFormat format) {
    return isa() == Isa::Avx512 && (format == WeightFormat::F32 || nativeBf16Products());
}

int64_t activationSteps(WeightFormat format, int64_t cols) {
    const int64_t steps = (cols + columnsPerStep(format) - 1) / columnsPerStep(format);
    return (steps + kChunk - 1) / kChunk * kChunk;
}

void prepareActivations(WeightFormat format, const float* x, int64_t m, int64_t cols,
                        uint32_t* out) {
    prepareRows(format, x, m, cols, out);
}

void batchedProductRows(const MatrixView& W, const uint32_t* xs, int64_t m, const float* b,
                        float* y, int64_t ldy, int64_t r0, int64_t r1) {
    const int64_t steps = activationSteps(W.format, W.cols);
    const int64_t group = W.transposed ? kColumnGroup : 1;
    const auto& tiles = W.format == WeightFormat::F32 ? kF32Tiles : kBf16Tiles;
    thread_local std::vector<uint32_t> buffer;
    buffer.resize(size_t(group * steps * kPanel));
    const PackFn pack = packer(W);
    for (int64_t g0 = r0; g0 < r1; g0 += group * kPanel) {
        pack(W, g0, std::min(group * kPanel, r1 - g0), steps, buffer.data());
        for (int64_t p0 = g0; p0 < std::min(r1, g0 + group * kPanel); p0 += kPanel) {
            const uint32_t* panel = buffer.data() + (p0 - g0) / kPanel * steps * kPanel;
            const int64_t n = std::min(kPanel, r1 - p0);
            const __mmask32 rows = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
            for (int64_t i = 0; i < m; i += kMaxTokens) {
                const int64_t t = std::min<int64_t>(kMaxTokens, m - i);
                tiles[size_t(t - 1)](panel, steps, xs + i * steps, steps, b ? b + p0 : nullptr,
                                     y + i * ldy + p0, ldy, rows);
            }
        }
    }
}

} // namespace baton::engine::cpu
