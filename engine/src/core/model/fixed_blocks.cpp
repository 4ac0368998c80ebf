#include "model/fixed_blocks.h"

#include "kernels/batched_products.h"
#include "kernels/core_budget.h"
#include "kernels/vector_ops.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <vector>

namespace baton::engine::blocks {

namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Products of fewer multiply-adds are one block: waking the team costs more.
constexpr int64_t kSmallProduct = int64_t(1) << 18;

// Runs fn(i) for every i in [0, count) on the calling thread's team. Each fn is one
// single-threaded product: a BLAS call inside an OpenMP parallel region runs on one
// thread, and a team of one runs everything on the calling thread with one thread.
// The loop has at least two iterations so that a team of two or more always opens a
// region (LibTorch runs a one-iteration loop inline, where BLAS would use the team).
// The products are never recorded for autograd (the team's threads have their own
// grad mode; the backward passes below are written out).
template <class Fn>
void forEach(int64_t count, const Fn& fn) {
    at::parallel_for(0, std::max<int64_t>(count, 2), 1, [&](int64_t begin, int64_t end) {
        const torch::NoGradGuard noGrad;
        for (int64_t i = begin; i < std::min(end, count); ++i)
            fn(i);
    });
}

// Splits [0, size) into blocks whose width depends only on size, the work and `parts`
// (at most that many blocks, each a multiple of 64 wide) and runs fn(start, length)
// per block.
template <class Fn>
void forBlocks(int64_t size, int64_t work, const Fn& fn, int64_t parts = 16) {
    if (size <= 0)
        return;
    const int64_t width = work < kSmallProduct ? size : ((size + parts - 1) / parts + 63) / 64 * 64;
    const int64_t count = (size + width - 1) / width;
    forEach(count, [&](int64_t b) {
        const int64_t start = b * width;
        fn(start, std::min(width, size - start));
    });
}

// forBlocks over the n values of element-wise work (a value costs about as much as 32
// multiply-adds of a product).
template <class Fn>
void forElements(int64_t n, const Fn& fn) {
    forBlocks(n, n * 32, fn);
}

bool needsGrad(std::initializer_list<Tensor> ts) {
    if (!torch::GradMode::is_enabled())
        return false;
    return std::any_of(ts.begin(), ts.end(),
                       [](const Tensor& t) { return t.defined() && t.requires_grad(); });
}

// y [rows, out] = x [rows, in] W^T (+ bias) for x float32 contiguous, with Baton's own
// products of W as it is held (kernels/batched_products.h), in blocks of output columns.
Tensor productAsHeld(const Tensor& x, const cpu::MatrixView& w, const Tensor& bias) {
    const int64_t rows = x.size(0), steps = cpu::activationWords(w.format, w.cols);
    auto xs = torch::empty({rows, steps}, torch::kInt32);
    auto* xp = reinterpret_cast<uint32_t*>(xs.data_ptr<int32_t>());
    const float* xf = x.data_ptr<float>();
    forBlocks(rows, rows * w.cols, [&](int64_t r, int64_t n) {
        cpu::prepareActivations(w.format, xf + r * w.cols, n, w.cols, xp + r * steps);
    });
    const Tensor b = bias.defined() ? bias.detach().to(torch::kFloat32).contiguous() : Tensor();
    const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
    auto y = torch::empty({rows, w.rows}, torch::kFloat32);
    float* yp = y.data_ptr<float>();
    // (Weights read in place: one block per thread, each column's rows read in one stretch.)
    forBlocks(
        w.rows, rows * w.cols * w.rows,
        [&](int64_t c, int64_t n) {
            cpu::batchedProductRows(w, xp, rows, bp, yp, w.rows, c, c + n);
        },
        cpu::readsInPlace(w, rows) ? std::max(2, at::get_num_threads()) : 16);
    return y;
}

// y [rows, out] = x [rows, in] W^T (+ bias), in blocks of output columns: Baton's own
// float32 products where the CPU runs them (the same in training and inference, so
// both compute the same bits), else LibTorch's. W is row-major or the transposed view
// of a row-major block.
Tensor linearForward(const Tensor& x, const Tensor& w, const Tensor& bias) {
    if (x.scalar_type() == torch::kFloat32 && cpu::batchedProducts(WeightFormat::F32))
        if (const auto v = heldView(w))
            return productAsHeld(x.contiguous(), *v, bias);
    const int64_t rows = x.size(0), in = x.size(1), out = w.size(0);
    auto y = torch::empty({rows, out}, x.options());
    forBlocks(out, rows * in * out, [&](int64_t c, int64_t n) {
        auto yc = y.narrow(1, c, n);
        const auto wc = w.narrow(0, c, n).t();
        if (bias.defined())
            at::addmm_out(yc, bias.narrow(0, c, n), x, wc);
        else
            at::mm_out(yc, x, wc);
    });
    return y;
}

// No bias is passed as an empty tensor (autograd functions take no undefined inputs).
struct LinearFn : torch::autograd::Function<LinearFn> {
    static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& w,
                          const Tensor& bias) {
        ctx->save_for_backward({x, w});
        return linearForward(x, w, bias.numel() > 0 ? bias : Tensor());
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const Tensor& x = saved[0];
        const Tensor& w = saved[1];
        const Tensor dy = grads[0].contiguous();
        const int64_t rows = x.size(0), in = x.size(1), out = w.size(0);
        Tensor dx, dw, db;
        if (ctx->needs_input_grad(0)) { // dx = dy W, in blocks of input columns
            dx = torch::empty_like(x);
            forBlocks(in, rows * in * out, [&](int64_t c, int64_t n) {
                auto part = dx.narrow(1, c, n);
                at::mm_out(part, dy, w.narrow(1, c, n));
            });
        }
        if (ctx->needs_input_grad(1)) { // dW = dy^T x, in blocks of output rows
            dw = torch::empty_like(w);
            forBlocks(out, rows * in * out, [&](int64_t r, int64_t n) {
                auto part = dw.narrow(0, r, n);
                at::mm_out(part, dy.narrow(1, r, n).t(), x);
            });
        }
        if (ctx->needs_input_grad(2) && out > 0)
            db = dy.sum(0);
        return {dx, dw, db};
    }
};

