// Batched products of weight matrices as they are held (kernels/batched_products.h,
// model/fixed_blocks.h's packedLinear): every format and layout, in every kind of
// product steps this CPU has, matches the product computed in double of the weights and
// activations as the steps read them (float32 as they are; rounded to bfloat16 for
// bfloat16 pairs; for 8-bit quads the weights as held and the activations quantized to
// 8 bits in blocks of 32); any split of the rows gives the same bits, and so does any
// team size; other paths leave the matrix to LibTorch.
#include "kernels/batched_products.h"
#include "kernels/weight_kernels.h"
#include "model/fixed_blocks.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

using namespace baton::engine;
using namespace baton::engine::cpu;

namespace {

// A packed matrix and the view the products read: row-major, or (transposed) the
// column-major bytes of a mapped checkpoint, as borrow() holds them.
struct Matrix {
    PackedMatrix packed;
    torch::Tensor kept; // float32 weights the view reads
    MatrixView view;
};

Matrix make(const torch::Tensor& w, WeightFormat f, bool transposed) {
    const int64_t rows = w.size(0), cols = w.size(1);
    Matrix m;
    if (f == WeightFormat::F32) { // as held: `w` itself, or its transpose's bytes
        m.kept = transposed ? w.t().contiguous() : w.contiguous();
        m.view = PackedMatrix::wrap(m.kept.data_ptr<float>(), rows, cols, transposed);
    } else if (!transposed) {
        const auto wc = w.contiguous();
        m.packed = PackedMatrix::pack(wc.data_ptr<float>(), rows, cols, f);
        m.view = m.packed.view();
    } else {
        const auto stored = w.t().contiguous(); // [cols, rows]
        m.packed = PackedMatrix::pack(stored.data_ptr<float>(), cols, rows, f);
        m.view = m.packed.view();
        m.view.rows = rows;
        m.view.cols = cols;
        m.view.transposed = true;
    }
    return m;
}

// The weights as the products read them: rounded to bfloat16 in pairs, else their
// exact values.
torch::Tensor weightsAsRead(const MatrixView& v) {
    const bool pairs = productSteps(v.format) == ProductSteps::Bf16Pairs;
    auto out = torch::empty({v.rows, v.cols}, torch::kDouble);
    auto a = out.accessor<double, 2>();
    for (int64_t r = 0; r < v.rows; ++r)
        for (int64_t c = 0; c < v.cols; ++c) {
            const float w = weightAt(v, r, c);
            a[r][c] = pairs ? bf16ToFloat(floatToBf16(w)) : w;
        }
    return out;
}

// x in 8 bits, per block of 32 of a row: s = max |x| / 127, x ~ s round(x 127 / max |x|).
torch::Tensor quantizedIn8Bits(const torch::Tensor& x) {
    auto out = x.to(torch::kDouble).contiguous();
    auto a = out.accessor<double, 2>();
    const auto xf = x.contiguous();
    auto f = xf.accessor<float, 2>();
    for (int64_t i = 0; i < x.size(0); ++i)
        for (int64_t c0 = 0; c0 < x.size(1); c0 += 32) {
            const int64_t c1 = std::min<int64_t>(c0 + 32, x.size(1));
            float amax = 0.f;
            for (int64_t c = c0; c < c1; ++c)
                amax = std::max(amax, std::fabs(f[i][c]));
            for (int64_t c = c0; c < c1; ++c)
                a[i][c] = amax == 0.f
                              ? 0.0
                              : double(amax / 127.f) * std::nearbyint(f[i][c] * (127.f / amax));
        }
    return out;
}

torch::Tensor activationsAsRead(const torch::Tensor& x, WeightFormat f) {
    switch (productSteps(f)) {
    case ProductSteps::Float32:
        return x.to(torch::kDouble);
    case ProductSteps::Bf16Pairs:
        return x.to(torch::kBFloat16).to(torch::kDouble);
    default:
        return quantizedIn8Bits(x);
    }
}

struct Case {
    WeightFormat format;
    bool transposed;
};
const Case kCases[] = {{WeightFormat::F32, false},  {WeightFormat::F32, true},
                       {WeightFormat::F16, false},  {WeightFormat::F16, true},
                       {WeightFormat::BF16, false}, {WeightFormat::BF16, true},
                       {WeightFormat::Int8, false}, {WeightFormat::Q4, false}};

bool hasVnni() {
    return __builtin_cpu_supports("avx512vnni");
}

// The cases this CPU multiplies as held.
std::vector<Case> cases() {
    std::vector<Case> out;
    for (const Case& c : kCases)
        if (batchedProducts(c.format))
            out.push_back(c);
    return out;
}

// The kinds of steps to check: the CPU's own (bf16 pairs and 8-bit quads where it has
// them), then float32 steps for every format if that differs.
std::vector<bool> ownStepsFirst() {
    std::vector<bool> own{true};
    allowProductSteps(true, true);
    for (const Case& c : kCases)
        if (productSteps(c.format) != ProductSteps::Float32) {
            own.push_back(false);
            break;
        }
    return own;
}

QString name(const Case& c) {
    return QString("%1%2 (%3)")
        .arg(weightFormatName(c.format))
        .arg(c.transposed ? " column-major" : "")
        .arg(productStepsName(productSteps(c.format)));
}

// y [m, ldy] from rows [r0, r1) of the product, the rest of y left at 42.
torch::Tensor product(const MatrixView& v, const torch::Tensor& x, const float* b, int64_t ldy,
                      int64_t r0, int64_t r1) {
    const int64_t m = x.size(0), steps = activationWords(v.format, v.cols);
    std::vector<uint32_t> xs(size_t(m * steps));
    const auto xc = x.contiguous();
    prepareActivations(v.format, xc.data_ptr<float>(), m, v.cols, xs.data());
    auto y = torch::full({m, ldy}, 42.f);
    batchedProductRows(v, xs.data(), m, b, y.data_ptr<float>(), ldy, r0, r1);
    return y;
}

} // namespace

