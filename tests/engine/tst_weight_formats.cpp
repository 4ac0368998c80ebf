// The decoder's weight formats and kernels (kernels/weight_matrix.h) against plain
// LibTorch: conversions round as torch rounds, 8-bit blocks follow their definition,
// and every matrix-vector product of float32 and 16-bit weights (each instruction-set
// path this CPU runs, odd sizes) matches torch's product of the same weights; so does
// the GELU. (8-bit products quantize x as well: tst_int8_weights.)
#include "isa_paths.h"
#include "kernels/q4_blocks.h"
#include "kernels/vector_ops.h"
#include "kernels/weight_matrix.h"
#include "kernels/worker_team.h"

#include <torch/torch.h>

#include <QtTest>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

using namespace baton::engine;
using namespace baton::engine::cpu;

namespace {

// The 8-bit format by its definition, in torch: per block of 32 weights of a row,
// scale = max |w| / 127 and q = round(w / scale) (ties to even), w' = scale * q.
torch::Tensor int8Reference(const torch::Tensor& w) {
    auto out = torch::empty_like(w);
    const int64_t cols = w.size(1);
    for (int64_t c0 = 0; c0 < cols; c0 += kInt8Block) {
        const int64_t n = std::min(kInt8Block, cols - c0);
        auto block = w.narrow(1, c0, n);
        auto scale = std::get<0>(block.abs().max(1, true)) / 127.0f;
        auto inv = torch::where(scale > 0, 1.0f / scale, torch::zeros_like(scale));
        auto q = torch::round(block * inv).clamp(-127, 127);
        out.narrow(1, c0, n).copy_(q * scale);
    }
    return out;
}

torch::Tensor reference(const torch::Tensor& w, WeightFormat f) {
    switch (f) {
    case WeightFormat::F16:
        return w.to(torch::kHalf).to(torch::kFloat);
    case WeightFormat::BF16:
        return w.to(torch::kBFloat16).to(torch::kFloat);
    case WeightFormat::Int8:
        return int8Reference(w);
    default:
        return w;
    }
}

const WeightFormat kFormats[] = {WeightFormat::F32, WeightFormat::F16, WeightFormat::BF16,
                                 WeightFormat::Int8};

} // namespace

