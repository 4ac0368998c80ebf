// 4-bit weights: the rounding of float32 weights to blocks and their packing into the
// layout (q4_blocks.h), one block at a time or, with AVX-512, a group of 16 blocks at
// once.
#include "kernels/q4_blocks.h"
#include "kernels/weight_loads.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace baton::engine::cpu {

namespace {
constexpr float kF16Max = 65504.f;

// The levels u of n weights v (finite) for the scale d (not 0), and the sums that
// compare scales: the squared error sum (v - d q)^2 is sum v^2 + d^2 qq - 2 d vq
// (q = u - 8), and sum v^2 is the same for every d. vq is exact in double whatever
// the order of the sum (a nonzero q needs |v| >= |d| / 2, so its terms span few
// binades), and so are d^2 qq and 2 d vq: the comparison rounds once, on every path.
struct Levels {
    double vq = 0.0;
    int32_t qq = 0;
    double cost(float d) const { return double(d) * double(d) * qq - 2.0 * double(d) * vq; }
};
// The levels of a block's 32 weights v (zeros past the block's width give u = 8).
Levels levelsScalar(const float* v, float d, uint8_t* u) {
    const float inv = 1.f / d;
    Levels out;
    for (int64_t i = 0; i < kInt8Block; ++i) {
        const float q = std::clamp(roundEven(v[i] * inv), -8.f, 7.f);
        u[i] = uint8_t(int(q) + 8);
        out.vq += double(v[i]) * double(q);
        out.qq += int32_t(q) * int32_t(q);
    }
    return out;
}

// The same with AVX-512 (q q summed in float32: integers below 2^24, exact).
BATON_AVX512 Levels levelsAvx512(const float* v, float d, uint8_t* u) {
    const __m512 inv = _mm512_set1_ps(1.f / d), lo = _mm512_set1_ps(-8.f), hi = _mm512_set1_ps(7.f);
    __m512d vq = _mm512_setzero_pd();
    __m512 qq = _mm512_setzero_ps();
    __m128i bytes[2];
    for (int64_t h = 0; h < 2; ++h) {
        const __m512 x = _mm512_loadu_ps(v + 16 * h);
        const __m512 q = _mm512_min_ps(
            _mm512_max_ps(_mm512_roundscale_ps(_mm512_mul_ps(x, inv),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                          lo),
            hi);
        bytes[h] =
            _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(q), _mm512_set1_epi32(8)));
        qq = _mm512_fmadd_ps(q, q, qq);
        vq = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(x)),
                             _mm512_cvtps_pd(_mm512_castps512_ps256(q)), vq);
        vq = _mm512_fmadd_pd(
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))),
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(q), 1))), vq);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u),
                        _mm256_inserti128_si256(_mm256_castsi128_si256(bytes[0]), bytes[1], 1));
    Levels out;
    out.vq = _mm512_reduce_add_pd(vq);
    out.qq = int32_t(_mm512_reduce_add_ps(qq));
    return out;
}

float toF16(float v, uint16_t& bits) {
    bits = floatToF16(std::clamp(v, -kF16Max, kF16Max));
    return f16ToFloat(bits);
}

