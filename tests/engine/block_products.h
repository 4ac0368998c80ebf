// What the tests of the 8- and 4-bit weights (tst_int8_weights, tst_q4_weights) check a
// decoder product against: the product as the formats define it (int8_blocks.h,
// q4_blocks.h), written out plainly in double, and random values to feed it.
#pragma once

#include "kernels/weight_kernels.h"
#include "kernels/weight_matrix.h"

#include <algorithm>
#include <cmath>
#include <random>
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

} // namespace baton::test
