// Batched products over packed weights (batched_products.h): panels of float32 steps
// (FMA) and bfloat16 pairs (vdpbf16ps) here, 8-bit quads (vpdpbusd) in
// quad_products.cpp; which one a format takes.
#include "kernels/batched_products.h"

#include "kernels/product_panels.h"
#include "kernels/q4_blocks.h"
#include "kernels/weight_kernels.h"
#include "kernels/weight_loads.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

namespace baton::engine::cpu {

namespace {

// Its instructions run only where productSteps() chose bf16 pairs.
#define BATON_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

std::atomic<bool> g_allowPairs{true}, g_allowQuads{true};

constexpr int kMaxTokens = 12; // activation rows per tile: 24 accumulators
constexpr int64_t kChunk = 16; // steps converted at a time (16 lanes of 32 bits)
constexpr int64_t kAhead = 16; // steps prefetched ahead of the column-major conversion

// Float32 steps and bfloat16 pairs (Pairs): columns per step.
constexpr int64_t columnsPerStep(bool pairs) {
    return pairs ? 2 : 1;
}
// A panel of either holds, for every step s and every row j of the panel, the weights
// (r0 + j, s * columnsPerStep ...) in the 32-bit lane at s * kPanel + j: the step's two
// vectors of 16 lanes. Rows past the matrix, columns past its width, are zeros.

// 16 weights of one row from column c (n of them, zeros after) as float32.
template <WeightFormat F>
BATON_BF16 inline __m512 rowFloats(const MatrixView& m, int64_t r, int64_t c, int64_t n) {
    const __mmask16 mask = n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1);
    if constexpr (F == WeightFormat::F32) {
        return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(m.data) + r * m.cols + c);
    } else if constexpr (F == WeightFormat::F16) {
        return _mm512_cvtph_ps(
            _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(m.data) + r * m.cols + c));
    } else if constexpr (F == WeightFormat::BF16) {
        const __m256i h =
            _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(m.data) + r * m.cols + c);
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else if constexpr (F == WeightFormat::Int8) {
        const __m128i q =
            _mm_maskz_loadu_epi8(mask, static_cast<const int8_t*>(m.data) + r * m.cols + c);
        return _mm512_mul_ps(_mm512_set1_ps(m.scales[r * m.blocksPerRow() + c / kInt8Block]),
                             _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
    } else {
        // Half a block (columns past the width are zeros).
        alignas(64) float w[kInt8Block];
        q4BlockWeights(m, r, c / kInt8Block, w);
        return _mm512_load_ps(w + c % kInt8Block);
    }
}

// One chunk (16 steps) of one row from column c: 16 float32 weights, or 32 weights as
// bfloat16 (columns past `cols` are zeros).
template <WeightFormat F, bool Pairs>
BATON_BF16 inline __m512i rowChunk(const MatrixView& m, int64_t r, int64_t c) {
    const int64_t n = std::min<int64_t>(kChunk * columnsPerStep(Pairs), m.cols - c);
    const __mmask32 mask = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
    if constexpr (!Pairs) {
        return _mm512_castps_si512(rowFloats<F>(m, r, c, n));
    } else if constexpr (F == WeightFormat::BF16) {
        return _mm512_maskz_loadu_epi16(mask,
                                        static_cast<const uint16_t*>(m.data) + r * m.cols + c);
    } else {
        static_assert(F == WeightFormat::F16, "bfloat16 pairs of F16 or BF16 weights");
        const __m512i h =
            _mm512_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(m.data) + r * m.cols + c);
        const __m512 lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
        const __m512 hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
        return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    }
}