// The same values with F16C (its conversion rounds to nearest even too; every AVX-512
// CPU has it).
__attribute__((target("avx512f,f16c"))) float toF16Avx512(float v, uint16_t& bits) {
    const __m128i h = _mm_cvtps_ph(_mm_set_ss(std::clamp(v, -kF16Max, kF16Max)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    bits = uint16_t(_mm_extract_epi16(h, 0));
    return _mm_cvtss_f32(_mm_cvtph_ps(h));
}

// The block's n weights as v (non-finite ones 0, zeros past n), and the first of
// largest magnitude.
float finiteBlockScalar(const float* w, int64_t n, float* v) {
    float amax = 0.f, extreme = 0.f;
    std::fill(v + n, v + kInt8Block, 0.f);
    for (int64_t i = 0; i < n; ++i) {
        v[i] = finiteOrZero(w[i]);
        if (std::fabs(v[i]) > amax) {
            amax = std::fabs(v[i]);
            extreme = v[i];
        }
    }
    return extreme;
}

BATON_AVX512 float finiteBlockAvx512(const float* w, int64_t n, float* v) {
    __m512 amax = _mm512_setzero_ps(), a[2];
    for (int64_t h = 0; h < 2; ++h) {
        const int64_t k = std::clamp<int64_t>(n - 16 * h, 0, 16);
        const __m512 x = _mm512_maskz_loadu_ps(__mmask16((1u << k) - 1), w + 16 * h);
        const __m512 x2 = simd::finiteOrZero16(x); // NaN, inf: 0
        _mm512_storeu_ps(v + 16 * h, x2);
        a[h] = _mm512_abs_ps(x2);
        amax = _mm512_max_ps(amax, a[h]);
    }
    const __m512 top = _mm512_set1_ps(_mm512_reduce_max_ps(amax));
    const uint32_t at = uint32_t(_mm512_cmp_ps_mask(a[0], top, _CMP_EQ_OQ)) |
                        uint32_t(_mm512_cmp_ps_mask(a[1], top, _CMP_EQ_OQ)) << 16;
    return v[__builtin_ctz(at)]; // the first (a zero block: v[0] = 0)
}

// One block of n <= 32 weights: its levels (u = 8 past n) and its scale's bits.
void quantizeBlock(const float* w, int64_t n, uint8_t u[32], uint16_t& scale) {
    const bool vector = isa() == Isa::Avx512;
    const auto levels = vector ? levelsAvx512 : levelsScalar;
    const auto half = vector ? toF16Avx512 : toF16;
    float v[kInt8Block]; // zeros past n
    const float extreme = vector ? finiteBlockAvx512(w, n, v) : finiteBlockScalar(w, n, v);
    uint16_t bits0 = 0;
    const float d0 = half(extreme / -8.f, bits0);
    if (d0 == 0.f) { // all zero, or below float16's resolution
        std::fill(u, u + kInt8Block, uint8_t(8));
        scale = 0;
        return;
    }
    scale = bits0;
    const Levels first = levels(v, d0, u);
    uint16_t bits1 = 0;
    const float d1 = first.qq > 0 ? half(float(first.vq / double(first.qq)), bits1) : 0.f;
    if (d1 == 0.f || d1 == d0)
        return;
    uint8_t u1[kInt8Block];
    if (levels(v, d1, u1).cost(d1) < first.cost(d0)) {
        std::copy(u1, u1 + kInt8Block, u);
        scale = bits1;
    }
}

// Lanes 8-15 of x.
BATON_AVX512 inline __m256 upperHalf(__m512 x) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
}

// A group of 16 whole blocks at once (`w`: their 512 weights), one block a lane, with
// the same values as quantizeBlock gives each: the group's four parts of 64 bytes at
// `parts` and its 16 scales. Every step is quantizeBlock's, lane by lane; the sums vq
// (in double) and qq are exact in any order, so the costs compare alike.
class GroupLevels {
public:
    // The 32 weights of every block, transposed (v_[i], lane j: weight i of block j).
    BATON_AVX512 explicit GroupLevels(const float* w) {
        for (int h = 0; h < 2; ++h) {
            __m512i t[16];
            for (int j = 0; j < 16; ++j)
                t[j] = _mm512_castps_si512(_mm512_loadu_ps(w + 32 * j + 16 * h));
            simd::transpose16(t);
            for (int i = 0; i < 16; ++i)
                v_[16 * h + i] = simd::finiteOrZero16(_mm512_castsi512_ps(t[i]));
        }
    }

    // Each block's first weight of largest magnitude.
    BATON_AVX512 __m512 extreme() const {
        __m512 amax = _mm512_setzero_ps(), out = _mm512_setzero_ps();
        for (int i = 0; i < kInt8Block; ++i) {
            const __m512 a = _mm512_abs_ps(v_[i]);
            const __mmask16 larger = _mm512_cmp_ps_mask(a, amax, _CMP_GT_OQ);
            amax = _mm512_mask_mov_ps(amax, larger, a);
            out = _mm512_mask_mov_ps(out, larger, v_[i]);
        }
        return out;
    }

    struct Pass {
        __m512i parts[4]; // the packed nibbles: part p, lane j = block j's 4 bytes
        __m512d vq[2];    // lanes 0-7, 8-15
        __m512 qq;
    };
    // The levels for the scales d (one a block), packed as the layout holds them.
    BATON_AVX512 Pass levels(__m512 d) const {
        const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.f), d);
        Pass out;
        out.vq[0] = out.vq[1] = _mm512_setzero_pd();
        out.qq = _mm512_setzero_ps();
        for (int p = 0; p < 4; ++p) {
            __m512i word = _mm512_setzero_si512();
            for (int k = 0; k < 4; ++k) {
                const __m512i low = level(8 * p + k, inv, out),
                              high = level(8 * p + 4 + k, inv, out);
                word = _mm512_or_si512(
                    word,
                    _mm512_slli_epi32(_mm512_or_si512(low, _mm512_slli_epi32(high, 4)), 8 * k));
            }
            out.parts[p] = word;
        }
        return out;
    }