// The matrix `i` of a tensor with `batchDims` leading batch dimensions.
Tensor item(const Tensor& t, int64_t i, int64_t batchDims) {
    std::vector<int64_t> index(static_cast<size_t>(batchDims));
    for (int64_t d = batchDims - 1; d >= 0; --d) {
        index[size_t(d)] = i % t.size(d);
        i /= t.size(d);
    }
    Tensor m = t;
    for (const int64_t k : index)
        m = m.select(0, k);
    return m;
}

// c = a @ b per matrix, for a and b with the same batch shape.
Tensor matmulForward(const Tensor& a, const Tensor& b) {
    const int64_t batchDims = a.dim() - 2;
    auto shape = a.sizes().vec();
    shape.back() = b.size(-1);
    auto c = torch::empty(shape, a.options());
    int64_t count = 1;
    for (int64_t d = 0; d < batchDims; ++d)
        count *= a.size(d);
    forEach(count, [&](int64_t i) {
        auto ci = item(c, i, batchDims);
        at::mm_out(ci, item(a, i, batchDims), item(b, i, batchDims));
    });
    return c;
}

// The batch shape both operands broadcast to, and the operands expanded to it.
std::pair<Tensor, Tensor> broadcastBatch(const Tensor& a, const Tensor& b) {
    const auto batchA = a.sizes().slice(0, size_t(a.dim() - 2));
    const auto batchB = b.sizes().slice(0, size_t(b.dim() - 2));
    auto batch = at::infer_size(batchA, batchB);
    auto shapeA = batch, shapeB = batch;
    shapeA.insert(shapeA.end(), {a.size(-2), a.size(-1)});
    shapeB.insert(shapeB.end(), {b.size(-2), b.size(-1)});
    return {a.expand(shapeA), b.expand(shapeB)};
}

