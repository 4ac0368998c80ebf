// 4-bit weights: the activations' quantization, unpacking and the matrix-vector
// products (q4_blocks.h; the packing is in q4_packing.cpp).
#include "kernels/q4_blocks.h"
#include "kernels/weight_loads.h"

#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstring>

namespace baton::engine::cpu {

namespace {

// Block `blk` of row r: the first byte of its part 0, and the distance between parts.
const uint8_t* blockStart(const MatrixView& m, int64_t r, int64_t blk, int64_t& partBytes) {
    return static_cast<const uint8_t*>(m.data) + size_t(r) * q4RowBytes(m.cols) +
           q4BlockOffset(m.blocksPerRow(), blk, partBytes);
}

// The exact integer sum of (u - 8) x_q over block `blk` of row r (its bias included).
int32_t blockSum(const MatrixView& m, const Q4Activations& a, int64_t r, int64_t blk) {
    const int64_t g = blk / kQ4Group, j = blk % kQ4Group;
    int64_t stride = 0;
    const uint8_t* first = blockStart(m, r, blk, stride);
    int32_t s = a.bias[size_t(blk)];
    for (int64_t p = 0; p < 4; ++p)
        for (int64_t k = 0; k < 4; ++k) {
            const uint8_t byte = first[p * stride + k];
            const int8_t* x = a.q.data() + (8 * g + 2 * p) * 64 + 4 * j + k;
            s += int32_t(byte & 15) * x[0] + int32_t(byte >> 4) * x[64];
        }
    return s;
}

inline float blockScale(const MatrixView& m, const Q4Activations& a, int64_t r, int64_t blk) {
    return f16ToFloat(m.q4Scales[r * m.blocksPerRow() + blk]) * a.scale[size_t(blk)];
}

// One block of x in 8 bits (quantizeActivationBlock).
int32_t activationBlockScalar(const float* x, int64_t n, int8_t q[kInt8Block], float& scale) {
    float amax = 0.f;
    bool finite = true;
    for (int64_t i = 0; i < n; ++i) {
        finite = finite && std::fabs(x[i]) <= FLT_MAX;
        amax = std::max(amax, std::fabs(x[i]));
    }
    std::fill(q, q + kInt8Block, int8_t(0));
    int32_t sum = 0;
    if (finite && amax > 0.f) {
        const float inv = 127.f / amax;
        for (int64_t i = 0; i < n; ++i) {
            q[i] = int8_t(std::clamp(roundEven(x[i] * inv), -127.f, 127.f));
            sum += q[i];
        }
    }
    scale = finite ? amax / 127.f : std::numeric_limits<float>::quiet_NaN();
    return sum;
}

// The same values with AVX-512 (blocks with a non-finite value go the scalar way).
BATON_AVX512 int32_t activationBlockAvx512(const float* x, int64_t n, int8_t q[kInt8Block],
                                           float& scale) {
    const __mmask16 lo = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
    const __mmask16 hi = __mmask16(n >= 32 ? 0xffff : n > 16 ? (1u << (n - 16)) - 1 : 0);
    const __m512 va = _mm512_maskz_loadu_ps(lo, x), vb = _mm512_maskz_loadu_ps(hi, x + 16);
    const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
    const __m512 absA = _mm512_abs_ps(va), absB = _mm512_abs_ps(vb);
    // Not (|x| < inf): infinite or NaN.
    if (_mm512_cmp_ps_mask(absA, inf, _CMP_NLT_UQ) | _mm512_cmp_ps_mask(absB, inf, _CMP_NLT_UQ))
        return activationBlockScalar(x, n, q, scale);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(absA, absB));
    scale = amax / 127.f;
    if (amax == 0.f) {
        std::fill(q, q + kInt8Block, int8_t(0));
        return 0;
    }
    const __m512 inv = _mm512_set1_ps(127.f / amax);
    const __m512i qa = _mm512_cvtps_epi32(_mm512_mul_ps(va, inv));
    const __m512i qb = _mm512_cvtps_epi32(_mm512_mul_ps(vb, inv));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(qa));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(qb));
    return _mm512_reduce_add_epi32(_mm512_add_epi32(qa, qb));
}

// x quantized for this thread. Each thread of a product's team quantizes the whole of
// x itself rather than wait for one of them (microseconds for GPT-2's widest x).
Q4Activations& quantized(const float* x, int64_t cols) {
    thread_local Q4Activations a;
    quantizeQ4Activations(x, cols, a);
    return a;
}

} // namespace

int32_t quantizeActivationBlock(const float* x, int64_t n, int8_t q[kInt8Block], float& scale) {
    return isa() == Isa::Avx512 ? activationBlockAvx512(x, n, q, scale)
                                : activationBlockScalar(x, n, q, scale);
}