// Row-major weights, one panel (n <= 32 rows) over the steps [s0, s1) (s0 a multiple of
// 16): each row gives 16 steps per chunk; the panel's chunk is the transpose of those
// 32 x 16 steps (two 16 x 16 transposes).
template <WeightFormat F, bool Pairs>
BATON_BF16 void packRows(const MatrixView& m, int64_t r0, int64_t n, int64_t s0, int64_t s1,
                         uint32_t* panel) {
    const auto* data = static_cast<const uint8_t*>(m.data);
    // (Q4 rows: half a byte a weight, near enough for the prefetch.)
    constexpr size_t kHalves = F == WeightFormat::Q4 ? 1 : 2 * weightBytes(F);
    const size_t rowBytes =
        F == WeightFormat::Q4 ? q4RowBytes(m.cols) : size_t(m.cols) * weightBytes(F);
    for (int64_t s = s0; s < s1; s += kChunk) {
        const int64_t c = s * columnsPerStep(Pairs);
        uint32_t* out = panel + (s - s0) * kPanel;
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
                r[j] = rowChunk<F, Pairs>(m, r0 + row, c);
            }
            simd::transpose16(r);
            for (int64_t q = 0; q < 16; ++q)
                _mm512_storeu_si512(out + q * kPanel + half * 16, r[q]);
        }
    }
}

// 32 weights of one stored row (a column of the matrix) from row r0 of the matrix, as
// float32 in two vectors (rows past r0 + n are zeros).
template <WeightFormat F>
BATON_BF16 inline void columnFloats(const MatrixView& m, int64_t c, int64_t r0, int64_t n,
                                    __m512& lo, __m512& hi) {
    if (c >= m.cols) {
        lo = hi = _mm512_setzero_ps();
        return;
    }
    const __mmask32 mask = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
    lo = simd::columnLoad16<F>(m, c, r0, __mmask16(mask));
    hi = simd::columnLoad16<F>(m, c, r0 + 16, __mmask16(mask >> 16));
}

// The step s of one panel from column-major weights (rows r0 .. r0 + n): a column's 32
// values as float32; for bfloat16 pairs the columns 2s and 2s + 1, rounded and
// interleaved into pairs.
template <WeightFormat F, bool Pairs>
BATON_BF16 inline void columnStep(const MatrixView& m, int64_t s, int64_t r0, int64_t n,
                                  uint32_t* out) {
    if constexpr (!Pairs) {
        __m512 lo, hi;
        columnFloats<F>(m, s, r0, n, lo, hi);
        _mm512_storeu_ps(out, lo);
        _mm512_storeu_ps(out + 16, hi);
    } else {
        alignas(64) static const uint16_t kLo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                     37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                     11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
        alignas(64) static const uint16_t kHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                                     53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                                     27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
        __m512 a0, a1, b0, b1;
        columnFloats<F>(m, 2 * s, r0, n, a0, a1);
        columnFloats<F>(m, 2 * s + 1, r0, n, b0, b1);
        const __m512i a = (__m512i)_mm512_cvtne2ps_pbh(a1, a0);
        const __m512i b = (__m512i)_mm512_cvtne2ps_pbh(b1, b0);
        _mm512_storeu_si512(out, _mm512_permutex2var_epi16(a, _mm512_load_si512(kLo), b));
        _mm512_storeu_si512(out + 16, _mm512_permutex2var_epi16(a, _mm512_load_si512(kHi), b));
    }
}

// Column-major weights (F32, F16, BF16) are packed in blocks of up to kColumnRows rows
// by kColumnSteps steps, every line of the columns prefetched kAhead steps ahead; the
// tiles carry their sums from one block of steps to the next through y (the same bits:
// a sum leaves its register and comes back unchanged). The block's panels (at most
// 128 KB) stay in the core's cache while every activation row is multiplied with them.
// (Whole-width panels of 128 rows, a line of each prefetched, were packed at a few GB/s:
// GPT-2 XL's 16-token prefill took about twice as long; docs/performance.md.)
constexpr int64_t kColumnRows = 16 * kPanel, kColumnSteps = 64;

template <WeightFormat F, bool Pairs>
BATON_BF16 void packColumns(const MatrixView& m, int64_t r0, int64_t n, int64_t s0, int64_t s1,
                            uint32_t* panels) {
    const auto* data = static_cast<const uint8_t*>(m.data);
    const size_t bytes = weightBytes(F);
    const int64_t count = (n + kPanel - 1) / kPanel, width = s1 - s0;
    for (int64_t s = s0; s < s1; ++s) {
        // The hardware does not follow the jumps from one column to the next.
        const int64_t ahead = (s + kAhead) * columnsPerStep(Pairs);
        for (int64_t c = ahead; c < std::min(ahead + columnsPerStep(Pairs), m.cols); ++c) {
            const char* stretch = reinterpret_cast<const char*>(data + (c * m.rows + r0) * bytes);
            for (size_t at = 0; at < n * bytes; at += 64)
                _mm_prefetch(stretch + at, _MM_HINT_T0);
        }
        for (int64_t g = 0; g < count; ++g)
            columnStep<F, Pairs>(m, s, r0 + g * kPanel, std::min(kPanel, n - g * kPanel),
                                 panels + (g * width + s - s0) * kPanel);
    }
}

