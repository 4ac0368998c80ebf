// The batched work's products in fixed blocks (model/fixed_blocks.h): each agrees
// with LibTorch's own operation, forward and backward, and gives the same bits with
// a team of one, two or three threads, where LibTorch's own operations do not. How
// fast the batched work runs on a busy machine is measured by tests/bench/run.sh busy.
#include "model/fixed_blocks.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <QtTest>

#include <cmath>
#include <functional>
#include <vector>

using namespace baton::engine;

namespace {

using Tensors = std::vector<torch::Tensor>;

// Runs fn with a LibTorch team of `threads` and returns what it returns.
Tensors withTeam(int threads, const std::function<Tensors()>& fn) {
    at::set_num_threads(threads);
    return fn();
}

bool sameBits(const Tensors& a, const Tensors& b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].defined() != b[i].defined() || (a[i].defined() && !torch::equal(a[i], b[i])))
            return false;
    return true;
}

double worst(const Tensors& a, const Tensors& b) {
    double w = 0;
    for (size_t i = 0; i < a.size(); ++i)
        w = std::max(w, (a[i] - b[i]).abs().max().item<double>());
    return w;
}

// Outputs and gradients of f(inputs) for a fixed random upstream gradient.
Tensors forwardBackward(const std::function<torch::Tensor(const Tensors&)>& f,
                        const Tensors& inputs) {
    Tensors leaves;
    for (const auto& t : inputs)
        leaves.push_back(t.detach().clone().requires_grad_(true));
    const auto y = f(leaves);
    torch::manual_seed(7);
    const auto up = torch::randn(y.sizes());
    (y * up).sum().backward();
    Tensors out = {y.detach()};
    for (const auto& l : leaves)
        out.push_back(l.grad());
    return out;
}

} // namespace

class TestFixedBlocks : public QObject {
    Q_OBJECT

    // One case: the block function and LibTorch's reference over the same inputs.
    void check(const char* what, const std::function<torch::Tensor(const Tensors&)>& ours,
               const std::function<torch::Tensor(const Tensors&)>& reference, const Tensors& inputs,
               double tolerance) {
        const auto one = withTeam(1, [&] { return forwardBackward(ours, inputs); });
        for (int threads : {2, 3}) {
            const auto many = withTeam(threads, [&] { return forwardBackward(ours, inputs); });
            QVERIFY2(sameBits(one, many),
                     qPrintable(QString("%1: a team of %2 changed the bits (by %3)")
                                    .arg(what)
                                    .arg(threads)
                                    .arg(worst(one, many))));
        }
        const auto ref = withTeam(1, [&] { return forwardBackward(reference, inputs); });
        const double w = worst(one, ref);
        QVERIFY2(w < tolerance, qPrintable(QString("%1: differs from LibTorch by %2 (tolerance %3)")
                                               .arg(what)
                                               .arg(w)
                                               .arg(tolerance)));
    }

private Q_SLOTS:
    void cleanup() { at::set_num_threads(1); }

