// 8-bit weights: their rounding, the activations' quantization and the decoder's
// matrix-vector products (int8_blocks.h).
#include "kernels/int8_blocks.h"
#include "kernels/weight_loads.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace baton::engine::cpu {

namespace {

float int8BlockScalar(const float* w, int64_t n, int8_t* q) {
    float v[kInt8Block], amax = 0.f;
    for (int64_t i = 0; i < n; ++i) {
        v[i] = finiteOrZero(w[i]);
        amax = std::max(amax, std::fabs(v[i]));
    }
    const float scale = amax / 127.f, inv = scale > 0.f ? 1.f / scale : 0.f;
    for (int64_t i = 0; i < n; ++i)
        q[i] = static_cast<int8_t>(std::clamp(roundEven(v[i] * inv), -127.f, 127.f));
    return scale;
}

// The same values with AVX-512, in three steps: a block's weights (finite, zeros past
// n) in two vectors, their largest magnitude, and q = round(w * inv) (nearest even)
// clamped and narrowed.
struct BlockLanes {
    __mmask16 lo, hi;
    __m512 v[2];
};

BATON_AVX512 inline __attribute__((always_inline)) BlockLanes loadBlock(const float* w, int64_t n) {
    BlockLanes b;
    b.lo = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
    b.hi = __mmask16(n >= 32 ? 0xffff : n > 16 ? (1u << (n - 16)) - 1 : 0);
    b.v[0] = simd::finiteOrZero16(_mm512_maskz_loadu_ps(b.lo, w));
    b.v[1] = simd::finiteOrZero16(_mm512_maskz_loadu_ps(b.hi, w + 16));
    return b;
}

BATON_AVX512 inline __attribute__((always_inline)) __m512 blockMagnitudes(const BlockLanes& b) {
    return _mm512_max_ps(_mm512_abs_ps(b.v[0]), _mm512_abs_ps(b.v[1]));
}

BATON_AVX512 inline __attribute__((always_inline)) void storeBlock(const BlockLanes& b, float inv,
                                                                   int8_t* q) {
    const __m512 top = _mm512_set1_ps(127.f), bottom = _mm512_set1_ps(-127.f);
    for (int h = 0; h < 2; ++h) {
        const __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(b.v[h], _mm512_set1_ps(inv)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm512_mask_cvtepi32_storeu_epi8(
            q + 16 * h, h == 0 ? b.lo : b.hi,
            _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(r, bottom), top)));
    }
}

BATON_AVX512 inline __attribute__((always_inline)) float int8BlockAvx512(const float* w, int64_t n,
                                                                         int8_t* q) {
    const BlockLanes b = loadBlock(w, n);
    const float scale = _mm512_reduce_max_ps(blockMagnitudes(b)) / 127.f;
    storeBlock(b, scale > 0.f ? 1.f / scale : 0.f, q);
    return scale;
}

// Lane i: the largest lane of m[i]. Four rounds of halving, each taking the larger of
// two shuffles of a pair, leave the answer for m[4 p + j] in lane 4 j + p; a last
// permutation puts it in lane 4 p + j.
BATON_AVX512 inline __attribute__((always_inline)) __m512 largestLanes(const __m512 (&m)[16]) {
    __m512 t[8], u[4], v[2];
    for (int k = 0; k < 8; ++k) // 256-bit halves: lanes 0-7 for m[2k], 8-15 for m[2k + 1]
        t[k] = _mm512_max_ps(_mm512_shuffle_f32x4(m[2 * k], m[2 * k + 1], 0x44),
                             _mm512_shuffle_f32x4(m[2 * k], m[2 * k + 1], 0xee));
    for (int k = 0; k < 4; ++k) // 128-bit quarters: quarter j for m[4k + j]
        u[k] = _mm512_max_ps(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0x88),
                             _mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0xdd));
    for (int k = 0; k < 2; ++k) // pairs: quarter j's lanes 0-1 for m[8k + j], 2-3 for m[8k + 4 + j]
        v[k] = _mm512_max_ps(_mm512_shuffle_ps(u[2 * k], u[2 * k + 1], 0x44),
                             _mm512_shuffle_ps(u[2 * k], u[2 * k + 1], 0xee));
    const __m512 w =
        _mm512_max_ps(_mm512_shuffle_ps(v[0], v[1], 0x88), _mm512_shuffle_ps(v[0], v[1], 0xdd));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(order, w);
}

