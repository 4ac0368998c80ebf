// The matrix kernels for each weight format and instruction set (weight_kernels.h).
#include "kernels/weight_kernels.h"
#include "kernels/int8_blocks.h"
#include "kernels/q4_blocks.h"
#include "kernels/weight_loads.h"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

namespace baton::engine::cpu {

// ---- scalar conversions (the reference every vector path matches) ----

float bf16ToFloat(uint16_t h) {
    const uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t floatToBf16(float f) { // round to nearest even; NaN stays NaN
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((bits >> 16) | 0x40);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(bits >> 16);
}

float f16ToFloat(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0x1f) { // inf, nan
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { // subnormal: normalise
            int e = -1;
            do {
                ++e;
                mant <<= 1;
            } while (!(mant & 0x400u));
            bits = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t floatToF16(float f) { // round to nearest even, overflow to infinity
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t absBits = bits & 0x7fffffffu;
    if (absBits > 0x7f800000u) // nan
        return sign | 0x7e00u;
    if (absBits >= 0x477ff000u) // rounds to >= 65520: infinity
        return sign | 0x7c00u;
    if (absBits < 0x38800000u) { // below the smallest normal: subnormal or zero
        float a;
        std::memcpy(&a, &absBits, 4);
        // a * 2^24 rounded to an integer (nearest even) is the subnormal's mantissa.
        return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
    }
    uint32_t m = absBits + 0xfffu + ((absBits >> 13) & 1u) - (uint32_t(127 - 15) << 23);
    return sign | static_cast<uint16_t>(m >> 13);
}

namespace {

// floatsToF16 and floatsToBf16 in vector lanes: each lane takes the steps of the
// scalar function (the hardware's float16 conversion rounds to nearest even and
// overflows to infinity as floatToF16 does; NaN lanes are given floatToF16's NaN).
BATON_AVX512 void floatsToHalfAvx512(const float* x, int64_t n, uint16_t* out, bool bf16) {
    const __m512i low = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1),
                  quiet = _mm512_set1_epi32(0x40), sign = _mm512_set1_epi32(0x8000),
                  f16Nan = _mm512_set1_epi32(0x7e00), absMask = _mm512_set1_epi32(0x7fffffff),
                  inf = _mm512_set1_epi32(0x7f800000);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = __mmask16(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
        const __m512i bits = _mm512_castps_si512(_mm512_maskz_loadu_ps(k, x + i));
        const __m512i high = _mm512_srli_epi32(bits, 16);
        const __mmask16 nan =
            _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, absMask), inf); // NaN lanes
        __m256i h;
        if (bf16) {
            const __m512i even = _mm512_add_epi32(low, _mm512_and_si512(high, one));
            const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(bits, even), 16);
            h = _mm512_cvtepi32_epi16(_mm512_mask_or_epi32(r, nan, high, quiet));
        } else {
            h = _mm512_cvtps_ph(_mm512_castsi512_ps(bits),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            const __m512i nanBits = _mm512_or_si512(_mm512_and_si512(high, sign), f16Nan);
            h = _mm256_mask_mov_epi16(h, nan, _mm512_cvtepi32_epi16(nanBits));
        }
        _mm256_mask_storeu_epi16(out + i, k, h);
    }
}

BATON_AVX2 void floatsToF16Avx2(const float* x, int64_t n, uint16_t* out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0)
            for (int64_t j = i; j < i + 8; ++j) // NaN lanes: floatToF16's NaN
                out[j] = floatToF16(x[j]);
    }
    for (; i < n; ++i)
        out[i] = floatToF16(x[i]);
}

} // namespace

void floatsToF16(const float* x, int64_t n, uint16_t* out) {
    if (isa() == Isa::Avx512)
        floatsToHalfAvx512(x, n, out, false);
    else if (isa() == Isa::Avx2)
        floatsToF16Avx2(x, n, out);
    else
        for (int64_t i = 0; i < n; ++i)
            out[i] = floatToF16(x[i]);
}

