// 8-bit weights in the decoder (kernels/int8_blocks.h): the activations quantize to the
// same values on every path, and every path's matrix-vector product is the definition's
// sum (exact integer sums of the weights' and the activations' 8-bit values, scaled),
// for odd shapes, partial blocks and the extreme values of both.
#include "block_products.h"
#include "isa_paths.h"
#include "kernels/int8_blocks.h"
#include "kernels/weight_matrix.h"

#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

using namespace baton::engine;
using namespace baton::engine::cpu;
using baton::test::randomValues;
using baton::test::verifyDefined;

class TestInt8Weights : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { setIsa(bestIsa()); }
    void cleanupTestCase() { setIsa(bestIsa()); }

    // The same quantized activations on every path, an even number of blocks.
    void activationsQuantizeAlikeOnEveryPath() {
        for (int64_t cols : {int64_t(1), int64_t(45), int64_t(96), int64_t(768), int64_t(1600)}) {
            auto x = randomValues(size_t(cols), unsigned(100 + cols), 3.f);
            if (cols > 64)
                std::fill(x.begin() + 32, x.begin() + 64, 0.f);
            Int8Activations reference;
            setIsa(Isa::Scalar);
            quantizeInt8Activations(x.data(), cols, reference);
            QCOMPARE(reference.blocks % 2, int64_t(0));
            QCOMPARE(reference.q.size(), size_t(reference.blocks * 32));
            for (int64_t c = cols; c < reference.blocks * 32; ++c)
                QCOMPARE(int(reference.q[size_t(c)]), 0); // zeros past the width
            for (Isa path : baton::test::isaPaths()) {
                setIsa(path);
                Int8Activations a;
                quantizeInt8Activations(x.data(), cols, a);
                QVERIFY(a.q == reference.q);
                QVERIFY(a.scale == reference.scale);
                QVERIFY(a.sum == reference.sum);
            }
        }
    }

    // y = W x + b by the definition, each path, odd shapes: rows not a multiple of 4,
    // widths with a partial block, an odd number of blocks, and a last step of 64
    // bytes that the row fills by less than one block or by more.
    void gemvMatchesTheDefinition() {
        baton::test::verifyProductsOfShapes(WeightFormat::Int8, {{1, 1},
                                                                 {3, 7},
                                                                 {4, 32},
                                                                 {5, 33},
                                                                 {6, 64},
                                                                 {7, 65},
                                                                 {2, 100},
                                                                 {9, 96},
                                                                 {13, 257},
                                                                 {130, 768},
                                                                 {7, 1000},
                                                                 {21, 1600},
                                                                 {3, 3072}});
    }

    // The largest levels of both sides, with every sign: the integer sums reach
    // 32 x 127 x 127 a block, and the result is still the definition's.
    void extremeValuesSumExactly() {
        const int64_t rows = 6, cols = 200;
        std::vector<float> w(size_t(rows * cols));
        for (int64_t c = 0; c < cols; ++c) {
            w[size_t(c)] = 1.f;                                  // all +127
            w[size_t(cols + c)] = -1.f;                          // all -127
            w[size_t(2 * cols + c)] = c % 2 ? 1.f : -1.f;        // alternating
            w[size_t(3 * cols + c)] = c % 3 ? 0.f : -2.f;        // zeros and -127
            w[size_t(4 * cols + c)] = 0.f;                       // a zero row
            w[size_t(5 * cols + c)] = c % 32 == 5 ? 7.f : 1e-3f; // a lone extreme a block
        }
        const auto packed = PackedMatrix::pack(w.data(), rows, cols, WeightFormat::Int8);
        for (float sign : {1.f, -1.f}) {
            std::vector<float> x(static_cast<size_t>(cols));
            for (int64_t c = 0; c < cols; ++c)
                x[size_t(c)] = sign * (c % 2 ? -3.f : 3.f);
            for (Isa path : baton::test::isaPaths()) {
                setIsa(path);
                std::vector<float> y(static_cast<size_t>(rows));
                gemv(packed.view(), x.data(), nullptr, y.data());
                verifyDefined(packed.view(), x, nullptr, y, 1e-6, isaName(path));
                QCOMPARE(y[4], 0.f);
            }
        }
    }

    // Quantizing the activations costs little against the product of the 8-bit
    // weights with x as it is, and a non-finite activation gives no finite result.
    void activationsKeepTheProduct() {
        baton::test::verifyActivationsKeepTheProduct(WeightFormat::Int8);
    }
};

QTEST_APPLESS_MAIN(TestInt8Weights)
#include "tst_int8_weights.moc"
