#include "kernels/weight_matrix.h"

#include "kernels/q4_blocks.h"
#include "kernels/weight_kernels.h"
#include "kernels/worker_team.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace baton::engine {

const char* weightFormatName(WeightFormat format) {
    switch (format) {
    case WeightFormat::F32:
        return "f32";
    case WeightFormat::F16:
        return "f16";
    case WeightFormat::BF16:
        return "bf16";
    case WeightFormat::Int8:
        return "int8";
    case WeightFormat::Q4:
        return "q4";
    }
    return "?";
}

std::optional<WeightFormat> parseWeightFormat(const std::string& name) {
    for (WeightFormat f : {WeightFormat::F32, WeightFormat::F16, WeightFormat::BF16,
                           WeightFormat::Int8, WeightFormat::Q4})
        if (name == weightFormatName(f))
            return f;
    return std::nullopt;
}

namespace cpu {

size_t MatrixView::bytes() const {
    if (format == WeightFormat::Q4) // nibbles and a float16 scale per block
        return size_t(rows) * (q4RowBytes(cols) + 2 * size_t(blocksPerRow()));
    const size_t n = size_t(rows * cols);
    const size_t scales = format == WeightFormat::Int8 ? size_t(rows * blocksPerRow()) : 0;
    return weightBytes(format) * n + sizeof(float) * scales;
}

MatrixView MatrixView::stored() const {
    if (!transposed)
        return *this;
    return {format, data, scales, cols, rows, false, q4Scales};
}

MatrixView PackedMatrix::wrap(const float* w, int64_t rows, int64_t cols, bool transposed) {
    return {WeightFormat::F32, w, nullptr, rows, cols, transposed};
}

PackedMatrix PackedMatrix::borrow(const MatrixView& view, std::shared_ptr<const void> keep) {
    PackedMatrix p;
    p.m_format = view.format;
    p.m_rows = view.rows;
    p.m_cols = view.cols;
    p.m_borrowed = view;
    p.m_keep = std::move(keep);
    return p;
}

PackedMatrix PackedMatrix::allocate(int64_t rows, int64_t cols, WeightFormat format) {
    PackedMatrix p;
    p.m_format = format;
    p.m_rows = rows;
    p.m_cols = cols;
    if (format == WeightFormat::Q4) { // packTile fills them
        p.m_data.reset(new uint8_t[size_t(rows) * q4RowBytes(cols)]);
        p.m_q4Scales.reset(new uint16_t[size_t(rows * p.view().blocksPerRow())]);
        return p;
    }
    p.m_data.reset(new uint8_t[weightBytes(format) * size_t(rows * cols)]); // packTile fills it
    if (format == WeightFormat::Int8)
        p.m_scales.reset(new float[size_t(rows * p.view().blocksPerRow())]);
    return p;
}

PackedMatrix PackedMatrix::pack(const float* w, int64_t rows, int64_t cols, WeightFormat format) {
    PackedMatrix p = allocate(rows, cols, format);
    p.packTile(w, 0, rows, 0, cols);
    return p;
}

int64_t packColumnGranule(WeightFormat format) {
    return format == WeightFormat::Q4 ? kQ4Group * kInt8Block : kInt8Block;
}

void PackedMatrix::packTile(const float* w, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const int64_t width = c1 - c0;
    switch (m_format) {
    case WeightFormat::F32:
        for (int64_t r = r0; r < r1; ++r)
            std::memcpy(m_data.get() + 4 * size_t(r * m_cols + c0), w + (r - r0) * width,
                        4 * size_t(width));
        break;
    case WeightFormat::F16:
    case WeightFormat::BF16: {
        const auto convert = m_format == WeightFormat::F16 ? floatsToF16 : floatsToBf16;
        for (int64_t r = r0; r < r1; ++r)
            convert(w + (r - r0) * width, width,
                    reinterpret_cast<uint16_t*>(m_data.get()) + r * m_cols + c0);
        break;
    }
    case WeightFormat::Int8: {
        const int64_t nb = view().blocksPerRow();
        quantizeInt8Rows(w, r1 - r0, width,
                         reinterpret_cast<int8_t*>(m_data.get()) + r0 * m_cols + c0, m_cols,
                         m_scales.get() + r0 * nb + c0 / kInt8Block, nb);
        break;
    }
    case WeightFormat::Q4:
        packQ4Tile(w, m_cols, r0, r1, c0, c1, m_data.get(), m_q4Scales.get());
        break;
    }
}

MatrixView PackedMatrix::view() const {
    if (m_keep)
        return m_borrowed;
    return {m_format, m_data.get(), m_scales.get(), m_rows, m_cols, false, m_q4Scales.get()};
}

namespace {

constexpr int64_t kGatherRows = 16;  // rows gathered at a time from a column-major matrix
constexpr int64_t kUnpackChunk = 64; // rows unpacked at a time by unpackRows (column-major)

// Rows [r0, r0 + n) by columns [c0, c1) of a column-major matrix as n row-major rows of
// T: each stored column gives n consecutive values.
template <typename T>
void gatherColumns(const MatrixView& m, int64_t r0, int64_t n, int64_t c0, int64_t c1, T* out) {
    const T* src = static_cast<const T*>(m.data);
    for (int64_t c = c0; c < c1; ++c) {
        const T* line = src + c * m.rows + r0;
        for (int64_t i = 0; i < n; ++i)
            out[i * (c1 - c0) + c - c0] = line[i];
    }
}

// Rows [r0, r1) by columns [c0, c1) of a column-major matrix (F32, F16 or BF16) as
// float32, kGatherRows at a time; 16-bit values gathered raw, then converted by the
// vector kernels.
void unpackColumnMajor(const MatrixView& m, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                       float* out) {
    if (isa() == Isa::Avx512) {
        unpackColumnMajorAvx512(m, r0, r1, c0, c1, out);
        return;
    }
    const int64_t width = c1 - c0;
    if (m.format == WeightFormat::F32) {
        for (int64_t r = r0; r < r1; r += kGatherRows)
            gatherColumns(m, r, std::min(kGatherRows, r1 - r), c0, c1, out + (r - r0) * width);
        return;
    }
    std::vector<uint16_t> tile(size_t(kGatherRows * width));
    for (int64_t r = r0; r < r1; r += kGatherRows) {
        const int64_t n = std::min(kGatherRows, r1 - r);
        gatherColumns(m, r, n, c0, c1, tile.data());
        const MatrixView rows{m.format, tile.data(), nullptr, n, width};
        kernels().unpack[static_cast<int>(m.format)](rows, 0, n, out + (r - r0) * width);
    }
}

} // namespace

void unpackRows(const MatrixView& m, int64_t r0, int64_t r1, float* out) {
    if (m.transposed) { // a few rows at a time, so the rows written stay in the cache
        for (int64_t r = r0; r < r1; r += kUnpackChunk)
            unpackColumnMajor(m, r, std::min(r1, r + kUnpackChunk), 0, m.cols,
                              out + (r - r0) * m.cols);
        return;
    }
    if (m.format == WeightFormat::F32) {
        std::memcpy(out, static_cast<const float*>(m.data) + r0 * m.cols,
                    sizeof(float) * size_t((r1 - r0) * m.cols));
        return;
    }
    const UnpackFn unpack = kernels().unpack[static_cast<int>(m.format)];
    const int64_t rows = r1 - r0;
    const int threads = (rows * m.cols >= (int64_t(1) << 20)) ? threadCount() : 1;
    if (threads <= 1) {
        unpack(m, r0, r1, out);
        return;
    }
    runParts(threads, [&](int t, int nt) {
        const int64_t a = r0 + rows * t / nt, b = r0 + rows * (t + 1) / nt;
        unpack(m, a, b, out + (a - r0) * m.cols);
    });
}

void unpackTile(const MatrixView& m, int64_t r0, int64_t r1, int64_t c0, int64_t c1, float* out) {
    if (m.transposed) {
        unpackColumnMajor(m, r0, r1, c0, c1, out);
        return;
    }
    for (int64_t r = r0; r < r1; ++r) { // one row of c1 - c0 columns at a time
        const auto* first =
            static_cast<const uint8_t*>(m.data) + weightBytes(m.format) * size_t(r * m.cols + c0);
        float* row = out + (r - r0) * (c1 - c0);
        if (m.format == WeightFormat::F32)
            std::memcpy(row, first, sizeof(float) * size_t(c1 - c0));
        else
            kernels().unpack[static_cast<int>(m.format)]({m.format, first, nullptr, 1, c1 - c0}, 0,
                                                         1, row);
    }
}

namespace {

// A product over a transposed W is a sum of fixed chunks of columns: y[r] = b[r] + P_0[r]
// + P_1[r] + ... in chunk order, P_k the column kernel's chain over chunk k from 0. The
// chunks depend only on W's width, so any split of them among threads gives the same
// bits, and a thread streams whole chunks (a chunk's columns over all rows are one
// contiguous stretch of memory; splitting the rows instead reads short pieces of every
// column, measured a quarter slower with 16-bit weights).
constexpr int64_t kColumnChunk = 64;

int64_t columnChunks(const MatrixView& W) {
    return (W.cols + kColumnChunk - 1) / kColumnChunk;
}

// The calling thread's room for the partial sums: P_k at k * W.rows.
float* partialSums(const MatrixView& W) {
    thread_local std::vector<float> room;
    room.resize(size_t(columnChunks(W) * W.rows));
    return room.data();
}

// P_k for the chunks [k0, k1), rows [r0, r1).
void chunkSums(const MatrixView& W, const float* x, float* partial, int64_t k0, int64_t k1,
               int64_t r0, int64_t r1) {
    const ColumnsFn fn = columnKernel(isa(), W.format);
    for (int64_t k = k0; k < k1; ++k) {
        float* p = partial + k * W.rows;
        std::fill(p + r0, p + r1, 0.f);
        fn(W, x, k * kColumnChunk, std::min(W.cols, (k + 1) * kColumnChunk), p, r0, r1);
    }
}

// y[r] = b[r] (or 0) plus the partial sums in chunk order, rows [r0, r1).
void addChunkSums(const MatrixView& W, const float* partial, const float* b, float* y, int64_t r0,
                  int64_t r1) {
    if (b)
        std::copy(b + r0, b + r1, y + r0);
    else
        std::fill(y + r0, y + r1, 0.f);
    for (int64_t k = 0; k < columnChunks(W); ++k)
        kernels().axpy(y + r0, partial + k * W.rows + r0, 1.f, r1 - r0); // y + P, exactly
}

// gemv over a transposed W: the chunks split among the threads, then the rows.
void gemvColumns(const MatrixView& W, const float* x, const float* b, float* y, RowsThen then,
                 int threads) {
    const int64_t rows = W.rows, chunks = columnChunks(W);
    float* partial = partialSums(W);
    if (threads <= 1) {
        chunkSums(W, x, partial, 0, chunks, 0, rows);
        addChunkSums(W, partial, b, y, 0, rows);
        if (then)
            then(y, rows);
        return;
    }
    runParts(threads, [&](int t, int nt) {
        chunkSums(W, x, partial, chunks * t / nt, chunks * (t + 1) / nt, 0, rows);
    });
    runParts(threads, [&](int t, int nt) {
        const int64_t blocks = (rows + 15) / 16;
        const int64_t r0 = std::min(rows, blocks * t / nt * 16),
                      r1 = std::min(rows, blocks * (t + 1) / nt * 16);
        addChunkSums(W, partial, b, y, r0, r1);
        if (then && r1 > r0)
            then(y + r0, r1 - r0);
    });
}

} // namespace

void gemvRows(const MatrixView& W, const float* x, const float* b, float* y, int64_t r0,
              int64_t r1) {
    if (W.transposed) {
        float* partial = partialSums(W);
        chunkSums(W, x, partial, 0, columnChunks(W), r0, r1);
        addChunkSums(W, partial, b, y, r0, r1);
        return;
    }
    kernels().rows[static_cast<int>(W.format)](W, x, b, y, r0, r1);
}

void gemv(const MatrixView& W, const float* x, const float* b, float* y, RowsThen then) {
    const int64_t rows = W.rows;
    const auto part = [&](int64_t r0, int64_t r1) {
        gemvRows(W, x, b, y, r0, r1);
        if (then)
            then(y + r0, r1 - r0);
    };
    const int threads = (rows * W.cols >= 65536) ? threadCount() : 1;
    if (W.transposed) {
        gemvColumns(W, x, b, y, then, threads);
        return;
    }
    if (threads <= 1) {
        part(0, rows);
        return;
    }
    runParts(threads, [&](int t, int nt) {
        // Contiguous ranges whose starts are multiples of 4 rows; each row is computed
        // by one thread, so the result does not depend on the team size.
        const int64_t blocks = (rows + 3) / 4;
        const int64_t b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
        part(b0 * 4, std::min(rows, b1 * 4));
    });
}

void axpy(float* y, const float* x, float a, int64_t n) {
    kernels().axpy(y, x, a, n);
}

} // namespace cpu
} // namespace baton::engine