// Packs the rows [r0, r0 + n) and steps [s0, s1) into panels of s1 - s0 steps.
using PackFn = void (*)(const MatrixView&, int64_t, int64_t, int64_t, int64_t, uint32_t*);

template <WeightFormat F, bool Pairs>
PackFn packerOf(bool transposed) {
    if constexpr (F == WeightFormat::Int8 || F == WeightFormat::Q4)
        return packRows<F, false>; // never column-major, nor pairs
    else
        return transposed ? packColumns<F, Pairs> : packRows<F, Pairs>;
}

template <bool Pairs>
PackFn packer(const MatrixView& m) {
    switch (m.format) {
    case WeightFormat::F32:
        return packerOf<WeightFormat::F32, false>(m.transposed);
    case WeightFormat::F16:
        return packerOf<WeightFormat::F16, Pairs>(m.transposed);
    case WeightFormat::BF16:
        return packerOf<WeightFormat::BF16, Pairs>(m.transposed);
    case WeightFormat::Int8:
        return packerOf<WeightFormat::Int8, false>(false);
    default:
        return packerOf<WeightFormat::Q4, false>(false);
    }
}

// y[i][0, 32) = panel x activation rows i < T, for one panel of float32 steps or
// bfloat16 pairs (mask: its rows), added to the sums y holds if `resume` (the panel's
// steps continue those), plus the bias b if the panel's steps are the last ones (b
// non-null), else stored as they are.
// Bf16: the steps are pairs (vdpbf16ps), else float32 (FMA).
template <bool Bf16, int T>
BATON_BF16 void tile(const uint32_t* panel, int64_t steps, const uint32_t* xs, int64_t ldx,
                     const float* b, float* y, int64_t ldy, __mmask32 rows, bool resume,
                     bool last) {
    const __mmask16 m0 = __mmask16(rows), m1 = __mmask16(rows >> 16);
    __m512 acc[T][2];
#pragma GCC unroll 12
    for (int i = 0; i < T; ++i) {
        acc[i][0] = resume ? _mm512_maskz_loadu_ps(m0, y + i * ldy) : _mm512_setzero_ps();
        acc[i][1] = resume ? _mm512_maskz_loadu_ps(m1, y + i * ldy + 16) : _mm512_setzero_ps();
    }
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
    if (last) {
        storeTile<T>(acc, b, y, ldy, rows);
        return;
    }
#pragma GCC unroll 12
    for (int i = 0; i < T; ++i) {
        _mm512_mask_storeu_ps(y + i * ldy, m0, acc[i][0]);
        _mm512_mask_storeu_ps(y + i * ldy + 16, m1, acc[i][1]);
    }
}

// A tile over a panel's steps, resumed or not, with the bias or not (above).
using FloatTileFn = void (*)(const uint32_t* panel, int64_t steps, const uint32_t* xs, int64_t ldx,
                             const float* b, float* y, int64_t ldy, __mmask32 rows, bool resume,
                             bool last);

template <bool Bf16, int... T>
constexpr std::array<FloatTileFn, sizeof...(T)> tiles(std::integer_sequence<int, T...>) {
    return {tile<Bf16, T + 1>...};
}
constexpr auto kBf16Tiles = tiles<true>(std::make_integer_sequence<int, kMaxTokens>());
constexpr auto kF32Tiles = tiles<false>(std::make_integer_sequence<int, kMaxTokens>());

// Float32 steps or bfloat16 pairs: the activation words of a row.
int64_t stepWords(bool pairs, int64_t cols) {
    const int64_t steps = (cols + columnsPerStep(pairs) - 1) / columnsPerStep(pairs);
    return (steps + kChunk - 1) / kChunk * kChunk;
}