// Rows 16 at a time, block by block: the 16 rows' scales in one vector (one division
// for all), each row's block then rounded as int8BlockAvx512 rounds it (the same
// values: the largest magnitude is exact in any order). The rows past a multiple of 16
// one block at a time.
BATON_AVX512 void int8RowsAvx512(const float* w, int64_t rows, int64_t cols, int8_t* q,
                                 int64_t qStride, float* scales, int64_t scaleStride) {
    int64_t r = 0;
    for (; r + 16 <= rows; r += 16)
        for (int64_t c0 = 0, blk = 0; c0 < cols; c0 += kInt8Block, ++blk) {
            const int64_t n = std::min(kInt8Block, cols - c0);
            __m512 m[16];
            for (int i = 0; i < 16; ++i)
                m[i] = blockMagnitudes(loadBlock(w + (r + i) * cols + c0, n));
            const __m512 scale = _mm512_div_ps(largestLanes(m), _mm512_set1_ps(127.f));
            const __m512 inv =
                _mm512_maskz_div_ps(_mm512_cmp_ps_mask(scale, _mm512_setzero_ps(), _CMP_GT_OQ),
                                    _mm512_set1_ps(1.f), scale);
            alignas(64) float s[16], invs[16];
            _mm512_store_ps(s, scale);
            _mm512_store_ps(invs, inv);
            for (int i = 0; i < 16; ++i) {
                storeBlock(loadBlock(w + (r + i) * cols + c0, n), invs[i],
                           q + (r + i) * qStride + c0);
                scales[(r + i) * scaleStride + blk] = s[i];
            }
        }
    for (; r < rows; ++r)
        for (int64_t c0 = 0, blk = 0; c0 < cols; c0 += kInt8Block, ++blk)
            scales[r * scaleStride + blk] = int8BlockAvx512(
                w + r * cols + c0, std::min(kInt8Block, cols - c0), q + r * qStride + c0);
}

// x quantized for this thread. Each thread of a product's team quantizes the whole of
// x itself rather than wait for one of them (microseconds for GPT-2's widest x).
const Int8Activations& quantized(const float* x, int64_t cols) {
    thread_local Int8Activations a;
    quantizeInt8Activations(x, cols, a);
    return a;
}

inline const int8_t* rowOf(const MatrixView& m, int64_t r) {
    return static_cast<const int8_t*>(m.data) + r * m.cols;
}

// The exact integer sum of q x_q over block `blk` of row r.
int32_t blockSum(const MatrixView& m, const Int8Activations& a, int64_t r, int64_t blk) {
    const int64_t c0 = blk * kInt8Block, n = std::min(kInt8Block, m.cols - c0);
    const int8_t *w = rowOf(m, r) + c0, *x = a.q.data() + c0;
    int32_t s = 0;
    for (int64_t i = 0; i < n; ++i)
        s += int32_t(w[i]) * x[i];
    return s;
}

inline float blockScale(const MatrixView& m, const Int8Activations& a, int64_t r, int64_t blk) {
    return m.scales[r * m.blocksPerRow() + blk] * a.scale[size_t(blk)];
}

// Blocks [from, nb) of row r, one at a time.
float blocksScalar(const MatrixView& m, const Int8Activations& a, int64_t r, int64_t from) {
    float s = 0.f;
    for (int64_t blk = from; blk < m.blocksPerRow(); ++blk)
        s += float(blockSum(m, a, r, blk)) * blockScale(m, a, r, blk);
    return s;
}

// R rows from r over the whole blocks (the row's partial last block, if any, goes the
// scalar way): per block and row, |q| times x_q with q's sign in pairs (vpmaddubsw: at
// most 2 * 127 * 127, no saturation), summed into 32-bit lanes (vpmaddwd).
template <int R>
BATON_AVX2 void rowsAvx2(const MatrixView& m, const Int8Activations& a, const float* b, float* y,
                         int64_t r) {
    const int64_t full = m.cols / kInt8Block, nb = m.blocksPerRow();
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[R];
    for (int t = 0; t < R; ++t)
        acc[t] = _mm256_setzero_ps();
    for (int64_t blk = 0; blk < full; ++blk) {
        const int64_t c = blk * kInt8Block;
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q.data() + c));
#pragma GCC unroll 4
        for (int t = 0; t < R; ++t) {
            const int8_t* w = rowOf(m, r + t);
            if (blk % 2 == 0)
                simd::prefetchAhead(w, c);
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + c));
            const __m256i p = _mm256_madd_epi16(
                _mm256_maddubs_epi16(_mm256_abs_epi8(v), _mm256_sign_epi8(xv, v)), ones);
            const float d = m.scales[(r + t) * nb + blk] * a.scale[size_t(blk)];
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d), acc[t]);
        }
    }
    for (int t = 0; t < R; ++t)
        y[r + t] = simd::hsum256(acc[t]) + blocksScalar(m, a, r + t, full) + (b ? b[r + t] : 0.f);
}