void quantizeQ4Activations(const float* x, int64_t cols, Q4Activations& a) {
    const int64_t nb = (cols + kInt8Block - 1) / kInt8Block;
    a.groups = (nb + kQ4Group - 1) / kQ4Group;
    a.q.assign(size_t(a.groups * 8 * 64), 0);
    a.scale.assign(size_t(a.groups * kQ4Group), 0.f);
    a.bias.assign(size_t(a.groups * kQ4Group), 0);
    int8_t q[kInt8Block];
    for (int64_t blk = 0; blk < nb; ++blk) {
        const int64_t c0 = blk * kInt8Block, g = blk / kQ4Group, j = blk % kQ4Group;
        const int32_t sum = quantizeActivationBlock(x + c0, std::min(kInt8Block, cols - c0), q,
                                                    a.scale[size_t(blk)]);
        for (int64_t v = 0; v < 8; ++v)
            std::memcpy(a.q.data() + (8 * g + v) * 64 + 4 * j, q + 4 * v, 4);
        a.bias[size_t(blk)] = -8 * sum;
    }
}

float q4WeightAt(const MatrixView& m, int64_t r, int64_t c) {
    const int64_t blk = c / kInt8Block, i = c % kInt8Block;
    int64_t stride = 0;
    const uint8_t byte = blockStart(m, r, blk, stride)[(i / 8) * stride + i % 4];
    const int u = i % 8 >= 4 ? byte >> 4 : byte & 15;
    return f16ToFloat(m.q4Scales[r * m.blocksPerRow() + blk]) * float(u - 8);
}

namespace {

void blockWeightsScalar(const MatrixView& m, int64_t r, int64_t blk, float* out) {
    int64_t stride = 0;
    const uint8_t* first = blockStart(m, r, blk, stride);
    const float d = f16ToFloat(m.q4Scales[r * m.blocksPerRow() + blk]);
    for (int64_t p = 0; p < 4; ++p)
        for (int64_t k = 0; k < 4; ++k) {
            const uint8_t byte = first[p * stride + k];
            out[8 * p + k] = d * float((byte & 15) - 8);
            out[8 * p + 4 + k] = d * float((byte >> 4) - 8);
        }
}

// The same values: the four parts' bytes, their nibbles in order, minus 8, times d.
BATON_AVX512 void blockWeightsAvx512(const MatrixView& m, int64_t r, int64_t blk, float* out) {
    int64_t stride = 0;
    const uint8_t* first = blockStart(m, r, blk, stride);
    int32_t parts[4];
    for (int64_t p = 0; p < 4; ++p)
        std::memcpy(&parts[p], first + p * stride, 4);
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(parts));
    const __m128i low = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    const __m128i ul = _mm_and_si128(v, low), uh = _mm_and_si128(_mm_srli_epi16(v, 4), low);
    const __m128i w0 = _mm_sub_epi8(_mm_unpacklo_epi32(ul, uh), eight); // weights 0-15
    const __m128i w1 = _mm_sub_epi8(_mm_unpackhi_epi32(ul, uh), eight); // 16-31
    const __m512 d = _mm512_set1_ps(f16ToFloat(m.q4Scales[r * m.blocksPerRow() + blk]));
    _mm512_storeu_ps(out, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(w0))));
    _mm512_storeu_ps(out + 16, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(w1))));
}

} // namespace

void q4BlockWeights(const MatrixView& m, int64_t r, int64_t blk, float out[32]) {
    if (isa() == Isa::Avx512)
        blockWeightsAvx512(m, r, blk, out);
    else
        blockWeightsScalar(m, r, blk, out);
}

void unpackQ4(const MatrixView& m, int64_t r0, int64_t r1, float* out) {
    float v[kInt8Block];
    for (int64_t r = r0; r < r1; ++r, out += m.cols)
        for (int64_t blk = 0; blk < m.blocksPerRow(); ++blk) {
            q4BlockWeights(m, r, blk, v);
            const int64_t c0 = blk * kInt8Block;
            std::copy(v, v + std::min(kInt8Block, m.cols - c0), out + c0);
        }
}

void rowsQ4Scalar(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                  int64_t r1) {
    const Q4Activations& a = quantized(x, m.cols);
    for (int64_t r = r0; r < r1; ++r) {
        float s = 0.f;
        for (int64_t blk = 0; blk < m.blocksPerRow(); ++blk)
            s += float(blockSum(m, a, r, blk)) * blockScale(m, a, r, blk);
        y[r] = s + (b ? b[r] : 0.f);
    }
}