void floatsToBf16(const float* x, int64_t n, uint16_t* out) {
    if (isa() == Isa::Avx512) {
        floatsToHalfAvx512(x, n, out, true);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        out[i] = floatToBf16(x[i]);
}

float weightAt(const MatrixView& m, int64_t r, int64_t c) {
    const int64_t i = m.transposed ? c * m.rows + r : r * m.cols + c;
    switch (m.format) {
    case WeightFormat::F32:
        return static_cast<const float*>(m.data)[i];
    case WeightFormat::F16:
        return f16ToFloat(static_cast<const uint16_t*>(m.data)[i]);
    case WeightFormat::BF16:
        return bf16ToFloat(static_cast<const uint16_t*>(m.data)[i]);
    case WeightFormat::Int8:
        return m.scales[r * m.blocksPerRow() + c / kInt8Block] *
               float(static_cast<const int8_t*>(m.data)[i]);
    case WeightFormat::Q4:
        return q4WeightAt(m, r, c);
    }
    return 0.f;
}

namespace {

using namespace simd;

// The dot product of row r from column c0 to the end, added to s, one weight at a
// time (the scalar path, and every vector path's tail).
float dotTail(const MatrixView& m, int64_t r, int64_t c0, const float* x, float s) {
    for (int64_t c = c0; c < m.cols; ++c)
        s += weightAt(m, r, c) * x[c];
    return s;
}

void rowsScalar(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
        y[r] = dotTail(m, r, 0, x, 0.f) + (b ? b[r] : 0.f);
}

// ---- vector paths: 4 rows at a time, one accumulator per row ----

template <WeightFormat F>
const void* rowPtr(const MatrixView& m, int64_t r) {
    return static_cast<const uint8_t*>(m.data) + size_t(r * m.cols) * elementBytes<F>();
}

// The four row streams of a step that starts at weight i (float32 rows do without).
template <WeightFormat F>
inline void prefetchRows(const void* w0, const void* w1, const void* w2, const void* w3,
                         int64_t i) {
    if constexpr (F != WeightFormat::F32) {
        const int64_t at = i * int64_t(elementBytes<F>());
        prefetchAhead(w0, at);
        prefetchAhead(w1, at);
        prefetchAhead(w2, at);
        prefetchAhead(w3, at);
    }
}

// Rows in steps of 8 (AVX2) or 16 (AVX-512) weights (F32, F16, BF16).
template <WeightFormat F>
BATON_AVX2 void rowsAvx2(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                         int64_t r1) {
    const int64_t cols = m.cols;
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        const void *w0 = rowPtr<F>(m, r), *w1 = rowPtr<F>(m, r + 1), *w2 = rowPtr<F>(m, r + 2),
                   *w3 = rowPtr<F>(m, r + 3);
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(),
               a3 = _mm256_setzero_ps();
        int64_t i = 0;
        // A cache line per row and step (16 float32 or 32 16-bit weights), on two
        // chains per row.
        constexpr int64_t kStep = 64 / int64_t(elementBytes<F>());
        __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps(), c2 = _mm256_setzero_ps(),
               c3 = _mm256_setzero_ps();
        for (; i + kStep <= cols; i += kStep) {
            prefetchRows<F>(w0, w1, w2, w3, i);
            for (int64_t j = 0; j < kStep; j += 16) {
                const __m256 xa = _mm256_loadu_ps(x + i + j), xb = _mm256_loadu_ps(x + i + j + 8);
                a0 = _mm256_fmadd_ps(load8<F>(w0, i + j), xa, a0);
                c0 = _mm256_fmadd_ps(load8<F>(w0, i + j + 8), xb, c0);
                a1 = _mm256_fmadd_ps(load8<F>(w1, i + j), xa, a1);
                c1 = _mm256_fmadd_ps(load8<F>(w1, i + j + 8), xb, c1);
                a2 = _mm256_fmadd_ps(load8<F>(w2, i + j), xa, a2);
                c2 = _mm256_fmadd_ps(load8<F>(w2, i + j + 8), xb, c2);
                a3 = _mm256_fmadd_ps(load8<F>(w3, i + j), xa, a3);
                c3 = _mm256_fmadd_ps(load8<F>(w3, i + j + 8), xb, c3);
            }
        }
        a0 = _mm256_add_ps(a0, c0);
        a1 = _mm256_add_ps(a1, c1);
        a2 = _mm256_add_ps(a2, c2);
        a3 = _mm256_add_ps(a3, c3);
        for (; i + 8 <= cols; i += 8) {
            const __m256 xv = _mm256_loadu_ps(x + i);
            a0 = _mm256_fmadd_ps(load8<F>(w0, i), xv, a0);
            a1 = _mm256_fmadd_ps(load8<F>(w1, i), xv, a1);
            a2 = _mm256_fmadd_ps(load8<F>(w2, i), xv, a2);
            a3 = _mm256_fmadd_ps(load8<F>(w3, i), xv, a3);
        }
        y[r] = dotTail(m, r, i, x, hsum256(a0)) + (b ? b[r] : 0.f);
        y[r + 1] = dotTail(m, r + 1, i, x, hsum256(a1)) + (b ? b[r + 1] : 0.f);
        y[r + 2] = dotTail(m, r + 2, i, x, hsum256(a2)) + (b ? b[r + 2] : 0.f);
        y[r + 3] = dotTail(m, r + 3, i, x, hsum256(a3)) + (b ? b[r + 3] : 0.f);
    }
    rowsScalar(m, x, b, y, r, r1);
}

template <WeightFormat F>
BATON_AVX512 void rowsAvx512(const MatrixView& m, const float* x, const float* b, float* y,
                             int64_t r0, int64_t r1) {
    const int64_t cols = m.cols;
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        const void *w0 = rowPtr<F>(m, r), *w1 = rowPtr<F>(m, r + 1), *w2 = rowPtr<F>(m, r + 2),
                   *w3 = rowPtr<F>(m, r + 3);
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
               a3 = _mm512_setzero_ps();
        int64_t i = 0;
        {
            // 32 weights per row and step (a cache line of 16-bit weights), two
            // independent chains per row.
            __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps(), c2 = _mm512_setzero_ps(),
                   c3 = _mm512_setzero_ps();
            for (; i + 32 <= cols; i += 32) {
                prefetchRows<F>(w0, w1, w2, w3, i);
                const __m512 xa = _mm512_loadu_ps(x + i), xb = _mm512_loadu_ps(x + i + 16);
                a0 = _mm512_fmadd_ps(load16<F>(w0, i), xa, a0);
                c0 = _mm512_fmadd_ps(load16<F>(w0, i + 16), xb, c0);
                a1 = _mm512_fmadd_ps(load16<F>(w1, i), xa, a1);
                c1 = _mm512_fmadd_ps(load16<F>(w1, i + 16), xb, c1);
                a2 = _mm512_fmadd_ps(load16<F>(w2, i), xa, a2);
                c2 = _mm512_fmadd_ps(load16<F>(w2, i + 16), xb, c2);
                a3 = _mm512_fmadd_ps(load16<F>(w3, i), xa, a3);
                c3 = _mm512_fmadd_ps(load16<F>(w3, i + 16), xb, c3);
            }
            a0 = _mm512_add_ps(a0, c0);
            a1 = _mm512_add_ps(a1, c1);
            a2 = _mm512_add_ps(a2, c2);
            a3 = _mm512_add_ps(a3, c3);
        }
        for (; i + 16 <= cols; i += 16) {
            const __m512 xv = _mm512_loadu_ps(x + i);
            a0 = _mm512_fmadd_ps(load16<F>(w0, i), xv, a0);
            a1 = _mm512_fmadd_ps(load16<F>(w1, i), xv, a1);
            a2 = _mm512_fmadd_ps(load16<F>(w2, i), xv, a2);
            a3 = _mm512_fmadd_ps(load16<F>(w3, i), xv, a3);
        }
        y[r] = dotTail(m, r, i, x, _mm512_reduce_add_ps(a0)) + (b ? b[r] : 0.f);
        y[r + 1] = dotTail(m, r + 1, i, x, _mm512_reduce_add_ps(a1)) + (b ? b[r + 1] : 0.f);
        y[r + 2] = dotTail(m, r + 2, i, x, _mm512_reduce_add_ps(a2)) + (b ? b[r + 2] : 0.f);
        y[r + 3] = dotTail(m, r + 3, i, x, _mm512_reduce_add_ps(a3)) + (b ? b[r + 3] : 0.f);
    }
    rowsScalar(m, x, b, y, r, r1);
}