// Two blocks (64 bytes at c) of R rows: q + 128 (the sign bit flipped) as unsigned
// bytes against x_q, vpdpbusd into 16 lanes (8 a block) that start from -128 times the
// sum of the block's x_q (in its first lane); each lane is then scaled by its block's
// d s. A last step that the row does not fill loads only the bytes in the row
// (`bytes`: the others give 128 x 0), and reads a second block's scale only where the
// row has one (`two`).
template <int R, bool Whole>
BATON_VNNI inline void stepVnni(const int8_t* const* w, const float* const* d,
                                const Int8Activations& a, int64_t c, __mmask64 bytes, bool two,
                                __m512* acc) {
    const int64_t blk = c / kInt8Block;
    const __m512i xv = _mm512_loadu_si512(a.q.data() + c); // an even number of blocks
    const __m512 sx = _mm512_mask_broadcastss_ps(_mm512_set1_ps(a.scale[size_t(blk)]), 0xff00,
                                                 _mm_set_ss(a.scale[size_t(blk + 1)]));
    const __m512i start =
        _mm512_mask_set1_epi32(_mm512_maskz_set1_epi32(0x0001, -128 * a.sum[size_t(blk)]), 0x0100,
                               -128 * a.sum[size_t(blk + 1)]);
    const __m512i flip = _mm512_set1_epi8(char(0x80));
#pragma GCC unroll 4
    for (int t = 0; t < R; ++t) {
        const __m512i v =
            Whole ? _mm512_loadu_si512(w[t] + c) : _mm512_maskz_loadu_epi8(bytes, w[t] + c);
        const __m512i dot = _mm512_dpbusd_epi32(start, _mm512_xor_si512(v, flip), xv);
        const __m512 dl = Whole || two
                              ? _mm512_mask_broadcastss_ps(_mm512_set1_ps(d[t][blk]), 0xff00,
                                                           _mm_set_ss(d[t][blk + 1]))
                              : _mm512_set1_ps(d[t][blk]);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dl, sx), acc[t]);
    }
}

// R rows from r, 64 bytes of each a step.
template <int R>
BATON_VNNI void rowsVnni(const MatrixView& m, const Int8Activations& a, const float* b, float* y,
                         int64_t r) {
    const int64_t cols = m.cols, nb = m.blocksPerRow();
    const int8_t* w[R];
    const float* d[R];
    __m512 acc[R];
    for (int t = 0; t < R; ++t) {
        w[t] = rowOf(m, r + t);
        d[t] = m.scales + (r + t) * nb;
        acc[t] = _mm512_setzero_ps();
    }
    int64_t c = 0;
    for (; c + 2 * kInt8Block <= cols; c += 2 * kInt8Block) {
#pragma GCC unroll 4
        for (int t = 0; t < R; ++t)
            simd::prefetchAhead(w[t], c);
        stepVnni<R, true>(w, d, a, c, 0, true, acc);
    }
    if (c < cols) {
        const int64_t left = cols - c;
        stepVnni<R, false>(w, d, a, c, (__mmask64(1) << left) - 1, left > kInt8Block, acc);
    }
    for (int t = 0; t < R; ++t)
        y[r + t] = _mm512_reduce_add_ps(acc[t]) + (b ? b[r + t] : 0.f);
}

// The rows [r0, r1): four at a time, then one at a time.
using RowsOf = void (*)(const MatrixView&, const Int8Activations&, const float*, float*, int64_t);
void fourRowsAtATime(RowsOf four, RowsOf one, const MatrixView& m, const float* x, const float* b,
                     float* y, int64_t r0, int64_t r1) {
    const Int8Activations& a = quantized(x, m.cols);
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4)
        four(m, a, b, y, r);
    for (; r < r1; ++r)
        one(m, a, b, y, r);
}

} // namespace

void quantizeInt8Rows(const float* w, int64_t rows, int64_t cols, int8_t* q, int64_t qStride,
                      float* scales, int64_t scaleStride) {
    if (isa() == Isa::Avx512) {
        int8RowsAvx512(w, rows, cols, q, qStride, scales, scaleStride);
        return;
    }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c0 = 0, blk = 0; c0 < cols; c0 += kInt8Block, ++blk)
            scales[r * scaleStride + blk] = int8BlockScalar(
                w + r * cols + c0, std::min(kInt8Block, cols - c0), q + r * qStride + c0);
}

void quantizeInt8Activations(const float* x, int64_t cols, Int8Activations& a) {
    const int64_t nb = (cols + kInt8Block - 1) / kInt8Block;
    a.blocks = nb + nb % 2;
    a.q.assign(size_t(a.blocks * kInt8Block), 0);
    a.scale.assign(size_t(a.blocks), 0.f);
    a.sum.assign(size_t(a.blocks), 0);
    for (int64_t blk = 0; blk < nb; ++blk) {
        const int64_t c0 = blk * kInt8Block;
        a.sum[size_t(blk)] = quantizeActivationBlock(x + c0, std::min(kInt8Block, cols - c0),
                                                     a.q.data() + c0, a.scale[size_t(blk)]);
    }
}

void rowsInt8Scalar(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                    int64_t r1) {
    const Int8Activations& a = quantized(x, m.cols);
    for (int64_t r = r0; r < r1; ++r)
        y[r] = blocksScalar(m, a, r, 0) + (b ? b[r] : 0.f);
}

void rowsInt8Avx2(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                  int64_t r1) {
    fourRowsAtATime(rowsAvx2<4>, rowsAvx2<1>, m, x, b, y, r0, r1);
}

void rowsInt8Avx512(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                    int64_t r1) {
    if (simd::hasVnni())
        fourRowsAtATime(rowsVnni<4>, rowsVnni<1>, m, x, b, y, r0, r1);
    else
        rowsInt8Avx2(m, x, b, y, r0, r1);
}

} // namespace baton::engine::cpu