struct MatmulFn : torch::autograd::Function<MatmulFn> {
    static Tensor forward(AutogradContext* ctx, const Tensor& a, const Tensor& b) {
        ctx->save_for_backward({a, b});
        const auto [ea, eb] = broadcastBatch(a, b);
        return matmulForward(ea, eb);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const auto [ea, eb] = broadcastBatch(saved[0], saved[1]);
        const Tensor dc = grads[0];
        Tensor da, db;
        if (ctx->needs_input_grad(0))
            da = at::sum_to(matmulForward(dc, eb.transpose(-1, -2)), saved[0].sizes());
        if (ctx->needs_input_grad(1))
            db = at::sum_to(matmulForward(ea.transpose(-1, -2), dc), saved[1].sizes());
        return {da, db};
    }
};

struct LayerNormFn : torch::autograd::Function<LayerNormFn> {
    static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& weight,
                          const Tensor& bias, double eps) {
        const auto [y, mean, rstd] = at::native_layer_norm(x, {x.size(-1)}, weight, bias, eps);
        ctx->save_for_backward({x, weight, bias, mean, rstd});
        return y;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto s = ctx->get_saved_variables();
        const Tensor &x = s[0], &weight = s[1], &bias = s[2], &mean = s[3], &rstd = s[4];
        const Tensor dy = grads[0].contiguous();
        const int64_t n = x.size(-1);
        Tensor dx, dw, db;
        if (ctx->needs_input_grad(0)) // one row per thread: the same bits for any team
            dx = std::get<0>(at::native_layer_norm_backward(dy, x, {n}, mean, rstd, weight, bias,
                                                            {true, false, false}));
        if (ctx->needs_input_grad(1)) {
            auto shape = x.sizes().vec();
            shape.back() = 1;
            const auto xhat = (x - mean.view(shape)) * rstd.view(shape);
            dw = (dy * xhat).reshape({-1, n}).sum(0);
        }
        if (ctx->needs_input_grad(2))
            db = dy.reshape({-1, n}).sum(0);
        return {dx, dw, db, Tensor()};
    }
};

// y = GELU(x) with the tanh approximation: the forward is the one-token decoder's
// vector code (cpu::geluTanh) in blocks shared among the team (a value's result does
// not depend on the split), so a prefill and the decoder compute the same function.
// The backward is LibTorch's, in the same blocks: its vector code leaves the tail of a
// thread's range to scalar code that rounds differently, so LibTorch's own split by
// the team's size changed the bits.
Tensor geluForward(const Tensor& x) {
    const Tensor in = x.contiguous();
    auto y = torch::empty_like(in);
    const float* from = in.data_ptr<float>();
    float* to = y.data_ptr<float>();
    const int64_t n = in.numel();
    forElements(n, [&](int64_t start, int64_t length) {
        std::copy(from + start, from + start + length, to + start);
        cpu::geluTanh(to + start, length);
    });
    return y;
}

struct GeluFn : torch::autograd::Function<GeluFn> {
    static Tensor forward(AutogradContext* ctx, const Tensor& x) {
        ctx->save_for_backward({x});
        return geluForward(x);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const Tensor x = ctx->get_saved_variables()[0].contiguous().view(-1);
        const Tensor dy = grads[0].contiguous().view(-1);
        auto dx = torch::empty_like(x);
        const int64_t n = x.numel();
        forElements(n, [&](int64_t start, int64_t length) {
            auto part = dx.narrow(0, start, length);
            at::gelu_backward_out(part, dy.narrow(0, start, length), x.narrow(0, start, length),
                                  "tanh");
        });
        return {dx.view(grads[0].sizes())};
    }
};

} // namespace

