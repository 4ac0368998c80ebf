// 4-bit weights (kernels/q4_blocks.h): packing follows the format's definition block
// by block, the activations quantize to the same values on every path, and every
// path's matrix-vector product is the definition's sum (exact integer sums of the
// quantized weights and activations, scaled), for odd shapes and partial groups.
#include "block_products.h"
#include "isa_paths.h"
#include "kernels/q4_blocks.h"
#include "kernels/weight_kernels.h"
#include "kernels/weight_matrix.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace baton::engine;
using namespace baton::engine::cpu;
using baton::test::randomValues;

namespace {

float finite(float v) {
    return std::fabs(v) <= std::numeric_limits<float>::max() ? v : 0.f;
}

float halfRound(float v) {
    return f16ToFloat(floatToF16(std::clamp(v, -65504.f, 65504.f)));
}

// The weights of one block as q4_blocks.h defines them, written out plainly.
std::vector<float> definedBlock(const float* w, int64_t n) {
    float amax = 0.f, extreme = 0.f;
    for (int64_t i = 0; i < n; ++i)
        if (std::fabs(finite(w[i])) > amax) {
            amax = std::fabs(finite(w[i]));
            extreme = finite(w[i]);
        }
    std::vector<float> out(size_t(n), 0.f);
    const float d0 = halfRound(extreme / -8.f);
    if (d0 == 0.f)
        return out;
    // The levels for d, and the squared error less sum w^2: d^2 sum q^2 - 2 d sum w q.
    auto levels = [&](float d, std::vector<float>& q) {
        q.assign(size_t(n), 0.f);
        for (int64_t i = 0; i < n; ++i)
            q[size_t(i)] = std::clamp(std::nearbyint(finite(w[i]) * (1.f / d)), -8.f, 7.f);
        double wq = 0.0, qq = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            wq += double(finite(w[i])) * q[size_t(i)];
            qq += double(q[size_t(i)]) * q[size_t(i)];
        }
        return std::pair(double(d) * d * qq - 2.0 * d * wq, wq / qq);
    };
    std::vector<float> q0, q1;
    const auto [cost0, leastSquares] = levels(d0, q0);
    float d = d0;
    std::vector<float>* q = &q0;
    const float d1 = std::isfinite(leastSquares) ? halfRound(float(leastSquares)) : 0.f;
    if (d1 != 0.f && d1 != d0 && levels(d1, q1).first < cost0) {
        d = d1;
        q = &q1;
    }
    for (int64_t i = 0; i < n; ++i)
        out[size_t(i)] = d * (*q)[size_t(i)];
    return out;
}

} // namespace

