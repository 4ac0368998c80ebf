// Matrix-vector products over column-major weights (MatrixView::transposed: the
// columns stored one after another, Hugging Face's Conv1D layout), so that the mapped
// bytes of a checkpoint serve as the model's weights with no copy.
//
// Every path computes y[r] = b[r] (or 0), then y[r] = fma(x[c], W(r, c), y[r]) for
// c = 0, 1, ..., cols - 1, element by element: the scalar code, the AVX2 lanes and
// the AVX-512 lanes perform exactly these roundings, so the result depends neither on
// the path's width nor on how the rows are split among threads. A step reads the
// [r0, r1) segments of four stored columns (four contiguous streams, as the row
// kernels read four rows) and keeps y's segment in L1.
#include "inference/weight_kernels.h"
#include "inference/weight_loads.h"

#include <cmath>

namespace baton::engine::cpu {

namespace {

using namespace simd;

template <WeightFormat F>
const void* columnPtr(const MatrixView& m, int64_t c) {
    return static_cast<const uint8_t*>(m.data) + size_t(c * m.rows) * elementBytes<F>();
}

void startRows(const float* b, float* y, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
        y[r] = b ? b[r] : 0.f;
}

// Rows [r, r1) of columns [c, c + n): the scalar order every vector lane follows.
void columnsTail(const MatrixView& m, const float* x, float* y, int64_t c, int64_t n, int64_t r,
                 int64_t r1) {
    for (; r < r1; ++r)
        for (int64_t j = c; j < c + n; ++j)
            y[r] = std::fma(x[j], weightAt(m, r, j), y[r]);
}

void columnsScalar(const MatrixView& m, const float* x, const float* b, float* y, int64_t r0,
                   int64_t r1) {
    startRows(b, y, r0, r1);
    for (int64_t c = 0; c < m.cols; ++c)
        columnsTail(m, x, y, c, 1, r0, r1);
}

template <WeightFormat F>
BATON_AVX2 void columnsAvx2(const MatrixView& m, const float* x, const float* b, float* y,
                            int64_t r0, int64_t r1) {
    startRows(b, y, r0, r1);
    int64_t c = 0;
    for (; c + 4 <= m.cols; c += 4) {
        const void *w0 = columnPtr<F>(m, c), *w1 = columnPtr<F>(m, c + 1),
                   *w2 = columnPtr<F>(m, c + 2), *w3 = columnPtr<F>(m, c + 3);
        const __m256 x0 = _mm256_set1_ps(x[c]), x1 = _mm256_set1_ps(x[c + 1]),
                     x2 = _mm256_set1_ps(x[c + 2]), x3 = _mm256_set1_ps(x[c + 3]);
        int64_t r = r0;
        for (; r + 8 <= r1; r += 8) {
            __m256 v = _mm256_loadu_ps(y + r);
            v = _mm256_fmadd_ps(x0, load8<F>(w0, r), v);
            v = _mm256_fmadd_ps(x1, load8<F>(w1, r), v);
            v = _mm256_fmadd_ps(x2, load8<F>(w2, r), v);
            v = _mm256_fmadd_ps(x3, load8<F>(w3, r), v);
            _mm256_storeu_ps(y + r, v);
        }
        columnsTail(m, x, y, c, 4, r, r1);
    }
    for (; c < m.cols; ++c) {
        const void* w = columnPtr<F>(m, c);
        const __m256 xv = _mm256_set1_ps(x[c]);
        int64_t r = r0;
        for (; r + 8 <= r1; r += 8)
            _mm256_storeu_ps(y + r, _mm256_fmadd_ps(xv, load8<F>(w, r), _mm256_loadu_ps(y + r)));
        columnsTail(m, x, y, c, 1, r, r1);
    }
}

template <WeightFormat F>
BATON_AVX512 void columnsAvx512(const MatrixView& m, const float* x, const float* b, float* y,
                                int64_t r0, int64_t r1) {
    startRows(b, y, r0, r1);
    int64_t c = 0;
    for (; c + 4 <= m.cols; c += 4) {
        const void *w0 = columnPtr<F>(m, c), *w1 = columnPtr<F>(m, c + 1),
                   *w2 = columnPtr<F>(m, c + 2), *w3 = columnPtr<F>(m, c + 3);
        const __m512 x0 = _mm512_set1_ps(x[c]), x1 = _mm512_set1_ps(x[c + 1]),
                     x2 = _mm512_set1_ps(x[c + 2]), x3 = _mm512_set1_ps(x[c + 3]);
        int64_t r = r0;
        for (; r + 16 <= r1; r += 16) {
            __m512 v = _mm512_loadu_ps(y + r);
            v = _mm512_fmadd_ps(x0, load16<F>(w0, r), v);
            v = _mm512_fmadd_ps(x1, load16<F>(w1, r), v);
            v = _mm512_fmadd_ps(x2, load16<F>(w2, r), v);
            v = _mm512_fmadd_ps(x3, load16<F>(w3, r), v);
            _mm512_storeu_ps(y + r, v);
        }
        columnsTail(m, x, y, c, 4, r, r1);
    }
    for (; c < m.cols; ++c) {
        const void* w = columnPtr<F>(m, c);
        const __m512 xv = _mm512_set1_ps(x[c]);
        int64_t r = r0;
        for (; r + 16 <= r1; r += 16)
            _mm512_storeu_ps(y + r, _mm512_fmadd_ps(xv, load16<F>(w, r), _mm512_loadu_ps(y + r)));
        columnsTail(m, x, y, c, 1, r, r1);
    }
}

} // namespace

RowsFn columnKernel(Isa isa, WeightFormat format) {
    if (format == WeightFormat::Int8)
        return columnsScalar; // never made (int8 is packed row-major); correct anyway
    const int f = static_cast<int>(format);
    static constexpr RowsFn avx512[3] = {columnsAvx512<WeightFormat::F32>,
                                         columnsAvx512<WeightFormat::F16>,
                                         columnsAvx512<WeightFormat::BF16>};
    static constexpr RowsFn avx2[3] = {columnsAvx2<WeightFormat::F32>,
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
