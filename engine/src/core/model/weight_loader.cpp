#include "model/weight_loader.h"

#include "kernels/worker_team.h"

#include <algorithm>
#include <vector>

namespace baton::engine {

namespace {

constexpr int64_t kRowBlock = 16; // rows converted and packed at a time

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

WeightFormat formatOf(StDtype dtype) {
    return dtype == StDtype::F16    ? WeightFormat::F16
           : dtype == StDtype::BF16 ? WeightFormat::BF16
                                    : WeightFormat::F32;
}

void storedRowsToFloat(const StoredMatrix& m, int64_t r0, int64_t r1, float* out) {
    cpu::unpackRows({formatOf(m.dtype), m.data, nullptr, m.rows, m.cols, m.transposed}, r0, r1,
                    out);
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