class TestWeightFormats : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { setIsa(bestIsa()); }
    void cleanupTestCase() { setIsa(bestIsa()); }

    void names() {
        for (WeightFormat f : kFormats)
            QCOMPARE(parseWeightFormat(weightFormatName(f)), std::optional<WeightFormat>(f));
        QVERIFY(!parseWeightFormat("f8").has_value());
        QVERIFY(!parseWeightFormat("").has_value());
    }

    // Packing then unpacking (on every instruction-set path) gives exactly the value
    // torch's rounding (or the 8-bit definition) gives, including subnormals, overflow
    // and signed zeros.
    void packingRoundsLikeTorch() {
        torch::manual_seed(3);
        auto w = torch::randn({37, 101}) * 3;
        auto flat = w.view(-1);
        const float special[] = {0.f,
                                 -0.f,
                                 1e-8f,
                                 -3e-6f,
                                 6e-5f,
                                 65504.f,
                                 65519.f,
                                 65520.f,
                                 1e6f,
                                 -1e6f,
                                 1.f / 3,
                                 2.5e-38f,
                                 std::numeric_limits<float>::infinity()};
        for (size_t i = 0; i < std::size(special); ++i)
            flat[int64_t(i)] = special[i];
        for (Isa path : baton::test::isaPaths()) {
            setIsa(path);
            for (WeightFormat f : kFormats) {
                auto src = w.clone();
                if (f == WeightFormat::Int8) // the scale of a block with inf is inf: keep finite
                    src.view(-1)[12] = 7.f;
                const auto packed = PackedMatrix::pack(src.data_ptr<float>(), 37, 101, f);
                auto back = torch::empty({37, 101});
                unpackRows(packed.view(), 0, 37, back.data_ptr<float>());
                const auto ref = reference(src, f);
                const auto same = (back == ref) | (back.isnan() & ref.isnan());
                QVERIFY2(same.all().item<bool>(),
                         qPrintable(QString("%1: %2 values differ from torch, first at %3")
                                        .arg(weightFormatName(f))
                                        .arg((~same).sum().item<int64_t>())
                                        .arg((~same).view(-1).nonzero().numel()
                                                 ? (~same).view(-1).nonzero()[0].item<int64_t>()
                                                 : -1)));
                // Rows unpack on their own too (the embedding lookup).
                auto row = torch::empty({101});
                unpackRows(packed.view(), 20, 21, row.data_ptr<float>());
                QVERIFY(((row == ref[20]) | (row.isnan() & ref[20].isnan())).all().item<bool>());
            }
        }
        setIsa(bestIsa());
    }

    // A matrix large enough to unpack on the whole worker team gives the same values.
    void largeMatricesUnpackInParallel() {
        torch::manual_seed(4);
        const int64_t rows = 1031, cols = 1040; // over 2^20 weights
        auto w = torch::randn({rows, cols});
        for (WeightFormat f : kFormats) {
            const auto packed = PackedMatrix::pack(w.data_ptr<float>(), rows, cols, f);
            auto back = torch::empty({rows, cols});
            unpackRows(packed.view(), 0, rows, back.data_ptr<float>());
            QVERIFY2(torch::equal(back, reference(w, f)), weightFormatName(f));
        }
    }

    // NaN and infinite weights become 0 in 8 bits, and the rest of their block keeps the
    // scale of its finite weights, on every path.
    void int8NonFiniteWeightsCountAsZero() {
        auto w = torch::zeros({2, 40});
        w[0][0] = std::numeric_limits<float>::infinity();
        w[0][5] = -std::numeric_limits<float>::infinity();
        w[0][9] = std::numeric_limits<float>::quiet_NaN();
        w[0][10] = 127.f; // scale 1: every level exact
        w[0][11] = -3.f;
        w[1][35] = std::numeric_limits<float>::quiet_NaN(); // in the row's short last block
        w[1][36] = 127.f;
        auto expected = w.clone();
        expected[0][0] = expected[0][5] = expected[0][9] = expected[1][35] = 0.f;
        for (Isa path : baton::test::isaPaths()) {
            setIsa(path);
            const auto packed = PackedMatrix::pack(w.data_ptr<float>(), 2, 40, WeightFormat::Int8);
            auto back = torch::empty({2, 40});
            unpackRows(packed.view(), 0, 2, back.data_ptr<float>());
            QVERIFY2(torch::equal(back, expected), isaName(path));
        }
        setIsa(bestIsa());
    }

    void int8KeepsSignAndZero() {
        auto w = torch::zeros({4, 64});
        w[1][3] = -2.f;
        w[2].fill_(0.5f);
        const auto packed = PackedMatrix::pack(w.data_ptr<float>(), 4, 64, WeightFormat::Int8);
        auto back = torch::empty({4, 64});
        unpackRows(packed.view(), 0, 4, back.data_ptr<float>());
        QVERIFY(torch::equal(back, w)); // exact: zeros, a lone max, a constant block
        QCOMPARE(packed.view().bytes(), size_t(4 * 64 + 4 * 2 * 4));
    }

    // y = W x + b for every format that multiplies x as it is, path and an assortment
    // of odd shapes.
    void gemvMatchesTorch() {
        torch::manual_seed(5);
        const std::pair<int64_t, int64_t> shapes[] = {{1, 1},    {3, 7},    {4, 16},   {5, 31},
                                                      {9, 33},   {13, 65},  {64, 96},  {130, 257},
                                                      {7, 1000}, {512, 64}, {301, 768}};
        for (Isa path : baton::test::isaPaths()) {
            setIsa(path);
            QCOMPARE(isa(), path);
            for (WeightFormat f : {WeightFormat::F32, WeightFormat::F16, WeightFormat::BF16})
                for (auto [rows, cols] : shapes) {
                    auto w = torch::randn({rows, cols});
                    auto x = torch::randn({cols});
                    auto b = torch::randn({rows});
                    const auto packed = PackedMatrix::pack(w.data_ptr<float>(), rows, cols, f);
                    const MatrixView view =
                        f == WeightFormat::F32 ? PackedMatrix::wrap(w.data_ptr<float>(), rows, cols)
                                               : packed.view();
                    auto y = torch::empty({rows});
                    gemv(view, x.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>());
                    const auto wr = reference(w, f).to(torch::kDouble);
                    // With native bf16 products a BF16 product rounds x to bf16 first.
                    const auto xr = (f == WeightFormat::BF16 && nativeBf16Products())
                                        ? x.to(torch::kBFloat16).to(torch::kDouble)
                                        : x.to(torch::kDouble);
                    const auto expected = torch::mv(wr, xr) + b.to(torch::kDouble);
                    // float32 accumulation: error within a few ulps of sum |w x|
                    const auto scale = torch::mv(wr.abs(), xr.abs()) + 1;
                    const double err =
                        ((y.to(torch::kDouble) - expected).abs() / scale).max().item<double>();
                    QVERIFY2(err < 1e-5, qPrintable(QString("%1 %2 [%3, %4]: relative error %5")
                                                        .arg(isaName(path))
                                                        .arg(weightFormatName(f))
                                                        .arg(rows)
                                                        .arg(cols)
                                                        .arg(err)));
                    // Without a bias, and over a range of rows on this thread.
                    auto y2 = torch::full({rows}, 42.f);
                    const int64_t r0 = rows / 3, r1 = rows - rows / 4;
                    gemvRows(view, x.data_ptr<float>(), nullptr, y2.data_ptr<float>(), r0, r1);
                    const auto e2 = (y2.narrow(0, r0, r1 - r0).to(torch::kDouble) -
                                     (expected - b.to(torch::kDouble)).narrow(0, r0, r1 - r0))
                                        .abs() /
                                    scale.narrow(0, r0, r1 - r0);
                    if (r1 > r0)
                        QVERIFY(e2.max().item<double>() < 1e-5);
                    if (r0 > 0)
                        QCOMPARE(y2[0].item<float>(), 42.f); // rows outside untouched
                }
        }
    }

    // Every path gives the same result for a row whatever the team size: each row is
    // summed by one thread in one order. (BF16 gets an x already in bf16: a path with
    // native bf16 products rounds x to bf16, the others do not.)
    void pathsAgreeClosely() {
        torch::manual_seed(9);
        auto w = torch::randn({67, 333});
        for (WeightFormat f : kFormats) {
            torch::manual_seed(10);
            auto x = torch::randn({333});
            if (f == WeightFormat::BF16)
                x = x.to(torch::kBFloat16).to(torch::kFloat);
            const auto packed = PackedMatrix::pack(w.data_ptr<float>(), 67, 333, f);
            std::vector<torch::Tensor> ys;
            for (Isa path : baton::test::isaPaths()) {
                setIsa(path);
                auto y = torch::empty({67});
                gemv(packed.view(), x.data_ptr<float>(), nullptr, y.data_ptr<float>());
                ys.push_back(y);
            }
            for (const auto& y : ys)
                QVERIFY((y - ys.front()).abs().max().item<float>() < 1e-3f);
        }
    }

    // Whole rows are rounded to 16 bits in vector code (floatsToF16, floatsToBf16): on
    // every path each value is what the scalar floatToF16 / floatToBf16 gives, for every
    // kind of float (random bit patterns: NaNs with payloads, infinities, subnormals,
    // values at the rounding and overflow boundaries) and any length (vector tails).
    void vectorRoundingIsTheScalarRounding() {
        std::vector<uint32_t> bits = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                      0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fbfffffu,
                                      0x477fefffu, 0x477ff000u, 0x477fe000u, 0x33000000u,
                                      0x33000001u, 0x387fc000u, 0x38800000u, 0x3f808000u,
                                      0x3f818000u, 0x3f80ffffu, 0x00000001u, 0x807fffffu};
        uint32_t state = 12345u;
        while (bits.size() < 4096) { // xorshift: every exponent and sign
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            bits.push_back(state);
        }
        std::vector<float> x(bits.size());
        std::memcpy(x.data(), bits.data(), 4 * bits.size());
        for (Isa path : baton::test::isaPaths()) {
            setIsa(path);
            for (int64_t n :
                 {int64_t(1), int64_t(7), int64_t(16), int64_t(37), int64_t(x.size())}) {
                std::vector<uint16_t> f16(size_t(n) + 1, 0xabcd), bf16(size_t(n) + 1, 0xabcd);
                floatsToF16(x.data(), n, f16.data());
                floatsToBf16(x.data(), n, bf16.data());
                for (int64_t i = 0; i < n; ++i) {
                    const QString what = QString("%1, bits %2")
                                             .arg(isaName(path))
                                             .arg(bits[size_t(i)], 8, 16, QChar('0'));
                    QVERIFY2(f16[size_t(i)] == floatToF16(x[size_t(i)]), qPrintable("f16 " + what));
                    QVERIFY2(bf16[size_t(i)] == floatToBf16(x[size_t(i)]),
                             qPrintable("bf16 " + what));
                }
                QCOMPARE(f16[size_t(n)], uint16_t(0xabcd)); // nothing written past n
                QCOMPARE(bf16[size_t(n)], uint16_t(0xabcd));
            }
        }
    }

    // The loader converts a stored matrix a tile at a time (model/weight_loader.cpp):
    // unpackTile gives exactly the tile's weights, row- or column-major, on every path,
    // and packing a matrix tile by tile (tiles of the format's column granule and its
    // multiples, any depth, a narrower last tile) gives the bytes of packing it whole.
    void tilesGiveTheBitsOfWholeRows() {
        torch::manual_seed(21);
        const std::pair<int64_t, int64_t> shapes[] = {{1, 33}, {37, 1100}, {70, 64}, {130, 600}};
        const std::pair<int64_t, int64_t> tiles[] = {{16, 1}, {29, 2}, {512, 1}, {7, 3}};
        for (auto [rows, cols] : shapes) {
            auto w = torch::randn({rows, cols});
            for (WeightFormat f : {WeightFormat::F32, WeightFormat::F16, WeightFormat::BF16})
                for (bool transposed : {false, true}) {
                    const auto exact = reference(w, f);
                    const auto bytes = transposed ? exact.t().contiguous() : exact;
                    const auto held = PackedMatrix::pack(bytes.data_ptr<float>(), bytes.size(0),
                                                         bytes.size(1), f);
                    MatrixView view = f == WeightFormat::F32
                                          ? PackedMatrix::wrap(bytes.data_ptr<float>(),
                                                               bytes.size(0), bytes.size(1))
                                          : held.view();
                    view.rows = rows;
                    view.cols = cols;
                    view.transposed = transposed;
                    for (Isa path : baton::test::isaPaths()) {
                        setIsa(path);
                        for (auto [r0, r1, c0, c1] : {std::array<int64_t, 4>{0, rows, 0, cols},
                                                      {rows / 3, rows, cols / 2, cols},
                                                      {0, (rows + 1) / 2, 1, 18}}) {
                            auto tile = torch::full({r1 - r0, c1 - c0}, -7.f);
                            unpackTile(view, r0, r1, c0, c1, tile.data_ptr<float>());
                            QVERIFY2(torch::equal(tile, exact.slice(0, r0, r1).slice(1, c0, c1)),
                                     qPrintable(QString("%1 %2 [%3, %4] %5")
                                                    .arg(isaName(path), weightFormatName(f))
                                                    .arg(rows)
                                                    .arg(cols)
                                                    .arg(transposed ? "column-major" : "")));
                        }
                    }
                }
            for (WeightFormat f : {WeightFormat::F32, WeightFormat::F16, WeightFormat::BF16,
                                   WeightFormat::Int8, WeightFormat::Q4}) {
                const auto whole = PackedMatrix::pack(w.data_ptr<float>(), rows, cols, f);
                for (auto [depth, granules] : tiles) {
                    const int64_t width = granules * packColumnGranule(f);
                    auto tiled = PackedMatrix::allocate(rows, cols, f);
                    for (int64_t r0 = 0; r0 < rows; r0 += depth)
                        for (int64_t c0 = 0; c0 < cols; c0 += width) {
                            const int64_t r1 = std::min(rows, r0 + depth),
                                          c1 = std::min(cols, c0 + width);
                            auto tile = w.slice(0, r0, r1).slice(1, c0, c1).contiguous();
                            tiled.packTile(tile.data_ptr<float>(), r0, r1, c0, c1);
                        }
                    const MatrixView a = whole.view(), b = tiled.view();
                    const size_t blocks = size_t(rows * a.blocksPerRow());
                    const size_t data = f == WeightFormat::Q4
                                            ? size_t(rows) * q4RowBytes(cols)
                                            : weightBytes(f) * size_t(rows * cols);
                    const QString what = QString("%1 [%2, %3], tiles %4 x %5")
                                             .arg(weightFormatName(f))
                                             .arg(rows)
                                             .arg(cols)
                                             .arg(depth)
                                             .arg(width);
                    QVERIFY2(std::memcmp(a.data, b.data, data) == 0, qPrintable(what));
                    if (f == WeightFormat::Int8)
                        QVERIFY2(std::memcmp(a.scales, b.scales, 4 * blocks) == 0,
                                 qPrintable(what));
                    if (f == WeightFormat::Q4)
                        QVERIFY2(std::memcmp(a.q4Scales, b.q4Scales, 2 * blocks) == 0,
                                 qPrintable(what));
                }
            }
        }
    }

    // Column-major weights (a checkpoint's Conv1D bytes, shared without a copy): every
    // path unpacks them to the rows they hold, and sums each chunk of 64 columns as p = fma(x[c],
    // W(r, c), p) from 0 and adds the chunks to b[r] in order, so the result equals that loop bit
    // for bit, whatever the path and the team size, and matches torch's product; a range of rows
    // leaves the others untouched.
    void columnMajorProductsAreExact() {
        torch::manual_seed(12);
        const std::pair<int64_t, int64_t> shapes[] = {
            {1, 1},   {3, 7},     {16, 4},   {17, 5},   {33, 9},    {65, 13},
            {96, 64}, {257, 130}, {1000, 7}, {64, 512}, {768, 301}, {300, 2000}};
        const int before = threadCount();
        for (WeightFormat f : {WeightFormat::F32, WeightFormat::F16, WeightFormat::BF16})
            for (auto [rows, cols] : shapes) {
                auto w = reference(torch::randn({rows, cols}), f);
                auto x = torch::randn({cols});
                auto b = torch::randn({rows});
                const auto columns = w.t().contiguous(); // [cols, rows]: the stored bytes
                const auto packed = PackedMatrix::pack(columns.data_ptr<float>(), cols, rows, f);
                MatrixView view = f == WeightFormat::F32
                                      ? PackedMatrix::wrap(columns.data_ptr<float>(), cols, rows)
                                      : packed.view();
                view.rows = rows;
                view.cols = cols;
                view.transposed = true;
                QCOMPARE(view.stored().rows, cols);
                std::vector<float> loop(static_cast<size_t>(rows));
                const float *xs = x.data_ptr<float>(), *bs = b.data_ptr<float>();
                const auto wa = w.accessor<float, 2>();
                for (int64_t r = 0; r < rows; ++r) {
                    float acc = bs[r];
                    for (int64_t c0 = 0; c0 < cols; c0 += 64) { // chunks of 64 columns
                        float chunk = 0.f;
                        for (int64_t c = c0; c < std::min(cols, c0 + 64); ++c)
                            chunk = std::fma(xs[c], wa[r][c], chunk);
                        acc += chunk;
                    }
                    loop[size_t(r)] = acc;
                }
                for (Isa path : baton::test::isaPaths()) {
                    setIsa(path);
                    // Unpacked to rows: the whole matrix, and a range of rows.
                    auto unpacked = torch::empty({rows, cols});
                    unpackRows(view, 0, rows, unpacked.data_ptr<float>());
                    QVERIFY2(torch::equal(unpacked, w), isaName(path));
                    const int64_t from = rows / 3;
                    auto tail = torch::empty({rows - from, cols});
                    unpackRows(view, from, rows, tail.data_ptr<float>());
                    QVERIFY2(torch::equal(tail, w.narrow(0, from, rows - from)), isaName(path));
                    for (int threads : {1, 2, 3}) {
                        setThreadCount(threads);
                        auto y = torch::empty({rows});
                        gemv(view, xs, bs, y.data_ptr<float>());
                        QVERIFY2(std::memcmp(y.data_ptr<float>(), loop.data(), 4 * size_t(rows)) ==
                                     0,
                                 qPrintable(QString("%1 %2 [%3, %4], %5 threads")
                                                .arg(isaName(path))
                                                .arg(weightFormatName(f))
                                                .arg(rows)
                                                .arg(cols)
                                                .arg(threads)));
                        auto z = torch::empty({rows});
                        gemv(view, xs, bs, z.data_ptr<float>(), [](float* v, int64_t n) {
                            for (int64_t k = 0; k < n; ++k)
                                v[k] = v[k] * 2.f + 1000.f;
                        });
                        QVERIFY(torch::equal(z, y * 2 + 1000)); // `then` once on every row
                    }
                    auto part = torch::full({rows}, 42.f);
                    const int64_t r0 = rows / 3, r1 = rows - rows / 4;
                    gemvRows(view, xs, bs, part.data_ptr<float>(), r0, r1);
                    for (int64_t r = 0; r < rows; ++r)
                        QCOMPARE(part[r].item<float>(), r >= r0 && r < r1 ? loop[size_t(r)] : 42.f);
                }
                const auto wd = w.to(torch::kDouble), xd = x.to(torch::kDouble);
                const auto expected = torch::mv(wd, xd) + b.to(torch::kDouble);
                const auto scale = torch::mv(wd.abs(), xd.abs()) + 1;
                const auto y = torch::from_blob(loop.data(), {rows}).to(torch::kDouble);
                QVERIFY(((y - expected).abs() / scale).max().item<double>() < 1e-5);
                // Its rows as float32 are the weights.
                auto rowsOut = torch::empty({rows, cols});
                unpackRows(view, 0, rows, rowsOut.data_ptr<float>());
                QVERIFY(torch::equal(rowsOut, w));
            }
        setThreadCount(before);
    }

    void axpyMatchesPlainArithmetic() {
        for (Isa path : baton::test::isaPaths()) {
            setIsa(path);
            for (int64_t n : {1, 7, 8, 15, 16, 17, 64, 100}) {
                std::vector<float> y(static_cast<size_t>(n)), x(y), ref(y);
                for (int64_t i = 0; i < n; ++i) {
                    y[size_t(i)] = float(i) * 0.5f;
                    x[size_t(i)] = 1.f - float(i);
                    ref[size_t(i)] = y[size_t(i)] + 0.25f * x[size_t(i)];
                }
                axpy(y.data(), x.data(), 0.25f, n);
                for (int64_t i = 0; i < n; ++i)
                    QVERIFY(std::abs(y[size_t(i)] - ref[size_t(i)]) < 1e-6f);
            }
        }
    }

    // `then` runs once on every row, by the thread that computed it, whatever the team.
    void gemvAppliesThenToEveryRowOnce() {
        torch::manual_seed(3);
        const int64_t rows = 301, cols = 512; // large enough to be split among threads
        auto w = torch::randn({rows, cols});
        auto x = torch::randn({cols});
        const auto view = PackedMatrix::wrap(w.data_ptr<float>(), rows, cols);
        auto plain = torch::empty({rows});
        gemv(view, x.data_ptr<float>(), nullptr, plain.data_ptr<float>());
        const int before = threadCount();
        for (int threads : {1, 2, 3}) {
            setThreadCount(threads);
            auto y = torch::empty({rows});
            gemv(view, x.data_ptr<float>(), nullptr, y.data_ptr<float>(), [](float* v, int64_t n) {
                for (int64_t i = 0; i < n; ++i)
                    v[i] = v[i] * 2.f + 1000.f;
            });
            QVERIFY(torch::equal(y, plain * 2 + 1000));
        }
        setThreadCount(before);
    }

    // Each path's GELU against the tanh formula in double, over the values a layer
    // meets and the extremes (the scalar path loses bits to 1 + tanh near -1; the
    // vector paths' x / (1 + exp(-2u)) does not).
    void geluMatchesTheFormula() {
        std::vector<float> in;
        for (int i = -4000; i <= 4000; ++i)
            in.push_back(float(i) * 0.0031f);
        for (float v : {0.f, -0.f, 1e-30f, -1e-30f, 1e-6f, -1e-6f, 9.f, -9.f, 12.f, -12.f, 50.f,
                        -50.f, 1e20f, -1e20f, 3e38f, -3e38f})
            in.push_back(v);
        in.push_back(0.5f); // 8017 values: every path has a tail
        for (Isa path : baton::test::isaPaths()) {
            setIsa(path);
            auto y = in;
            geluTanh(y.data(), int64_t(y.size()));
            for (size_t i = 0; i < in.size(); ++i) {
                const double v = in[i];
                const double u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
                const double ref =
                    std::isfinite(u) ? 0.5 * v * (1 + std::tanh(u)) : (u > 0 ? v : 0.0);
                QVERIFY2(std::abs(y[i] - ref) <= 4e-7 * std::abs(v),
                         qPrintable(QString("%1: gelu(%2) = %3, expected %4")
                                        .arg(isaName(path))
                                        .arg(double(in[i]), 0, 'g', 9)
                                        .arg(double(y[i]), 0, 'g', 9)
                                        .arg(ref, 0, 'g', 9)));
            }
            // The same bits wherever a value sits in the array (the up-projection's rows
            // are split among threads at any multiple of four).
            std::vector<float> whole(in.begin() + 3990, in.begin() + 4027);
            auto alone = whole;
            geluTanh(whole.data(), int64_t(whole.size()));
            for (float& v : alone)
                geluTanh(&v, 1);
            QVERIFY2(std::memcmp(whole.data(), alone.data(), whole.size() * sizeof(float)) == 0,
                     isaName(path));
            float nan = std::numeric_limits<float>::quiet_NaN();
            geluTanh(&nan, 1);
            QVERIFY(std::isnan(nan));
            std::vector<float> nans(17, std::numeric_limits<float>::quiet_NaN());
            geluTanh(nans.data(), 17);
            QVERIFY(std::isnan(nans[0]) && std::isnan(nans[16]));
        }
    }

    // The read-bandwidth probe's sum (bench_gpt2): every path adds every value once,
    // whole vectors and tails alike, from any start (the probe's slices are aligned, a
    // caller's need not be).
    void readSumAddsEveryValue() {
        std::vector<float> x(1000);
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = float(int(i % 7) - 3) * 0.5f + (i == 500 ? 1000.f : 0.f);
        for (Isa path : baton::test::isaPaths()) {
            setIsa(path);
            for (size_t from : {size_t(0), size_t(1), size_t(13)})
                for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(128), size_t(129),
                                 size_t(300), size_t(987)}) {
                    double ref = 0;
                    for (size_t i = from; i < from + n; ++i)
                        ref += x[i];
                    QVERIFY2(
                        readSum(x.data() + from, int64_t(n)) == float(ref),
                        qPrintable(
                            QString("%1: %2 values from %3").arg(isaName(path)).arg(n).arg(from)));
                }
        }
        setIsa(bestIsa());
    }

    void bytesPerFormat() {
        const float w[6] = {1, 2, 3, 4, 5, 6};
        QCOMPARE(PackedMatrix::wrap(w, 2, 3).bytes(), size_t(24));
        QCOMPARE(PackedMatrix::pack(w, 2, 3, WeightFormat::F16).view().bytes(), size_t(12));
        QCOMPARE(PackedMatrix::pack(w, 2, 3, WeightFormat::BF16).view().bytes(), size_t(12));
        QCOMPARE(PackedMatrix::pack(w, 2, 3, WeightFormat::Int8).view().bytes(), size_t(6 + 8));
    }
};

QTEST_GUILESS_MAIN(TestWeightFormats)
#include "tst_weight_formats.moc"
