// The model's batched work (prefill, scoring, evaluation, training) with results that
// do not depend on how many threads compute them.
//
// A desktop app shares its machine, so the batched work follows the thread budget
// (kernels/core_budget.h) like the one-token decoder does: LibTorch's OpenMP team is
// sized before every forward pass by the cores other programs leave free. A team
// that size-shifts must not change the bits: scores, seeded texts and resumed
// training runs may not depend on what else the machine is doing. Most of LibTorch's
// CPU kernels give every output element to one thread in a fixed order (elementwise
// ops, softmax, layer norm forward, embedding, cross entropy, sums along a dimension,
// AdamW). Five do not, measured with 1 and 2 threads: BLAS matrix products (OpenBLAS
// splits them by thread count, differences of 1e-5 in a product of 768 terms),
// batched products, layer norm's weight gradients (one partial sum per thread), sums
// over a whole large tensor (the gradient norm), and the tanh GELU's gradient (the
// tail of each thread's range goes through scalar code that rounds differently from
// the vector code, differences of 1e-7). Those five are computed here in
// blocks whose boundaries depend only on the shapes: each block is one single-threaded
// product, the blocks are shared among the team's threads, so any team size writes the
// same bits.
//
// Tensors on another device (CUDA) use LibTorch's own operations. All functions
// support autograd (blocked backward passes too).
#pragma once

#include "kernels/weight_matrix.h"

#include <torch/types.h>

#include <optional>

namespace baton::engine::blocks {

// The one switch between Baton's own CPU kernels (these fixed blocks, the packed
// F16/BF16/int8 weights, the one-token decoder with its AVX2/AVX-512 products and
// worker team, the thread budget) and LibTorch's own operations: true on the CPU only.
// Everything else (CUDA) takes LibTorch's path; no other code asks for the device.
inline bool ownKernels(const torch::Device& device) {
    return device.is_cpu();
}
inline bool ownKernels(const torch::Tensor& t) {
    return ownKernels(t.device());
}

// Sizes the calling thread's LibTorch team by the thread budget (cpu::currentThreads;
// the cap alone when adaptive threads are off). Cheap when the size is unchanged.
void followThreadBudget();

// x W^T (+ bias): x [..., in], W [out, in] float32. bias may be undefined. Blocks of
// output columns. The forward product is Baton's own (kernels/batched_products.h) on
// an AVX-512 CPU, LibTorch's otherwise; the backward products are LibTorch's.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& bias);

// x W^T (+ bias) for a matrix that cpu::batchedProducts() multiplies as it is held
// (kernels/batched_products.h): x [..., in] on the CPU is prepared once (as the
// format's product steps read it), and blocks of output columns (as linear's) are
// shared among the team, each converting its weights 32 rows at a time. Float32
// result; no autograd (for inference).
torch::Tensor packedLinear(const torch::Tensor& x, const cpu::MatrixView& w,
                           const torch::Tensor& bias);

// A float32 CPU matrix [rows, cols] as the kernels read it, without a copy: row-major,
// or the transposed view of a row-major [cols, rows] block (a Conv1D weight shared with
// a mapped checkpoint); nullopt for any other layout or type.
std::optional<cpu::MatrixView> heldView(const torch::Tensor& w);

// a @ b for a [..., n, k] and b [..., k, m] with broadcast batch dimensions (a plain
// [n, k] matrix broadcasts too): one block per matrix of the batch.
torch::Tensor matmul(const torch::Tensor& a, const torch::Tensor& b);

// The sum of squares of all elements, accumulated in double in a fixed order (a
// LibTorch sum over a whole large tensor splits by thread count).
double sumOfSquares(const torch::Tensor& t);

// torch::gelu(x, "tanh") (GPT-2's GELU); on the CPU in float32 the forward is the
// one-token decoder's (kernels/vector_ops.h: within a few ulps of LibTorch's), in
// blocks shared among the team, with LibTorch's backward.
torch::Tensor geluTanh(const torch::Tensor& x);

// torch::layer_norm over the last dimension, with the weight and bias gradients summed
// along rows in a fixed order.
torch::Tensor layerNorm(const torch::Tensor& x, const torch::Tensor& weight,
                        const torch::Tensor& bias, double eps);

} // namespace baton::engine::blocks
