// What the tests of the 8- and 4-bit weights (tst_int8_weights, tst_q4_weights) check a
// decoder product against: the product as the formats define it (int8_blocks.h,
// q4_blocks.h), written out plainly in double, random values to feed it, and the checks
// both formats pass.
#pragma once

#include "isa_paths.h"
#include "kernels/weight_kernels.h"
#include "kernels/weight_matrix.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace baton::test {

inline std::vector<float> randomValues(size_t n, unsigned seed, float spread = 1.f) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal(0.f, spread);
    std::vector<float> v(n);
    for (float& x : v)
        x = normal(gen);
    return v;
}

// The decoder's product y = W x + b by the definition: per block of 32, d s times the
// integer sum of the weights' levels (w / d) and the activations quantized to 8 bits
// (s = max |x| / 127, x_q = round(x / s)); and, per row, the sum of the magnitudes of
// its terms (for a relative error).
struct DefinedProduct {
    std::vector<double> y, magnitude;
};
inline DefinedProduct definedProduct(const engine::cpu::MatrixView& m, const float* x,
                                     const float* b) {
    using namespace engine::cpu;
    DefinedProduct e{std::vector<double>(size_t(m.rows)), std::vector<double>(size_t(m.rows))};
    for (int64_t blk = 0; blk < m.blocksPerRow(); ++blk) {
        const int64_t c0 = blk * kInt8Block, n = std::min(kInt8Block, m.cols - c0);
        float amax = 0.f;
        for (int64_t i = 0; i < n; ++i)
            amax = std::max(amax, std::fabs(x[c0 + i]));
        const float s = amax / 127.f;
        std::vector<double> xq(size_t(n), 0.0);
        for (int64_t i = 0; i < n && amax > 0.f; ++i)
            xq[size_t(i)] = std::clamp(std::nearbyint(x[c0 + i] * (127.f / amax)), -127.f, 127.f);
        for (int64_t r = 0; r < m.rows; ++r) {
            const size_t at = size_t(r * m.blocksPerRow() + blk);
            const float d =
                m.format == engine::WeightFormat::Q4 ? f16ToFloat(m.q4Scales[at]) : m.scales[at];
            double dot = 0.0, mag = 0.0;
            for (int64_t i = 0; i < n && d != 0.f; ++i) {
                const double level = double(weightAt(m, r, c0 + i)) / d; // exact
                dot += level * xq[size_t(i)];
                mag += std::fabs(level * xq[size_t(i)]);
            }
            e.y[size_t(r)] += double(d) * s * dot;
            e.magnitude[size_t(r)] += std::fabs(double(d) * s) * mag;
        }
    }
    for (int64_t r = 0; r < m.rows; ++r) {
        e.y[size_t(r)] += b ? b[r] : 0.f;
        e.magnitude[size_t(r)] += (b ? std::fabs(b[r]) : 0.0) + 1.0;
    }
    return e;
}

// The rows [r0, r1) of y (every row by default) within `tolerance` of the definition,
// relative to the row's magnitude.
inline void verifyDefined(const engine::cpu::MatrixView& v, const std::vector<float>& x,
                          const float* b, const std::vector<float>& y, double tolerance,
                          const QString& what, int64_t r0 = 0, int64_t r1 = -1) {
    const auto e = definedProduct(v, x.data(), b);
    for (int64_t r = r0; r < (r1 < 0 ? v.rows : r1); ++r) {
        const double err = std::fabs(y[size_t(r)] - e.y[size_t(r)]) / e.magnitude[size_t(r)];
        QVERIFY2(err < tolerance, qPrintable(QString("%1 row %2: %3, defined %4 (error %5)")
                                                 .arg(what)
                                                 .arg(r)
                                                 .arg(y[size_t(r)])
                                                 .arg(e.y[size_t(r)])
                                                 .arg(err)));
    }
}

// y = W x + b by the definition, each path, for W of each shape [rows, cols] packed in
// format f; and over a range of rows without a bias, leaving the others alone.
inline void verifyProductsOfShapes(engine::WeightFormat f,
                                   const std::vector<std::pair<int64_t, int64_t>>& shapes) {
    using namespace engine::cpu;
    for (Isa path : isaPaths()) {
        setIsa(path);
        for (auto [rows, cols] : shapes) {
            const auto w = randomValues(size_t(rows * cols), unsigned(rows * 7 + cols));
            const auto x = randomValues(size_t(cols), unsigned(cols), 2.f);
            const auto b = randomValues(size_t(rows), unsigned(rows));
            const auto packed = PackedMatrix::pack(w.data(), rows, cols, f);
            const MatrixView v = packed.view();
            std::vector<float> y(static_cast<size_t>(rows));
            gemv(v, x.data(), b.data(), y.data());
            const QString what = QString("%1 [%2, %3]").arg(isaName(path)).arg(rows).arg(cols);
            verifyDefined(v, x, b.data(), y, 1e-5, what);
            std::vector<float> y2(size_t(rows), 42.f);
            const int64_t r0 = rows / 3, r1 = rows - rows / 4;
            gemvRows(v, x.data(), nullptr, y2.data(), r0, r1);
            for (int64_t r = 0; r < rows; ++r)
                if (r < r0 || r >= r1)
                    QCOMPARE(y2[size_t(r)], 42.f);
            verifyDefined(v, x, nullptr, y2, 1e-5, what + " without a bias", r0, r1);
        }
    }
}

// Quantizing the activations costs little against the product of the packed weights
// with x as it is (within 1% of the sum of the terms' magnitudes), and a non-finite
// activation gives no finite result on any path.
inline void verifyActivationsKeepTheProduct(engine::WeightFormat f) {
    using namespace engine::cpu;
    const int64_t rows = 64, cols = 768;
    const auto w = randomValues(size_t(rows * cols), 5);
    auto x = randomValues(size_t(cols), 6);
    const auto packed = PackedMatrix::pack(w.data(), rows, cols, f);
    std::vector<float> back(w.size()), y(static_cast<size_t>(rows));
    unpackRows(packed.view(), 0, rows, back.data());
    gemv(packed.view(), x.data(), nullptr, y.data());
    for (int64_t r = 0; r < rows; ++r) {
        double exact = 0.0, mag = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            exact += double(back[size_t(r * cols + c)]) * x[size_t(c)];
            mag += std::fabs(double(back[size_t(r * cols + c)]) * x[size_t(c)]);
        }
        QVERIFY2(std::fabs(y[size_t(r)] - exact) < 0.01 * mag,
                 qPrintable(QString("row %1: %2 vs %3").arg(r).arg(y[size_t(r)]).arg(exact)));
    }
    x[100] = std::numeric_limits<float>::infinity();
    for (Isa path : isaPaths()) {
        setIsa(path);
        gemv(packed.view(), x.data(), nullptr, y.data());
        for (float v : y)
            QVERIFY(!std::isfinite(v));
    }
}

} // namespace baton::test