// Rows of float32 activations as steps: float32 copied, or pairs of bfloat16 rounded
// to nearest even; zero-padded to a multiple of 16 steps.
BATON_BF16 void prepareRows(bool pairs, const float* x, int64_t m, int64_t cols, uint32_t* out) {
    const int64_t steps = stepWords(pairs, cols), width = steps * columnsPerStep(pairs);
    for (int64_t i = 0; i < m; ++i) {
        const float* xr = x + i * cols;
        uint32_t* o = out + i * steps;
        for (int64_t c = 0; c < width; c += 32) {
            const int64_t n = std::min<int64_t>(32, std::max<int64_t>(cols - c, 0));
            const __mmask16 lo = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
            const __mmask16 hi = __mmask16(n >= 32 ? 0xffff : n > 16 ? (1u << (n - 16)) - 1 : 0);
            const __m512 a = _mm512_maskz_loadu_ps(lo, xr + c);
            if (!pairs) {
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

// Column-major weights and at most kInPlaceTokens activation rows, in float32 steps
// (readsInPlace): no panels. A group of 16 rows of W keeps the sums of every
// activation row in registers over a block of steps, reading the weights where they
// lie (a step's 16 weights are side by side); the blocks of steps carry their sums
// through y. A thread's rows are one call (fixed_blocks), so each column's stretch is
// read front to back, a few lines ahead prefetched, by as many stretches at once as
// the block has steps: fewer for fewer rows, where each step does less. The
// activations are first laid out a step at a time (the rows' values of a step side by
// side). For GPT-2 XL's matrices this took about 0.65 of the time of packing for 8
// and 16 rows, was level at 24 and slower at 32; for 2-6 rows it was faster than
// streaming the columns, for one row level (docs/performance.md). The chain is the tiles' (acc =
// fma(w, x, acc) over the steps in order from 0, the padding steps included, then + bias), so the
// bits are too.
constexpr int kInPlaceTokens = 16;
constexpr int64_t kInPlaceAhead = 256; // bytes of a stretch prefetched ahead
constexpr int64_t inPlaceSteps(int rows) {
    return rows <= 4 ? 16 : 32;
}

// xt[s * t + i] = the step s of activation row i < t <= 16 (of rows `ld` words apart),
// for every step s < steps (a multiple of 16).
BATON_AVX512 void stepsSideBySide(const uint32_t* xs, int64_t ld, int t, int64_t steps,
                                  uint32_t* xt) {
    for (int64_t s = 0; s < steps; s += 16) {
        __m512i r[16];
        for (int i = 0; i < 16; ++i)
            r[i] = i < t ? _mm512_loadu_si512(xs + i * ld + s) : _mm512_setzero_si512();
        simd::transpose16(r);
        for (int j = 0; j < 16; ++j)
            _mm512_mask_storeu_epi32(xt + (s + j) * t, __mmask16((1u << t) - 1), r[j]);
    }
}

// The sums of T activation rows (xt: laid out by stepsSideBySide, from step s0) with
// the weights of one group of 16 rows (`rows` of them) over the steps [s0, s1), of
// which the first `steps` are held and the rest padding: 16 weights from w, `stride`
// bytes from one step to the next; with `fetch`, kInPlaceAhead bytes further along each
// stretch prefetched.
template <WeightFormat F, int T>
BATON_AVX512 inline void inPlaceSums(const char* w, int64_t stride, int64_t steps, int64_t padding,
                                     const float* xt, __mmask16 rows, bool fetch,
                                     __m512 (&acc)[T]) {
    for (int64_t s = 0; s < steps; ++s, w += stride, xt += T) {
        if (fetch)
            _mm_prefetch(w + kInPlaceAhead, _MM_HINT_T0);
        const __m512 v = simd::load16<F>(w, rows);
#pragma GCC unroll 16
        for (int i = 0; i < T; ++i)
            acc[i] = _mm512_fmadd_ps(v, _mm512_set1_ps(xt[i]), acc[i]);
    }
    if (padding > 0) // padding steps: fma(0, 0, acc) = acc + 0
#pragma GCC unroll 16
        for (int i = 0; i < T; ++i)
            acc[i] = _mm512_add_ps(acc[i], _mm512_setzero_ps());
}

// The rows [r0, r1) of the products of W with T activation rows laid out by
// stepsSideBySide.
template <WeightFormat F, int T>
BATON_AVX512 void inPlaceTile(const MatrixView& W, const float* xt, int64_t steps, const float* b,
                              float* y, int64_t ldy, int64_t r0, int64_t r1) {
    const auto* data = static_cast<const char*>(W.data);
    const int64_t bytes = int64_t(weightBytes(F)), stride = W.rows * bytes;
    const int64_t ahead = kInPlaceAhead / bytes, cols = W.cols;
    for (int64_t s0 = 0; s0 < steps; s0 += inPlaceSteps(T)) {
        const int64_t s1 = std::min(steps, s0 + inPlaceSteps(T)),
                      held = std::clamp(cols - s0, int64_t(0), s1 - s0);
        const bool last = s1 == steps;
        for (int64_t r = r0; r < r1; r += 16) {
            const bool full = r + 16 <= r1, fetch = r + ahead < r1;
            const __mmask16 rows = full ? __mmask16(0xffff) : __mmask16((1u << (r1 - r)) - 1);
            __m512 acc[T];
#pragma GCC unroll 16
            for (int i = 0; i < T; ++i)
                acc[i] =
                    s0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(rows, y + i * ldy + r);
            const char* w = data + (s0 * W.rows + r) * bytes;
            if (full) // (a constant mask: plain loads)
                inPlaceSums<F, T>(w, stride, held, s1 - s0 - held, xt + s0 * T, 0xffff, fetch, acc);
            else
                inPlaceSums<F, T>(w, stride, held, s1 - s0 - held, xt + s0 * T, rows, fetch, acc);
            const __m512 bias =
                last && b ? _mm512_maskz_loadu_ps(rows, b + r) : _mm512_setzero_ps();
#pragma GCC unroll 16
            for (int i = 0; i < T; ++i)
                _mm512_mask_storeu_ps(y + i * ldy + r, rows,
                                      last ? _mm512_add_ps(acc[i], bias) : acc[i]);
        }
    }
}

using InPlaceFn = void (*)(const MatrixView&, const float*, int64_t, const float*, float*, int64_t,
                           int64_t, int64_t);

template <WeightFormat F, int... T>
constexpr std::array<InPlaceFn, sizeof...(T)> inPlaceTiles(std::integer_sequence<int, T...>) {
    return {inPlaceTile<F, T + 1>...};
}

const InPlaceFn* inPlaceTilesOf(WeightFormat format) {
    static constexpr auto f32 =
        inPlaceTiles<WeightFormat::F32>(std::make_integer_sequence<int, kInPlaceTokens>());
    static constexpr auto f16 =
        inPlaceTiles<WeightFormat::F16>(std::make_integer_sequence<int, kInPlaceTokens>());
    static constexpr auto bf16 =
        inPlaceTiles<WeightFormat::BF16>(std::make_integer_sequence<int, kInPlaceTokens>());
    return format == WeightFormat::F32   ? f32.data()
           : format == WeightFormat::F16 ? f16.data()
                                         : bf16.data();
}

// The m <= kInPlaceTokens activation rows as one tile.
void inPlaceProducts(const MatrixView& W, const uint32_t* xs, int64_t m, const float* b, float* y,
                     int64_t ldy, int64_t r0, int64_t r1) {
    const int64_t steps = stepWords(false, W.cols);
    thread_local std::vector<uint32_t> buffer;
    buffer.resize(size_t(steps * m));
    stepsSideBySide(xs, steps, int(m), steps, buffer.data());
    inPlaceTilesOf(W.format)[m - 1](W, reinterpret_cast<const float*>(buffer.data()), steps, b, y,
                                    ldy, r0, r1);
}

// Panels of float32 steps or bfloat16 pairs over the rows [r0, r1): row-major weights
// a panel at a time over every step, column-major ones in blocks (packColumns).
void floatProducts(const MatrixView& W, bool pairs, const uint32_t* xs, int64_t m, const float* b,
                   float* y, int64_t ldy, int64_t r0, int64_t r1) {
    const int64_t steps = stepWords(pairs, W.cols);
    const int64_t blockRows = W.transposed ? kColumnRows : kPanel;
    const int64_t blockSteps = W.transposed ? kColumnSteps : steps;
    const auto& tiles = pairs ? kBf16Tiles : kF32Tiles;
    thread_local std::vector<uint32_t> buffer;
    buffer.resize(size_t(blockRows * blockSteps));
    const PackFn pack = pairs ? packer<true>(W) : packer<false>(W);
    for (int64_t g0 = r0; g0 < r1; g0 += blockRows) {
        const int64_t g1 = std::min(r1, g0 + blockRows);
        for (int64_t s0 = 0; s0 < steps; s0 += blockSteps) {
            const int64_t s1 = std::min(steps, s0 + blockSteps);
            pack(W, g0, g1 - g0, s0, s1, buffer.data());
            for (int64_t p0 = g0; p0 < g1; p0 += kPanel) {
                const uint32_t* panel = buffer.data() + (p0 - g0) * (s1 - s0);
                const int64_t n = std::min(kPanel, g1 - p0);
                const __mmask32 rows = n >= 32 ? ~__mmask32(0) : (__mmask32(1) << n) - 1;
                for (int64_t i = 0; i < m; i += kMaxTokens) {
                    const int64_t t = std::min<int64_t>(kMaxTokens, m - i);
                    tiles[size_t(t - 1)](panel, s1 - s0, xs + i * steps + s0, steps,
                                         b ? b + p0 : nullptr, y + i * ldy + p0, ldy, rows, s0 > 0,
                                         s1 == steps);
                }
            }
        }
    }
}

} // namespace

bool batchedProducts(WeightFormat) {
    return isa() == Isa::Avx512;
}

bool readsInPlace(const MatrixView& W, int64_t m) {
    return W.transposed && m <= kInPlaceTokens && productSteps(W.format) == ProductSteps::Float32;
}

const char* productStepsName(ProductSteps steps) {
    return steps == ProductSteps::Float32     ? "float32"
           : steps == ProductSteps::Bf16Pairs ? "bf16 pairs"
                                              : "int8 quads";
}

ProductSteps productSteps(WeightFormat format) {
    switch (format) {
    case WeightFormat::F16:
    case WeightFormat::BF16:
        return nativeBf16Products() && g_allowPairs ? ProductSteps::Bf16Pairs
                                                    : ProductSteps::Float32;
    case WeightFormat::Int8:
    case WeightFormat::Q4:
        return simd::hasVnni() && isa() == Isa::Avx512 && g_allowQuads ? ProductSteps::Int8Quads
                                                                       : ProductSteps::Float32;
    default:
        return ProductSteps::Float32;
    }
}

void allowProductSteps(bool bf16Pairs, bool int8Quads) {
    g_allowPairs = bf16Pairs;
    g_allowQuads = int8Quads;
}

int64_t activationWords(WeightFormat format, int64_t cols) {
    switch (productSteps(format)) {
    case ProductSteps::Int8Quads:
        return quadActivationWords(cols);
    case ProductSteps::Bf16Pairs:
        return stepWords(true, cols);
    default:
        return stepWords(false, cols);
    }
}

void prepareActivations(WeightFormat format, const float* x, int64_t m, int64_t cols,
                        uint32_t* out) {
    const ProductSteps steps = productSteps(format);
    if (steps == ProductSteps::Int8Quads)
        prepareQuads(format, x, m, cols, out);
    else
        prepareRows(steps == ProductSteps::Bf16Pairs, x, m, cols, out);
}

void batchedProductRows(const MatrixView& W, const uint32_t* xs, int64_t m, const float* b,
                        float* y, int64_t ldy, int64_t r0, int64_t r1) {
    if (m <= 0)
        return; // no activation rows: no output
    const ProductSteps steps = productSteps(W.format);
    if (steps == ProductSteps::Int8Quads)
        quadProducts(W, xs, m, b, y, ldy, r0, r1);
    else if (readsInPlace(W, m))
        inPlaceProducts(W, xs, m, b, y, ldy, r0, r1);
    else
        floatProducts(W, steps == ProductSteps::Bf16Pairs, xs, m, b, y, ldy, r0, r1);
}

} // namespace baton::engine::cpu