// ---- rows as float32 (for the batched torch paths) ----

void unpackScalar(const MatrixView& m, int64_t r0, int64_t r1, float* out) {
    for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < m.cols; ++c)
            *out++ = weightAt(m, r, c);
}

// The same values as unpackScalar (an int8 weight is one product, scale * q, either way);
// int8 blocks are multiples of the vector width, so no step straddles two scales.
template <WeightFormat F>
BATON_AVX2 void unpackAvx2(const MatrixView& m, int64_t r0, int64_t r1, float* out) {
    for (int64_t r = r0; r < r1; ++r, out += m.cols) {
        const void* w = rowPtr<F>(m, r);
        int64_t c = 0;
        if constexpr (F == WeightFormat::Int8) {
            const float* sc = m.scales + r * m.blocksPerRow();
            for (; c + 8 <= m.cols; c += 8)
                _mm256_storeu_ps(out + c,
                                 _mm256_mul_ps(_mm256_set1_ps(sc[c / kInt8Block]), load8<F>(w, c)));
        } else {
            for (; c + 8 <= m.cols; c += 8)
                _mm256_storeu_ps(out + c, load8<F>(w, c));
        }
        for (; c < m.cols; ++c)
            out[c] = weightAt(m, r, c);
    }
}

template <WeightFormat F>
BATON_AVX512 void unpackAvx512(const MatrixView& m, int64_t r0, int64_t r1, float* out) {
    for (int64_t r = r0; r < r1; ++r, out += m.cols) {
        const void* w = rowPtr<F>(m, r);
        int64_t c = 0;
        if constexpr (F == WeightFormat::Int8) {
            const float* sc = m.scales + r * m.blocksPerRow();
            for (; c + 16 <= m.cols; c += 16)
                _mm512_storeu_ps(
                    out + c, _mm512_mul_ps(_mm512_set1_ps(sc[c / kInt8Block]), load16<F>(w, c)));
        } else {
            for (; c + 16 <= m.cols; c += 16)
                _mm512_storeu_ps(out + c, load16<F>(w, c));
        }
        for (; c < m.cols; ++c)
            out[c] = weightAt(m, r, c);
    }
}