    void linearMatchesTorchForAnyTeam_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("in");
        QTest::addColumn<int>("out");
        QTest::addColumn<bool>("bias");
        QTest::newRow("prefill-sized") << 300 << 256 << 768 << true;
        QTest::newRow("odd sizes") << 37 << 129 << 1001 << true;
        QTest::newRow("no bias, wide") << 64 << 96 << 5000 << false;
        QTest::newRow("one block (small)") << 3 << 16 << 40 << true;
        QTest::newRow("narrower than a block") << 2000 << 200 << 50 << true;
    }
    void linearMatchesTorchForAnyTeam() {
        QFETCH(int, rows);
        QFETCH(int, in);
        QFETCH(int, out);
        QFETCH(bool, bias);
        torch::manual_seed(3);
        Tensors inputs = {torch::randn({2, rows / 2 + 1, in}), torch::randn({out, in})};
        if (bias)
            inputs.push_back(torch::randn({out}));
        auto b = [&](const Tensors& t) { return bias ? t[2] : torch::Tensor(); };
        check(
            "linear", [&](const Tensors& t) { return blocks::linear(t[0], t[1], b(t)); },
            [&](const Tensors& t) { return torch::linear(t[0], t[1], b(t)); }, inputs, 1e-3);
    }

    void matmulMatchesTorchForAnyTeam() {
        torch::manual_seed(4);
        // Attention's shapes: [B, H, n, D] @ [B, H, D, n], keys given transposed.
        const Tensors attention = {torch::randn({2, 6, 200, 64}), torch::randn({2, 6, 200, 64})};
        check(
            "scores", [](const Tensors& t) { return blocks::matmul(t[0], t[1].transpose(-1, -2)); },
            [](const Tensors& t) { return torch::matmul(t[0], t[1].transpose(-1, -2)); }, attention,
            1e-3);
        // The pooling product: a plain matrix against a batch.
        const Tensors pooling = {torch::randn({4, 300}), torch::randn({3, 300, 256})};
        check(
            "pooling", [](const Tensors& t) { return blocks::matmul(t[0], t[1]); },
            [](const Tensors& t) { return torch::matmul(t[0], t[1]); }, pooling, 1e-3);
    }

    void layerNormMatchesTorchForAnyTeam() {
        torch::manual_seed(5);
        const Tensors inputs = {torch::randn({4, 500, 96}) * 3 + 1, torch::randn({96}),
                                torch::randn({96})};
        check(
            "layer norm",
            [](const Tensors& t) { return blocks::layerNorm(t[0], t[1], t[2], 1e-5); },
            [](const Tensors& t) { return torch::layer_norm(t[0], {96}, t[1], t[2], 1e-5); },
            inputs, 1e-3);
    }

    // GPT-2's tanh GELU: the one-token decoder's vector code, within a few ulps of
    // LibTorch's, with LibTorch's gradient. Odd sizes: blocks of several widths and tails.
    void geluMatchesTorchForAnyTeam() {
        torch::manual_seed(9);
        const Tensors inputs = {torch::randn({3, 401, 700}) * 3};
        check(
            "gelu", [](const Tensors& t) { return blocks::geluTanh(t[0]); },
            [](const Tensors& t) { return torch::gelu(t[0], "tanh"); }, inputs, 1e-5);
    }

    void sumOfSquaresIsExactForAnyTeam() {
        torch::manual_seed(8);
        for (const int64_t n : {int64_t(5), int64_t(70000), int64_t(9'000'001)}) {
            const auto t = torch::randn({n});
            const double reference = t.to(torch::kFloat64).square().sum().item<double>();
            double first = 0;
            for (int threads : {1, 2, 3}) {
                at::set_num_threads(threads);
                const double s = blocks::sumOfSquares(t);
                if (threads == 1)
                    first = s;
                QCOMPARE(s, first);
                QVERIFY2(std::abs(s - reference) <= 1e-6 * reference,
                         qPrintable(QString("%1 against %2").arg(s).arg(reference)));
            }
        }
    }

    // Without gradients the same functions take their forward-only paths.
    void inferenceGivesTheSameBitsAsTraining() {
        torch::manual_seed(6);
        const auto x = torch::randn({100, 128}), w = torch::randn({384, 128}),
                   b = torch::randn({384});
        const auto withGrad = forwardBackward(
            [](const Tensors& t) { return blocks::linear(t[0], t[1], t[2]); }, {x, w, b});
        const auto geluWithGrad =
            forwardBackward([](const Tensors& t) { return blocks::geluTanh(t[0]); }, {x});
        torch::NoGradGuard noGrad;
        QVERIFY(torch::equal(withGrad[0], blocks::linear(x, w, b)));
        QVERIFY(torch::equal(geluWithGrad[0], blocks::geluTanh(x)));
    }
};

QTEST_APPLESS_MAIN(TestFixedBlocks)
#include "tst_fixed_blocks.moc"