// AVX2: a group's lanes in two halves of 8 blocks, u8 x s8 products in pairs
// (vpmaddubsw: at most 2 * 15 * 127, no saturation) summed into 32-bit lanes
// (vpmaddwd); a half the row's last group does not fill goes block by block.
BATON_AVX2 void rowsQ4Avx2(const MatrixView& m, const float* x, const float* b, float* y,
                           int64_t r0, int64_t r1) {
    const Q4Activations& a = quantized(x, m.cols);
    const int64_t nb = m.blocksPerRow();
    const __m256i low = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
    for (int64_t r = r0; r < r1; ++r) {
        __m256 acc = _mm256_setzero_ps();
        float rest = 0.f;
        for (int64_t g = 0; g * kQ4Group < nb; ++g) {
            const int64_t n = std::min(kQ4Group, nb - g * kQ4Group), first = g * kQ4Group;
            const auto* group = static_cast<const uint8_t*>(m.data) + (r * nb + first) * 16;
            for (int64_t h = 0; h < 2; ++h) {
                if (8 * h + 8 > n) {
                    for (int64_t blk = first + 8 * h; blk < first + n; ++blk)
                        rest += float(blockSum(m, a, r, blk)) * blockScale(m, a, r, blk);
                    continue;
                }
                __m256i sum = _mm256_loadu_si256(
                    reinterpret_cast<const __m256i*>(a.bias.data() + first + 8 * h));
                for (int64_t p = 0; p < 4; ++p) {
                    const __m256i v = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(group + p * 4 * n + 32 * h));
                    const int8_t* xs = a.q.data() + (8 * g + 2 * p) * 64 + 32 * h;
                    const __m256i xl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs));
                    const __m256i xh =
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + 64));
                    const __m256i ul = _mm256_and_si256(v, low);
                    const __m256i uh = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
                    sum = _mm256_add_epi32(sum,
                                           _mm256_madd_epi16(_mm256_maddubs_epi16(ul, xl), ones));
                    sum = _mm256_add_epi32(sum,
                                           _mm256_madd_epi16(_mm256_maddubs_epi16(uh, xh), ones));
                }
                const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(
                    reinterpret_cast<const __m128i*>(m.q4Scales + r * nb + first + 8 * h)));
                const __m256 s = _mm256_mul_ps(d, _mm256_loadu_ps(a.scale.data() + first + 8 * h));
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), s, acc);
            }
        }
        y[r] = simd::hsum256(acc) + rest + (b ? b[r] : 0.f);
    }
}

namespace {

// R rows from r: per group, per row, four 64-byte loads; the low nibbles multiply
// directly, the high ones masked in place (16 u) and their sum divided by 16 exactly.
template <int R>
BATON_VNNI void rowsVnni(const MatrixView& m, const Q4Activations& a, const float* b, float* y,
                         int64_t r) {
    const int64_t nb = m.blocksPerRow();
    const auto* data = static_cast<const uint8_t*>(m.data);
    const __m512i low = _mm512_set1_epi8(0x0f), high = _mm512_set1_epi8(char(0xf0));
    __m512 acc[R];
    for (int t = 0; t < R; ++t)
        acc[t] = _mm512_setzero_ps();
    for (int64_t g = 0; g * kQ4Group < nb; ++g) {
        const int64_t n = std::min(kQ4Group, nb - g * kQ4Group), first = g * kQ4Group;
        const __mmask16 lanes = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
        const int8_t* xs = a.q.data() + g * 8 * 64;
        const __m512i bias = _mm512_loadu_si512(a.bias.data() + first);
        const __m512 sx = _mm512_loadu_ps(a.scale.data() + first);
        for (int t = 0; t < R; ++t) {
            const uint8_t* group = data + ((r + t) * nb + first) * 16;
            simd::prefetchAhead(group, 0);
            simd::prefetchAhead(group, 64);
            simd::prefetchAhead(group, 128);
            simd::prefetchAhead(group, 192);
            __m512i sl = bias, sh = _mm512_setzero_si512();
            for (int64_t p = 0; p < 4; ++p) {
                const __m512i v = _mm512_maskz_loadu_epi32(lanes, group + p * 4 * n);
                sl = _mm512_dpbusd_epi32(sl, _mm512_and_si512(v, low),
                                         _mm512_loadu_si512(xs + 2 * p * 64));
                sh = _mm512_dpbusd_epi32(sh, _mm512_and_si512(v, high),
                                         _mm512_loadu_si512(xs + (2 * p + 1) * 64));
            }
            const __m512i sum = _mm512_add_epi32(sl, _mm512_srai_epi32(sh, 4));
            const __m512 d =
                _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lanes, m.q4Scales + (r + t) * nb + first));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, sx), acc[t]);
        }
    }
    for (int t = 0; t < R; ++t)
        y[r + t] = _mm512_reduce_add_ps(acc[t]) + (b ? b[r + t] : 0.f);
}

BATON_VNNI void rowsQ4Vnni(const MatrixView& m, const float* x, const float* b, float* y,
                           int64_t r0, int64_t r1) {
    const Q4Activations& a = quantized(x, m.cols);
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4)
        rowsVnni<4>(m, a, b, y, r);
    for (; r < r1; ++r)
        rowsVnni<1>(m, a, b, y, r);
}

} // namespace

void rowsQ4Avx512(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                  int64_t r1) {
    if (simd::hasVnni())
        rowsQ4Vnni(m, x, b, y, r0, r1);
    else
        rowsQ4Avx2(m, x, b, y, r0, r1);
}

} // namespace baton::engine::cpu
