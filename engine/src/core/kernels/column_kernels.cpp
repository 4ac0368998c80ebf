// Matrix-vector products over column-major weights (MatrixView::transposed: the
// columns stored one after another, Hugging Face's Conv1D layout), so that the mapped
// bytes of a checkpoint serve as the model's weights with no copy.
//
// A kernel adds to acc[r], for the rows [r0, r1), the products of the columns [c0, c1)
// one after another: acc[r] = fma(x[c], W(r, c), acc[r]) for c = c0, c0 + 1, ...
// The scalar code, the AVX2 lanes and the AVX-512 lanes perform exactly these roundings,
// so the result does not depend on the path's width. A step reads four stored columns
// at once (over all rows those are one contiguous stretch of memory) and keeps acc's
// rows in L1; weight_matrix.cpp splits a product into fixed chunks of columns.
#include "kernels/weight_kernels.h"
#include "kernels/weight_loads.h"

#include <algorithm>
#include <cmath>

namespace baton::engine::cpu {

namespace {

using namespace simd;

template <WeightFormat F>
const void* columnPtr(const MatrixView& m, int64_t c) {
    return static_cast<const uint8_t*>(m.data) + size_t(c * m.rows) * elementBytes<F>();
}

// Software prefetch of the next step's four columns at the rows being read now: a step
// reads four stored columns' [r0, r1) segments, and the next step's segments start far
// from where this step's end, where no hardware prefetcher looks. Without it the 16-bit
// formats (more instructions per byte) read their weights a third slower than float32.
template <WeightFormat F>
inline void prefetchNext(const void* n0, const void* n1, const void* n2, const void* n3,
                         int64_t r) {
    const size_t at = size_t(r) * elementBytes<F>();
    __builtin_prefetch(static_cast<const char*>(n0) + at, 0, 3);
    __builtin_prefetch(static_cast<const char*>(n1) + at, 0, 3);
    __builtin_prefetch(static_cast<const char*>(n2) + at, 0, 3);
    __builtin_prefetch(static_cast<const char*>(n3) + at, 0, 3);
}

// Rows [r, r1) of columns [c, c + n): the scalar order every vector lane follows.
void columnsTail(const MatrixView& m, const float* x, float* y, int64_t c, int64_t n, int64_t r,
                 int64_t r1) {
    for (; r < r1; ++r)
        for (int64_t j = c; j < c + n; ++j)
            y[r] = std::fma(x[j], weightAt(m, r, j), y[r]);
}

void columnsScalar(const MatrixView& m, const float* x, int64_t c0, int64_t c1, float* y,
                   int64_t r0, int64_t r1) {
    for (int64_t c = c0; c < c1; ++c)
        columnsTail(m, x, y, c, 1, r0, r1);
}

template <WeightFormat F>
BATON_AVX2 void columnsAvx2(const MatrixView& m, const float* x, int64_t c0, int64_t c1, float* y,
                            int64_t r0, int64_t r1) {
    int64_t c = c0;
    for (; c + 4 <= c1; c += 4) {
        const void *w0 = columnPtr<F>(m, c), *w1 = columnPtr<F>(m, c + 1),
                   *w2 = columnPtr<F>(m, c + 2), *w3 = columnPtr<F>(m, c + 3);
        const __m256 x0 = _mm256_set1_ps(x[c]), x1 = _mm256_set1_ps(x[c + 1]),
                     x2 = _mm256_set1_ps(x[c + 2]), x3 = _mm256_set1_ps(x[c + 3]);
        // (the next step's columns: past the last one the addresses are never read)
        const void *n0 = columnPtr<F>(m, c + 4), *n1 = columnPtr<F>(m, c + 5),
                   *n2 = columnPtr<F>(m, c + 6), *n3 = columnPtr<F>(m, c + 7);
        int64_t r = r0;
        for (; r + 8 <= r1; r += 8) {
            prefetchNext<F>(n0, n1, n2, n3, r);
            __m256 v = _mm256_loadu_ps(y + r);
            v = _mm256_fmadd_ps(x0, load8<F>(w0, r), v);
            v = _mm256_fmadd_ps(x1, load8<F>(w1, r), v);
            v = _mm256_fmadd_ps(x2, load8<F>(w2, r), v);
            v = _mm256_fmadd_ps(x3, load8<F>(w3, r), v);
            _mm256_storeu_ps(y + r, v);
        }
        columnsTail(m, x, y, c, 4, r, r1);
    }
    for (; c < c1; ++c) {
        const void* w = columnPtr<F>(m, c);
        const __m256 xv = _mm256_set1_ps(x[c]);
        int64_t r = r0;
        for (; r + 8 <= r1; r += 8)
            _mm256_storeu_ps(y + r, _mm256_fmadd_ps(xv, load8<F>(w, r), _mm256_loadu_ps(y + r)));
        columnsTail(m, x, y, c, 1, r, r1);
    }
}

template <WeightFormat F>
BATON_AVX512 void columnsAvx512(const MatrixView& m, const float* x, int64_t c0, int64_t c1,
                                float* y, int64_t r0, int64_t r1) {
    int64_t c = c0;
    for (; c + 4 <= c1; c += 4) {
        const void *w0 = columnPtr<F>(m, c), *w1 = columnPtr<F>(m, c + 1),
                   *w2 = columnPtr<F>(m, c + 2), *w3 = columnPtr<F>(m, c + 3);
        const __m512 x0 = _mm512_set1_ps(x[c]), x1 = _mm512_set1_ps(x[c + 1]),
                     x2 = _mm512_set1_ps(x[c + 2]), x3 = _mm512_set1_ps(x[c + 3]);
        // (the next step's columns: past the last one the addresses are never read)
        const void *n0 = columnPtr<F>(m, c + 4), *n1 = columnPtr<F>(m, c + 5),
                   *n2 = columnPtr<F>(m, c + 6), *n3 = columnPtr<F>(m, c + 7);
        int64_t r = r0;
        for (; r + 16 <= r1; r += 16) {
            prefetchNext<F>(n0, n1, n2, n3, r);
            __m512 v = _mm512_loadu_ps(y + r);
            v = _mm512_fmadd_ps(x0, load16<F>(w0, r), v);
            v = _mm512_fmadd_ps(x1, load16<F>(w1, r), v);
            v = _mm512_fmadd_ps(x2, load16<F>(w2, r), v);
            v = _mm512_fmadd_ps(x3, load16<F>(w3, r), v);
            _mm512_storeu_ps(y + r, v);
        }
        columnsTail(m, x, y, c, 4, r, r1);
    }
    for (; c < c1; ++c) {
        const void* w = columnPtr<F>(m, c);
        const __m512 xv = _mm512_set1_ps(x[c]);
        int64_t r = r0;
        for (; r + 16 <= r1; r += 16)
            _mm512_storeu_ps(y + r, _mm512_fmadd_ps(xv, load16<F>(w, r), _mm512_loadu_ps(y + r)));
        columnsTail(m, x, y, c, 1, r, r1);
    }
}

// Columns 16 at a time; for each 16, the rows 16 at a time: a tile of 16 rows by 16
// columns, each column's 16 values one (converted) vector, which a transpose turns into
// the rows' 16 values. The 16 columns' stretches are read down the rows, each one a
// stream the software prefetch keeps ahead (no hardware prefetcher follows 16 of them).
template <WeightFormat F>
BATON_AVX512 void unpackColumnsAvx512(const MatrixView& m, int64_t r0, int64_t r1, int64_t c0,
                                      int64_t c1, float* out) {
    constexpr int64_t kAhead = 64; // rows prefetched ahead in each column
    const int64_t width = c1 - c0;
    for (int64_t c = c0; c < c1; c += 16) {
        const int64_t k = std::min<int64_t>(16, c1 - c);
        const __mmask16 cols = __mmask16(k >= 16 ? 0xffff : (1u << k) - 1);
        for (int64_t r = r0; r < r1; r += 16) {
            const int64_t n = std::min<int64_t>(16, r1 - r);
            const __mmask16 rows = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
            __m512i v[16];
            for (int64_t j = 0; j < 16; ++j) {
                if (j < k && r + kAhead < r1)
                    _mm_prefetch(static_cast<const char*>(columnPtr<F>(m, c + j)) +
                                     size_t(r + kAhead) * elementBytes<F>(),
                                 _MM_HINT_T0);
                v[j] = j < k ? _mm512_castps_si512(columnLoad16<F>(m, c + j, r, rows))
                             : _mm512_setzero_si512();
            }
            transpose16(v);
            for (int64_t i = 0; i < n; ++i)
                _mm512_mask_storeu_ps(out + (r - r0 + i) * width + (c - c0), cols,
                                      _mm512_castsi512_ps(v[i]));
        }
    }
}

} // namespace

void unpackColumnMajorAvx512(const MatrixView& m, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                             float* out) {
    switch (m.format) {
    case WeightFormat::F32:
        unpackColumnsAvx512<WeightFormat::F32>(m, r0, r1, c0, c1, out);
        break;
    case WeightFormat::F16:
        unpackColumnsAvx512<WeightFormat::F16>(m, r0, r1, c0, c1, out);
        break;
    default: // BF16 (8- and 4-bit weights are never column-major)
        unpackColumnsAvx512<WeightFormat::BF16>(m, r0, r1, c0, c1, out);
        break;
    }
}

ColumnsFn columnKernel(Isa isa, WeightFormat format) {
    if (format == WeightFormat::Int8)
        return columnsScalar; // never made (int8 is packed row-major); correct anyway
    const int f = static_cast<int>(format);
    static constexpr ColumnsFn avx512[3] = {columnsAvx512<WeightFormat::F32>,
                                            columnsAvx512<WeightFormat::F16>,
                                            columnsAvx512<WeightFormat::BF16>};
    static constexpr ColumnsFn avx2[3] = {columnsAvx2<WeightFormat::F32>,
                                          columnsAvx2<WeightFormat::F16>,
                                          columnsAvx2<WeightFormat::BF16>};
    switch (isa) {
    case Isa::Avx512:
        return avx512[f];
    case Isa::Avx2:
        return avx2[f];
    default:
        return columnsScalar;
    }
}

} // namespace baton::engine::cpu