class TestQ4Weights : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { setIsa(bestIsa()); }
    void cleanupTestCase() { setIsa(bestIsa()); }

    void name() {
        QCOMPARE(parseWeightFormat("q4"), std::optional<WeightFormat>(WeightFormat::Q4));
        QCOMPARE(std::string(weightFormatName(WeightFormat::Q4)), std::string("q4"));
    }

    // Every block as defined: random rows of several widths (a partial last block, a
    // partial last group of 16 blocks), and blocks with zeros, a lone extreme, a
    // constant, tiny values, huge ones and non-finite ones.
    void packingFollowsTheDefinition() {
        for (int64_t cols : {int64_t(1), int64_t(31), int64_t(101), int64_t(800), int64_t(1600)}) {
            const int64_t rows = 9;
            auto w = randomValues(size_t(rows * cols), unsigned(cols), 0.05f);
            if (cols >= 101) {
                std::fill(w.begin(), w.begin() + 32, 0.f);        // a zero block
                w[40] = -3.f;                                     // a lone extreme
                std::fill(w.begin() + 64, w.begin() + 96, 0.25f); // a constant block
                w[size_t(cols)] = std::numeric_limits<float>::infinity();
                w[size_t(cols) + 1] = std::numeric_limits<float>::quiet_NaN();
                w[size_t(2 * cols)] = 1e-9f;            // below float16's resolution
                w[size_t(3 * cols)] = 1e7f;             // a scale past float16's range
                w[size_t(3 * cols) + 1] = -65504.f * 8; // the largest that fits
                if (cols >= 128) { // two of largest magnitude: the first sets the scale
                    w[99] = -0.5f;
                    w[116] = 0.5f;
                }
                for (int64_t i = 0; i < 32; ++i) // a scale in float16's subnormals
                    w[size_t(4 * cols + i)] *= 2e-3f;
            }
            std::vector<float> back(size_t(rows * cols));
            std::vector<uint8_t> scalarBytes;          // the scalar path's nibbles and scales
            for (Isa path : baton::test::isaPaths()) { // each path packs and unpacks
                setIsa(path);
                const auto packed = PackedMatrix::pack(w.data(), rows, cols, WeightFormat::Q4);
                const MatrixView v = packed.view();
                QCOMPARE(v.bytes(), size_t(rows * ((cols + 31) / 32) * 18));
                // Every path stores the same bytes (a zero block's levels included).
                const size_t nibbleBytes = size_t(rows) * q4RowBytes(cols);
                std::vector<uint8_t> bytes(static_cast<const uint8_t*>(v.data),
                                           static_cast<const uint8_t*>(v.data) + nibbleBytes);
                const auto* scaleBytes = reinterpret_cast<const uint8_t*>(v.q4Scales);
                bytes.insert(bytes.end(), scaleBytes, scaleBytes + v.bytes() - nibbleBytes);
                if (path == Isa::Scalar)
                    scalarBytes = bytes;
                QVERIFY2(bytes == scalarBytes, isaName(path));
                unpackRows(v, 0, rows, back.data());
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t c0 = 0; c0 < cols; c0 += 32) {
                        const int64_t n = std::min<int64_t>(32, cols - c0);
                        const auto want = definedBlock(w.data() + r * cols + c0, n);
                        for (int64_t i = 0; i < n; ++i) {
                            const float got = back[size_t(r * cols + c0 + i)];
                            QVERIFY2(got == want[size_t(i)] && weightAt(v, r, c0 + i) == got,
                                     qPrintable(QString("%1 wide, (%2, %3): %4, defined %5")
                                                    .arg(cols)
                                                    .arg(r)
                                                    .arg(c0 + i)
                                                    .arg(got)
                                                    .arg(want[size_t(i)])));
                        }
                    }
            }
            if (cols >= 101) {
                QCOMPARE(back[0], 0.f);
                QCOMPARE(back[40], -3.f); // the extreme is exactly -8 d
                QCOMPARE(back[size_t(2 * cols)], 0.f);
                QVERIFY(std::isfinite(back[size_t(3 * cols)]));
            }
        }
    }

    // The least-squares scale is taken where it does better than Q4_0's: over many
    // random blocks the error is below that of the first scale alone.
    void refitLowersTheError() {
        const int64_t rows = 64, cols = 1024;
        const auto w = randomValues(size_t(rows * cols), 11);
        const auto packed = PackedMatrix::pack(w.data(), rows, cols, WeightFormat::Q4);
        std::vector<float> back(w.size());
        unpackRows(packed.view(), 0, rows, back.data());
        double ours = 0.0, q40 = 0.0;
        for (size_t i = 0; i < w.size(); i += 32) {
            float amax = 0.f, extreme = 0.f;
            for (size_t k = i; k < i + 32; ++k)
                if (std::fabs(w[k]) > amax) {
                    amax = std::fabs(w[k]);
                    extreme = w[k];
                }
            const float d = halfRound(extreme / -8.f);
            for (size_t k = i; k < i + 32; ++k) {
                const double q = std::clamp(std::nearbyint(w[k] * (1.f / d)), -8.f, 7.f);
                q40 += std::pow(double(w[k]) - d * q, 2);
                ours += std::pow(double(w[k]) - back[k], 2);
            }
        }
        QVERIFY2(ours < 0.97 * q40, qPrintable(QString("%1 vs %2").arg(ours).arg(q40)));
    }

    // The same quantized activations on every path (the AVX-512 one is vectorized).
    void activationsQuantizeAlikeOnEveryPath() {
        for (int64_t cols : {int64_t(1), int64_t(45), int64_t(768), int64_t(1600)}) {
            auto x = randomValues(size_t(cols), unsigned(100 + cols), 3.f);
            if (cols > 64)
                std::fill(x.begin() + 32, x.begin() + 64, 0.f);
            Q4Activations reference;
            setIsa(Isa::Scalar);
            quantizeQ4Activations(x.data(), cols, reference);
            for (Isa path : baton::test::isaPaths()) {
                setIsa(path);
                Q4Activations a;
                quantizeQ4Activations(x.data(), cols, a);
                QVERIFY(a.q == reference.q);
                QVERIFY(a.scale == reference.scale);
                QVERIFY(a.bias == reference.bias);
            }
        }
    }

    // y = W x + b by the definition, each path, odd shapes (rows not a multiple of 4;
    // widths with partial blocks and partial groups of 16 blocks).
    void gemvMatchesTheDefinition() {
        baton::test::verifyProductsOfShapes(WeightFormat::Q4, {{1, 1},
                                                               {3, 7},
                                                               {4, 32},
                                                               {5, 33},
                                                               {13, 257},
                                                               {9, 512},
                                                               {130, 768},
                                                               {7, 1000},
                                                               {21, 1600}});
    }

    // Quantizing the activations costs little against the product of the 4-bit
    // weights with x as it is, and a non-finite activation gives no finite result.
    void activationsKeepTheProduct() {
        baton::test::verifyActivationsKeepTheProduct(WeightFormat::Q4);
    }
};

QTEST_APPLESS_MAIN(TestQ4Weights)
#include "tst_q4_weights.moc"