// ---- y += a * x ----

void axpyScalar(float* y, const float* x, float a, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        y[i] += a * x[i];
}

BATON_AVX2 void axpyAvx2(float* y, const float* x, float a, int64_t n) {
    const __m256 av = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    axpyScalar(y + i, x + i, a, n - i);
}

BATON_AVX512 void axpyAvx512(float* y, const float* x, float a, int64_t n) {
    const __m512 av = _mm512_set1_ps(a);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i,
                         _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    axpyScalar(y + i, x + i, a, n - i);
}

// ---- BF16 weights against bfloat16-rounded activations (AVX512-BF16) ----

#define BATON_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// On a CPU with native bf16 dot products a BF16 product needs no conversion of the
// weights: x is rounded to bf16 once per call (to nearest even, as the batched path
// rounds its activations on such a CPU) and vdpbf16ps multiplies 32 pairs a step into
// float32 sums. The tail (cols not a multiple of 32) is the same products in scalar.
// It streams at float32's rate without prefetchRows (as few instructions per byte).
BATON_AVX512BF16 inline __m512bh loadBf16(const uint16_t* p) {
    return (__m512bh)_mm512_loadu_si512(p);
}

BATON_AVX512BF16 inline float finishBf16(const uint16_t* wRow, const uint16_t* xr, int64_t body,
                                         int64_t cols, __m512 acc) {
    float s = _mm512_reduce_add_ps(acc);
    for (int64_t c = body; c < cols; ++c)
        s += bf16ToFloat(wRow[c]) * bf16ToFloat(xr[c]);
    return s;
}

