// The loads every weight kernel shares (weight_kernels.cpp, column_kernels.cpp): a few
// weights of one format from a row as float32 vectors, for AVX2 (8 at a time) and
// AVX-512 (16), and the target attributes that compile them without global -m flags.
// Internal to the kernels; no torch here.
#pragma once

// GCC 12 reports false positives inside the intrinsics (_mm512_reduce_add_ps, the
// conversions' undefined upper halves) in every file that uses them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "kernels/weight_matrix.h"

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace baton::engine::cpu::simd {

#define BATON_AVX2 __attribute__((target("avx2,fma,f16c")))
#define BATON_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#define BATON_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

// Whether the CPU has AVX512-VNNI (vpdpbusd: 8-bit products summed in 32-bit lanes).
inline bool hasVnni() {
    static const bool vnni = __builtin_cpu_supports("avx512vnni");
    return vnni;
}

BATON_AVX2 inline float hsum256(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_hadd_ps(lo, lo);
    lo = _mm_hadd_ps(lo, lo);
    return _mm_cvtss_f32(lo);
}

// 8 weights of a row from element i, as float32.
template <WeightFormat F>
BATON_AVX2 inline __m256 load8(const void* row, int64_t i) {
    if constexpr (F == WeightFormat::F32) {
        return _mm256_loadu_ps(static_cast<const float*>(row) + i);
    } else if constexpr (F == WeightFormat::F16) {
        return _mm256_cvtph_ps(_mm_loadu_si128(
            reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
    } else if constexpr (F == WeightFormat::BF16) {
        const __m128i h = _mm_loadu_si128(
            reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
        const __m128i q =
            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(row) + i));
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q));
    }
}

template <WeightFormat F>
BATON_AVX512 inline __m512 load16(const void* row, int64_t i) {
    if constexpr (F == WeightFormat::F32) {
        return _mm512_loadu_ps(static_cast<const float*>(row) + i);
    } else if constexpr (F == WeightFormat::F16) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(row) + i)));
    } else if constexpr (F == WeightFormat::BF16) {
        const __m256i h = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(row) + i));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
        const __m128i q =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(row) + i));
        return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q));
    }
}

// x with its NaNs and infinities as 0 (finiteOrZero in weight_kernels.h).
BATON_AVX512 inline __m512 finiteOrZero16(__m512 x) {
    const __m512 largest = _mm512_set1_ps(3.40282347e38f); // FLT_MAX
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_abs_ps(x), largest, _CMP_LE_OQ), x);
}

// 16 consecutive weights from p (F32, F16 or BF16; those in `rows`, zeros elsewhere) as
// float32.
template <WeightFormat F>
BATON_AVX512 inline __m512 load16(const void* p, __mmask16 rows) {
    if constexpr (F == WeightFormat::F32) {
        return _mm512_maskz_loadu_ps(rows, p);
    } else {
        const __m256i h = _mm256_maskz_loadu_epi16(rows, p);
        if constexpr (F == WeightFormat::F16)
            return _mm512_cvtph_ps(h);
        else
            return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
}

// Column c's values at the rows r .. r + 15 of a column-major matrix (F32, F16 or
// BF16; those in `rows`, zeros elsewhere) as float32.
template <WeightFormat F>
BATON_AVX512 inline __m512 columnLoad16(const MatrixView& m, int64_t c, int64_t r, __mmask16 rows) {
    return load16<F>(static_cast<const char*>(m.data) + size_t(c * m.rows + r) * weightBytes(F),
                     rows);
}

// The transpose of 16 rows of 16 32-bit values, in place.
BATON_AVX512 inline void transpose16(__m512i r[16]) {
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

// Software prefetch: a decode product streams each weight once from memory, four rows
// at a time. The hardware prefetchers keep up with float32 rows, but for the 16- and
// 8-bit formats (more instructions per byte) they do not: measured on AMD Zen 5 with
// one thread, F16 and int8 products read 23 GB/s against float32's 36, and 34 GB/s
// with this prefetch. Each row stream asks for the line kPrefetchAhead bytes ahead of
// the one it reads (the rows are contiguous, so the lines past a row's end are the
// next rows'); 8 KiB ahead was the best of 2-16 KiB, into L1 better than into L2.
// (The address may lie past the matrix: a prefetch never faults. GCC 12 drops the
// prefetches from the 16-bit loops when the address is computed as an integer.)
constexpr int64_t kPrefetchAhead = 8192;

inline void prefetchAhead(const void* row, int64_t byteOffset) {
    __builtin_prefetch(static_cast<const char*>(row) + byteOffset + kPrefetchAhead, 0, 3);
}

template <WeightFormat F>
constexpr size_t elementBytes() {
    return weightBytes(F);
}

} // namespace baton::engine::cpu::simd
