#include "model/weight_loader.h"

#include "inference/weight_kernels.h"
#include "inference/worker_team.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace baton::engine {

namespace {

constexpr int64_t kRowBlock = 16; // rows gathered at a time from a transposed tensor

WeightFormat sixteenBitFormat(StDtype d) {
    return d == StDtype::F16 ? WeightFormat::F16 : WeightFormat::BF16;
}

// Gathers rows [r0, r0 + n) of a transposed tensor (bytes [cols, rows]) into `out`
// as n row-major rows of T: each stored row contributes n consecutive elements.
template <typename T>
void gatherTransposed(const StoredMatrix& m, int64_t r0, int64_t n, T* out) {
    const T* src = reinterpret_cast<const T*>(m.data);
    for (int64_t c = 0; c < m.cols; ++c) {
        const T* line = src + c * m.rows + r0;
        for (int64_t i = 0; i < n; ++i)
            out[i * m.cols + c] = line[i];
    }
}

// Runs fn(r0, r1) over row ranges that split the matrix among the worker team (a
// small matrix stays on the calling thread).
template <typename Fn>
void overRows(const StoredMatrix& m, Fn fn) {
    const int parts = m.rows * m.cols >= (int64_t(1) << 16) ? cpu::threadCount() : 1;
    if (parts <= 1) {
        fn(int64_t(0), m.rows);
        return;
    }
    cpu::runParts(parts, [&](int part, int n) { fn(m.rows * part / n, m.rows * (part + 1) / n); });
}

} // namespace

void storedRowsToFloat(const StoredMatrix& m, int64_t r0, int64_t r1, float* out) {
    if (!m.transposed) {
        if (m.dtype == StDtype::F32) {
            std::memcpy(out, m.data + 4 * size_t(r0 * m.cols), 4 * size_t((r1 - r0) * m.cols));
            return;
        }
        const cpu::MatrixView v{sixteenBitFormat(m.dtype), m.data, nullptr, m.rows, m.cols};
        cpu::kernels().unpack[static_cast<int>(v.format)](v, r0, r1, out);
        return;
    }
    if (m.dtype == StDtype::F32) {
        for (int64_t r = r0; r < r1; r += kRowBlock)
            gatherTransposed(m, r, std::min(kRowBlock, r1 - r), out + (r - r0) * m.cols);
        return;
    }
    // 16-bit: gather the raw values, then convert them with the vector kernels.
    std::vector<uint16_t> tile(size_t(kRowBlock * m.cols));
    for (int64_t r = r0; r < r1; r += kRowBlock) {
        const int64_t n = std::min(kRowBlock, r1 - r);
        gatherTransposed(m, r, n, tile.data());
        const cpu::MatrixView v{sixteenBitFormat(m.dtype), tile.data(), nullptr, n, m.cols};
        cpu::kernels().unpack[static_cast<int>(v.format)](v, 0, n, out + (r - r0) * m.cols);
    }
}

void loadFloat(const StoredMatrix& m, float* out) {
    overRows(m, [&](int64_t r0, int64_t r1) { storedRowsToFloat(m, r0, r1, out + r0 * m.cols); });
}

cpu::PackedMatrix loadPacked(const StoredMatrix& m, WeightFormat format) {
    auto packed = cpu::PackedMatrix::allocate(m.rows, m.cols, format);
    overRows(m, [&](int64_t r0, int64_t r1) {
        std::vector<float> rows(size_t(kRowBlock * m.cols));
        for (int64_t r = r0; r < r1; r += kRowBlock) {
            const int64_t r2 = std::min(r1, r + kRowBlock);
            storedRowsToFloat(m, r, r2, rows.data());
            packed.packRows(rows.data(), r, r2);
        }
    });
    return packed;
}

} // namespace baton::engine