private:
    // u = q + 8 of weight i, adding its terms to vq and qq.
    BATON_AVX512 __m512i level(int i, __m512 inv, Pass& out) const {
        const __m512 q = _mm512_min_ps(
            _mm512_max_ps(_mm512_roundscale_ps(_mm512_mul_ps(v_[i], inv),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                          _mm512_set1_ps(-8.f)),
            _mm512_set1_ps(7.f));
        out.qq = _mm512_fmadd_ps(q, q, out.qq);
        out.vq[0] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v_[i])),
                                    _mm512_cvtps_pd(_mm512_castps512_ps256(q)), out.vq[0]);
        out.vq[1] = _mm512_fmadd_pd(_mm512_cvtps_pd(upperHalf(v_[i])),
                                    _mm512_cvtps_pd(upperHalf(q)), out.vq[1]);
        return _mm512_add_epi32(_mm512_cvtps_epi32(q), _mm512_set1_epi32(8));
    }

    __m512 v_[kInt8Block];
};

// d rounded to float16 (clamped to its range), as toF16: the bits, and the value.
BATON_AVX512 __m512 toF16x16(__m512 d, __m256i& bits) {
    const __m512 limit = _mm512_set1_ps(kF16Max);
    bits = _mm512_cvtps_ph(
        _mm512_min_ps(_mm512_max_ps(d, _mm512_sub_ps(_mm512_setzero_ps(), limit)), limit),
        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_cvtph_ps(bits);
}

// Lanes 0-7 (h = 0) or 8-15 (h = 1) of x in double.
BATON_AVX512 inline __m512d halfPd(__m512 x, int h) {
    return _mm512_cvtps_pd(h == 0 ? _mm512_castps512_ps256(x) : upperHalf(x));
}

// d^2 qq - 2 d vq (Levels::cost) of lanes 0-7 or 8-15.
BATON_AVX512 inline __m512d cost(__m512 d, const GroupLevels::Pass& pass, int h) {
    const __m512d dd = halfPd(d, h);
    return _mm512_sub_pd(_mm512_mul_pd(_mm512_mul_pd(dd, dd), halfPd(pass.qq, h)),
                         _mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(2.0), dd), pass.vq[h]));
}

// The lanes where a's cost is below b's.
BATON_AVX512 __mmask16 cheaper(__m512 da, const GroupLevels::Pass& a, __m512 db,
                               const GroupLevels::Pass& b) {
    const __mmask8 lo = _mm512_cmp_pd_mask(cost(da, a, 0), cost(db, b, 0), _CMP_LT_OQ);
    const __mmask8 hi = _mm512_cmp_pd_mask(cost(da, a, 1), cost(db, b, 1), _CMP_LT_OQ);
    return __mmask16(lo | unsigned(hi) << 8);
}

