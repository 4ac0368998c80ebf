#include "model/weight_loader.h"

#include "kernels/worker_team.h"

#include <algorithm>
#include <vector>

namespace baton::engine {

namespace {

// A stored matrix is converted and packed a tile at a time, the tile's float32 copy
// small enough to stay in the core's cache: a column-major one (a Conv1D weight) in
// tiles a few columns wide and many rows deep, so each stored column is read in long
// stretches (16 rows across all the columns read 32 bytes of a new page at every step);
// a row-major one in whole rows.
constexpr int64_t kTileFloats = 65536;

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

cpu::MatrixView viewOf(const StoredMatrix& m) {
    return {formatOf(m.dtype), m.data, nullptr, m.rows, m.cols, m.transposed};
}

} // namespace

WeightFormat formatOf(StDtype dtype) {
    return dtype == StDtype::F16    ? WeightFormat::F16
           : dtype == StDtype::BF16 ? WeightFormat::BF16
                                    : WeightFormat::F32;
}

void loadFloat(const StoredMatrix& m, float* out) {
    const cpu::MatrixView stored = viewOf(m);
    overRows(m,
             [&](int64_t r0, int64_t r1) { cpu::unpackRows(stored, r0, r1, out + r0 * m.cols); });
}

cpu::PackedMatrix loadPacked(const StoredMatrix& m, WeightFormat format) {
    auto packed = cpu::PackedMatrix::allocate(m.rows, m.cols, format);
    const cpu::MatrixView stored = viewOf(m);
    // (64 columns: whole 64-byte lines of int8 weights written per row.)
    const int64_t width =
        m.transposed ? std::min(m.cols, std::max<int64_t>(64, cpu::packColumnGranule(format)))
                     : m.cols;
    const int64_t depth = std::max<int64_t>(16, kTileFloats / width);
    overRows(m, [&](int64_t r0, int64_t r1) {
        std::vector<float> tile(size_t(depth * width));
        for (int64_t r = r0; r < r1; r += depth) {
            const int64_t r2 = std::min(r1, r + depth);
            for (int64_t c = 0; c < m.cols; c += width) {
                const int64_t c2 = std::min(m.cols, c + width);
                cpu::unpackTile(stored, r, r2, c, c2, tile.data());
                packed.packTile(tile.data(), r, r2, c, c2);
            }
        }
    });
    return packed;
}

} // namespace baton::engine
