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