BATON_AVX512 void quantizeGroupAvx512(const float* w, uint8_t* parts, uint16_t* scales) {
    const GroupLevels group(w);
    __m256i bits0, bits1;
    const __m512 d0 = toF16x16(_mm512_div_ps(group.extreme(), _mm512_set1_ps(-8.f)), bits0);
    const __mmask16 nonzero = _mm512_cmp_ps_mask(d0, _mm512_setzero_ps(), _CMP_NEQ_UQ);
    const GroupLevels::Pass first = group.levels(d0);
    // d1 = vq / qq (in double, then float), where qq > 0.
    const __m256 lo = _mm512_cvtpd_ps(_mm512_div_pd(first.vq[0], halfPd(first.qq, 0)));
    const __m256 hi = _mm512_cvtpd_ps(_mm512_div_pd(first.vq[1], halfPd(first.qq, 1)));
    const __m512 ratio = _mm512_castsi512_ps(_mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_castps_si256(lo)), _mm256_castps_si256(hi), 1));
    const __mmask16 counted = _mm512_cmp_ps_mask(first.qq, _mm512_setzero_ps(), _CMP_GT_OQ);
    const __m512 d1 = _mm512_maskz_mov_ps(counted, toF16x16(ratio, bits1));
    const __mmask16 tried = nonzero & _mm512_cmp_ps_mask(d1, _mm512_setzero_ps(), _CMP_NEQ_UQ) &
                            _mm512_cmp_ps_mask(d1, d0, _CMP_NEQ_UQ);
    const GroupLevels::Pass second = group.levels(d1);
    const __mmask16 refit = tried & cheaper(d1, second, d0, first);
    const __m512i empty = _mm512_set1_epi8(char(0x88)); // u = 8: zero
    for (int p = 0; p < 4; ++p)
        _mm512_storeu_si512(
            parts + 64 * p,
            _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(empty, nonzero, first.parts[p]), refit,
                                  second.parts[p]));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(scales),
        _mm256_maskz_mov_epi16(nonzero, _mm256_mask_mov_epi16(bits0, refit, bits1)));
}

} // namespace

void packQ4Tile(const float* w, int64_t cols, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                uint8_t* nibbles, uint16_t* scales) {
    const int64_t nb = (cols + kInt8Block - 1) / kInt8Block;
    const bool groups = isa() == Isa::Avx512; // whole groups of 16 blocks at once
    uint8_t u[kInt8Block];
    for (int64_t r = r0; r < r1; ++r) {
        const float* row = w + (r - r0) * (c1 - c0); // column c at row[c - c0]
        for (int64_t blk = c0 / kInt8Block; blk * kInt8Block < c1; ++blk) {
            const int64_t c = blk * kInt8Block;
            if (groups && blk % kQ4Group == 0 && c + kQ4Group * kInt8Block <= c1) {
                quantizeGroupAvx512(row + (c - c0), nibbles + r * nb * 16 + blk * 16,
                                    scales + r * nb + blk);
                blk += kQ4Group - 1;
                continue;
            }
            quantizeBlock(row + (c - c0), std::min(kInt8Block, c1 - c), u, scales[r * nb + blk]);
            int64_t stride = 0;
            uint8_t* first = nibbles + r * nb * 16 + q4BlockOffset(nb, blk, stride);
            // Part p: the levels 8 p .. 8 p + 3 and, 4 bits up, 8 p + 4 .. 8 p + 7 (each
            // below 16, so a 32-bit shift keeps them in their bytes).
            uint32_t words[8];
            std::memcpy(words, u, sizeof words);
            for (int64_t p = 0; p < 4; ++p) {
                const uint32_t part = words[2 * p] | words[2 * p + 1] << 4;
                std::memcpy(first + p * stride, &part, 4);
            }
        }
    }
}

} // namespace baton::engine::cpu
