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

template <WeightFormat F>
constexpr size_t elementBytes() {
    return weightBytes(F);
}

} // namespace baton::engine::cpu::simd