void followThreadBudget() {
    const int n = cpu::currentThreads();
    if (at::get_num_threads() != n)
        at::set_num_threads(n);
}

// A weight as the products read it without a copy: row-major, or the transposed view
// of a row-major block (a Conv1D weight shared with a mapped checkpoint).
static Tensor rowsOrColumns(const Tensor& w) {
    return w.is_contiguous() || w.t().is_contiguous() ? w : w.contiguous();
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias) {
    if (!ownKernels(x))
        return torch::linear(x, w, bias);
    auto shape = x.sizes().vec();
    shape.back() = w.size(0);
    const auto x2 = x.reshape({-1, x.size(-1)}).contiguous();
    const auto y = needsGrad({x, w, bias})
                       ? LinearFn::apply(x2, w, bias.defined() ? bias : torch::empty({0}))
                       : linearForward(x2, rowsOrColumns(w), bias);
    return y.view(shape);
}

std::optional<cpu::MatrixView> heldView(const Tensor& w) {
    if (w.dim() != 2 || w.scalar_type() != torch::kFloat32 || !w.device().is_cpu())
        return std::nullopt;
    // The transposed view of a row-major [cols, rows] block: a Conv1D weight shared with
    // the checkpoint's mapped bytes.
    const bool transposed =
        !w.is_contiguous() && w.size(0) > 1 && w.stride(0) == 1 && w.stride(1) == w.size(0);
    if (!transposed && !w.is_contiguous())
        return std::nullopt;
    return cpu::PackedMatrix::wrap(w.data_ptr<float>(), w.size(0), w.size(1), transposed);
}

Tensor packedLinear(const Tensor& x, const cpu::MatrixView& w, const Tensor& bias) {
    TORCH_CHECK(x.size(-1) == w.cols && x.device().is_cpu() && !needsGrad({x, bias}),
                "packedLinear: a CPU input of the matrix's width, without gradients");
    auto shape = x.sizes().vec();
    shape.back() = w.rows;
    const auto x2 = x.reshape({-1, w.cols}).to(torch::kFloat32).contiguous();
    return productAsHeld(x2, w, bias).view(shape);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
    if (!ownKernels(a))
        return torch::matmul(a, b);
    TORCH_CHECK(a.dim() >= 2 && b.dim() >= 2, "blocks::matmul needs matrices");
    if (needsGrad({a, b}))
        return MatmulFn::apply(a, b);
    const auto [ea, eb] = broadcastBatch(a, b);
    return matmulForward(ea, eb);
}

double sumOfSquares(const Tensor& t) {
    // Rows of a width that depends only on the size, each summed by one thread, then
    // the row sums (fewer than LibTorch's grain of 32768: one thread) in double.
    const auto flat = t.detach().reshape({-1}).to(torch::kFloat32);
    const int64_t n = flat.numel();
    const int64_t width = std::max<int64_t>(1024, (n + 8191) / 8192);
    const int64_t rows = n / width;
    double sum = 0;
    if (rows > 0)
        sum += flat.narrow(0, 0, rows * width)
                   .view({rows, width})
                   .square()
                   .sum(1)
                   .to(torch::kFloat64)
                   .sum()
                   .item<double>();
    if (const int64_t rest = n - rows * width; rest > 0)
        sum += flat.narrow(0, rows * width, rest).to(torch::kFloat64).square().sum().item<double>();
    return sum;
}

Tensor geluTanh(const Tensor& x) {
    if (!ownKernels(x) || x.scalar_type() != torch::kFloat32)
        return torch::gelu(x, "tanh");
    if (!needsGrad({x}))
        return geluForward(x);
    return GeluFn::apply(x);
}

Tensor layerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
    if (!ownKernels(x) || !needsGrad({x, weight, bias}))
        return torch::layer_norm(x, {x.size(-1)}, weight, bias, eps);
    return LayerNormFn::apply(x, weight, bias, eps);
}

} // namespace baton::engine::blocks