class TestBatchedProducts : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Without AVX-512 nothing here runs; without AVX512-BF16 (AVX512-VNNI) the 16-bit
    // (8- and 4-bit) weights run in float32 steps only (named in the log).
    void init() {
        setIsa(bestIsa());
        allowProductSteps(true, true);
        if (!batchedProducts(WeightFormat::F32))
            QSKIP("this CPU has no AVX-512: batched products are LibTorch's here");
        if (!nativeBf16Products())
            qInfo("this CPU has no AVX512-BF16: no bfloat16 pairs to check");
        if (!hasVnni())
            qInfo("this CPU has no AVX512-VNNI: no 8-bit quads to check");
    }
    void cleanup() {
        setIsa(bestIsa());
        allowProductSteps(true, true);
        at::set_num_threads(1);
    }

    // Odd sizes everywhere: rows not a multiple of the 32-row panel, columns not a
    // multiple of the 32-column chunk (nor even), activation rows not a multiple of the
    // 12-row tile.
    void matchesTheRoundedProduct() {
        const std::vector<std::array<int64_t, 3>> shapes = {
            {1, 1, 1},     {5, 33, 70},  {13, 67, 333}, {29, 64, 96},
            {12, 100, 31}, {40, 96, 64}, {3, 530, 150}, {14, 530, 150}};
        for (bool own : ownStepsFirst())
            for (const Case& c : cases())
                for (auto [m, rows, cols] : shapes) {
                    allowProductSteps(own, own);
                    torch::manual_seed(rows * 1000 + cols);
                    const auto w = torch::randn({rows, cols});
                    const auto x = torch::randn({m, cols});
                    const auto b = torch::randn({rows});
                    const Matrix mat = make(w, c.format, c.transposed);
                    const auto y = product(mat.view, x, b.data_ptr<float>(), rows, 0, rows);
                    const auto wr = weightsAsRead(mat.view), xr = activationsAsRead(x, c.format);
                    const auto expected = xr.mm(wr.t()) + b.to(torch::kDouble);
                    const auto scale = xr.abs().mm(wr.abs().t()) + 1;
                    const double err =
                        ((y.to(torch::kDouble) - expected).abs() / scale).max().item<double>();
                    QVERIFY2(err < 1e-5, qPrintable(QString("%1 m %2 [%3, %4]: relative error %5")
                                                        .arg(name(c))
                                                        .arg(m)
                                                        .arg(rows)
                                                        .arg(cols)
                                                        .arg(err)));
                }
    }

    // A range of rows written into a wider output gives the same bits as the whole
    // product there, and leaves everything else alone; so does no bias.
    void anyRowRangeGivesTheSameBits() {
        torch::manual_seed(3);
        const int64_t rows = 100, cols = 75, m = 14, ldy = 130;
        const auto w = torch::randn({rows, cols});
        const auto x = torch::randn({m, cols});
        for (bool own : ownStepsFirst())
            for (const Case& c : cases()) {
                allowProductSteps(own, own);
                const Matrix mat = make(w, c.format, c.transposed);
                const auto whole = product(mat.view, x, nullptr, ldy, 0, rows);
                for (auto [r0, r1] : {std::pair<int64_t, int64_t>{7, 61}, {33, 34}, {64, 100}}) {
                    const auto part = product(mat.view, x, nullptr, ldy, r0, r1);
                    QVERIFY2(
                        torch::equal(part.narrow(1, r0, r1 - r0), whole.narrow(1, r0, r1 - r0)),
                        qPrintable(name(c)));
                    QVERIFY((part.narrow(1, 0, r0) == 42).all().item<bool>());
                    QVERIFY((part.narrow(1, r1, ldy - r1) == 42).all().item<bool>());
                }
                QVERIFY((whole.narrow(1, rows, ldy - rows) == 42).all().item<bool>());
            }
    }

    // A product's row has the same bits however many activation rows come with it
    // (column-major weights are read in place for up to 16 rows, in blocks of 16 steps
    // for up to 4 and of 32 for more, and packed into panels beyond), with a bias or
    // without; no rows give nothing.
    void fewRowsGiveTheBitsOfMany() {
        torch::manual_seed(6);
        const int64_t rows = 530, cols = 75, many = 20;
        const auto w = torch::randn({rows, cols});
        const auto x = torch::randn({many, cols});
        const auto b = torch::randn({rows});
        for (bool own : ownStepsFirst())
            for (const Case& c : cases()) {
                allowProductSteps(own, own);
                const Matrix mat = make(w, c.format, c.transposed);
                for (const float* bias : {static_cast<const float*>(b.data_ptr<float>()),
                                          static_cast<const float*>(nullptr)}) {
                    const auto all = product(mat.view, x, bias, rows, 0, rows);
                    for (int64_t m : {0, 1, 2, 4, 5, 7, 13, 16, 17}) {
                        const auto few = product(mat.view, x.narrow(0, 0, m), bias, rows, 0, rows);
                        QVERIFY2(torch::equal(few, all.narrow(0, 0, m)),
                                 qPrintable(QString("%1, %2 rows").arg(name(c)).arg(m)));
                    }
                }
            }
    }

    // packedLinear: the same bits with a team of one, two or three threads, equal to the
    // row products above, for inputs of any batch shape.
    void packedLinearForAnyTeam() {
        torch::manual_seed(4);
        const auto w = torch::randn({200, 96});
        const auto x = torch::randn({2, 150, 96});
        const auto b = torch::randn({200});
        for (bool own : ownStepsFirst())
            for (const Case& c : cases()) {
                allowProductSteps(own, own);
                const Matrix mat = make(w, c.format, c.transposed);
                at::set_num_threads(1);
                const auto one = blocks::packedLinear(x, mat.view, b);
                QCOMPARE(one.sizes().vec(), (std::vector<int64_t>{2, 150, 200}));
                for (int threads : {2, 3}) {
                    at::set_num_threads(threads);
                    QVERIFY2(torch::equal(blocks::packedLinear(x, mat.view, b), one),
                             qPrintable(QString("%1, %2 threads").arg(name(c)).arg(threads)));
                }
                const auto rowsOnly =
                    product(mat.view, x.reshape({300, 96}), b.data_ptr<float>(), 200, 0, 200);
                QVERIFY(torch::equal(rowsOnly.view({2, 150, 200}), one));
            }
    }

    // A block of activations holding an infinity or a NaN makes its row's products
    // non-finite, and no other row's.
    void aNonFiniteActivationSpoilsOnlyItsRow() {
        torch::manual_seed(5);
        const auto w = torch::randn({40, 70});
        auto x = torch::randn({3, 70});
        x[1][40] = std::numeric_limits<float>::infinity();
        for (bool own : ownStepsFirst())
            for (const Case& c : cases()) {
                allowProductSteps(own, own);
                const Matrix mat = make(w, c.format, c.transposed);
                const auto y = product(mat.view, x, nullptr, 40, 0, 40);
                QVERIFY2(torch::isfinite(y[0]).all().item<bool>() &&
                             torch::isfinite(y[2]).all().item<bool>(),
                         qPrintable(name(c)));
                QVERIFY2(!torch::isfinite(y[1]).any().item<bool>(), qPrintable(name(c)));
            }
    }

    // Every format is multiplied as held on the AVX-512 path, in the steps the CPU has:
    // 16-bit weights in bfloat16 pairs with AVX512-BF16, 8- and 4-bit ones in 8-bit
    // quads with AVX512-VNNI, float32 steps otherwise or when those are not allowed. The
    // other paths leave the matrices to LibTorch.
    void eachFormatInTheStepsTheCpuHas() {
        for (WeightFormat f : {WeightFormat::F32, WeightFormat::F16, WeightFormat::BF16,
                               WeightFormat::Int8, WeightFormat::Q4}) {
            QVERIFY(batchedProducts(f));
            const bool sixteen = f == WeightFormat::F16 || f == WeightFormat::BF16;
            const bool blocks = f == WeightFormat::Int8 || f == WeightFormat::Q4;
            const ProductSteps own = sixteen && nativeBf16Products() ? ProductSteps::Bf16Pairs
                                     : blocks && hasVnni()           ? ProductSteps::Int8Quads
                                                                     : ProductSteps::Float32;
            QCOMPARE(productSteps(f), own);
            allowProductSteps(false, false);
            QCOMPARE(productSteps(f), ProductSteps::Float32);
            allowProductSteps(true, true);
            setIsa(Isa::Avx2);
            QVERIFY(!batchedProducts(f));
            setIsa(bestIsa());
        }
    }
};

QTEST_APPLESS_MAIN(TestBatchedProducts)
#include "tst_batched_products.moc"