BATON_AVX512BF16 void rowsAvx512Bf16(const MatrixView& m, const float* x, const float* b, float* y,
                                     int64_t r0, int64_t r1) {
    const int64_t cols = m.cols, body = cols / 32 * 32;
    thread_local std::vector<uint16_t> rounded;
    rounded.resize(size_t(cols));
    for (int64_t c = 0; c < cols; ++c)
        rounded[size_t(c)] = floatToBf16(x[c]);
    const uint16_t* xr = rounded.data();
    const auto* w = static_cast<const uint16_t*>(m.data);
    auto finish = [&](int64_t row, float s) { y[row] = s + (b ? b[row] : 0.f); };
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        const uint16_t *w0 = w + r * cols, *w1 = w0 + cols, *w2 = w1 + cols, *w3 = w2 + cols;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t i = 0; i < body; i += 32) {
            const __m512bh xv = loadBf16(xr + i);
            a0 = _mm512_dpbf16_ps(a0, loadBf16(w0 + i), xv);
            a1 = _mm512_dpbf16_ps(a1, loadBf16(w1 + i), xv);
            a2 = _mm512_dpbf16_ps(a2, loadBf16(w2 + i), xv);
            a3 = _mm512_dpbf16_ps(a3, loadBf16(w3 + i), xv);
        }
        finish(r, finishBf16(w0, xr, body, cols, a0));
        finish(r + 1, finishBf16(w1, xr, body, cols, a1));
        finish(r + 2, finishBf16(w2, xr, body, cols, a2));
        finish(r + 3, finishBf16(w3, xr, body, cols, a3));
    }
    for (; r < r1; ++r) {
        const uint16_t* wr = w + r * cols;
        __m512 a = _mm512_setzero_ps();
        for (int64_t i = 0; i < body; i += 32)
            a = _mm512_dpbf16_ps(a, loadBf16(wr + i), loadBf16(xr + i));
        finish(r, finishBf16(wr, xr, body, cols, a));
    }
}

constexpr Kernels kScalar{{rowsScalar, rowsScalar, rowsScalar, rowsInt8Scalar, rowsQ4Scalar},
                          {unpackScalar, unpackScalar, unpackScalar, unpackScalar, unpackQ4},
                          axpyScalar};
constexpr Kernels kAvx2{{rowsAvx2<WeightFormat::F32>, rowsAvx2<WeightFormat::F16>,
                         rowsAvx2<WeightFormat::BF16>, rowsInt8Avx2, rowsQ4Avx2},
                        {unpackScalar, unpackAvx2<WeightFormat::F16>,
                         unpackAvx2<WeightFormat::BF16>, unpackAvx2<WeightFormat::Int8>, unpackQ4},
                        axpyAvx2};
constexpr Kernels kAvx512{{rowsAvx512<WeightFormat::F32>, rowsAvx512<WeightFormat::F16>,
                           rowsAvx512<WeightFormat::BF16>, rowsInt8Avx512, rowsQ4Avx512},
                          {unpackScalar, unpackAvx512<WeightFormat::F16>,
                           unpackAvx512<WeightFormat::BF16>, unpackAvx512<WeightFormat::Int8>,
                           unpackQ4},
                          axpyAvx512};
constexpr Kernels kAvx512Bf16{
    {rowsAvx512<WeightFormat::F32>, rowsAvx512<WeightFormat::F16>, rowsAvx512Bf16, rowsInt8Avx512,
     rowsQ4Avx512},
    {kAvx512.unpack[0], kAvx512.unpack[1], kAvx512.unpack[2], kAvx512.unpack[3], kAvx512.unpack[4]},
    axpyAvx512};

// F16C from CPUID (clang's __builtin_cpu_supports does not know "f16c").
bool hasF16c() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

Isa detectIsa() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return Isa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && hasF16c())
        return Isa::Avx2;
    return Isa::Scalar;
}

const Isa g_best = detectIsa();
std::atomic<Isa> g_isa{g_best};
const bool g_bf16Products = g_best == Isa::Avx512 && __builtin_cpu_supports("avx512bf16");

} // namespace

const Kernels& kernels() {
    switch (g_isa.load(std::memory_order_relaxed)) {
    case Isa::Avx512:
        return g_bf16Products ? kAvx512Bf16 : kAvx512;
    case Isa::Avx2:
        return kAvx2;
    default:
        return kScalar;
    }
}

const char* isaName(Isa isa) {
    return isa == Isa::Avx512 ? "avx512" : isa == Isa::Avx2 ? "avx2" : "scalar";
}
Isa bestIsa() {
    return g_best;
}
Isa isa() {
    return g_isa.load();
}
bool nativeBf16Products() {
    return g_bf16Products && g_isa.load() == Isa::Avx512;
}
void setIsa(Isa isa) {
    g_isa = static_cast<int>(isa) <= static_cast<int>(g_best) ? isa : g_best;
}

} // namespace baton::engine::cpu
