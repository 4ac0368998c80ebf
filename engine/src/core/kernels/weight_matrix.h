// Weight matrices in the formats the CPU decoder reads (engine::WeightFormat):
// float32, float16, bfloat16, 8-bit blocks (every 32 consecutive weights of a row
// share one float scale: w = scale * q, q in [-127, 127], scale = max |w| / 127;
// quantizeInt8Rows in weight_kernels.h), and
// 4-bit blocks (32 weights, a float16 scale: kernels/q4_blocks.h).
// Matrix-vector products read each weight once and accumulate in float32, with
// AVX-512, AVX2 (+FMA, F16C) and plain C++ paths chosen at start-up. No torch here.
#pragma once

#include "baton/engine/model_info.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace baton::engine::cpu {

constexpr int64_t kInt8Block = 32;

// Bytes one weight takes in a format (Int8's block scales aside; Q4 holds two weights a
// byte and is never read by the weight: see MatrixView::bytes()).
constexpr size_t weightBytes(WeightFormat format) {
    return format == WeightFormat::F32                                  ? 4
           : format == WeightFormat::Int8 || format == WeightFormat::Q4 ? 1
                                                                        : 2;
}

// A [rows, cols] matrix in some format; does not own its memory. Row-major, or with
// `transposed` column-major: the bytes hold the columns one after another ([cols, rows]
// row-major, Hugging Face's Conv1D layout), so a checkpoint's mapped bytes can serve
// as the weights without a copy (F32, F16 and BF16 only).
struct MatrixView {
    WeightFormat format = WeightFormat::F32;
    const void* data = nullptr;    // rows * cols elements of the format (Q4: nibbles)
    const float* scales = nullptr; // Int8 only: [rows, blocksPerRow()]
    int64_t rows = 0, cols = 0;
    bool transposed = false;
    const uint16_t* q4Scales = nullptr; // Q4 only: [rows, blocksPerRow()] float16

    int64_t blocksPerRow() const { return (cols + kInt8Block - 1) / kInt8Block; }
    // Bytes one full read of the matrix streams (the weights and the scales).
    size_t bytes() const;
    // The same bytes seen as the row-major matrix they hold ([cols, rows] when
    // transposed; the view itself otherwise).
    MatrixView stored() const;
};

// A matrix converted to a format, owning its memory.
class PackedMatrix {
public:
    PackedMatrix() = default;
    // Converts float32 weights (round to nearest even for the 16-bit formats).
    static PackedMatrix pack(const float* w, int64_t rows, int64_t cols, WeightFormat format);
    // Shares an existing float32 matrix, no copy (format F32 only).
    static MatrixView wrap(const float* w, int64_t rows, int64_t cols, bool transposed = false);
    // A matrix over memory it does not own (a checkpoint's mapped weights, or converted
    // weights kept on disk): `keep` holds that memory for as long as this matrix lives.
    static PackedMatrix borrow(const MatrixView& view, std::shared_ptr<const void> keep);

    // A matrix whose tiles packTile() fills (the memory is not touched before).
    static PackedMatrix allocate(int64_t rows, int64_t cols, WeightFormat format);
    // Converts the float32 tile of rows [r0, r1) by columns [c0, c1), held row-major at
    // w (c1 - c0 wide), into those weights of this matrix: c0 is a multiple of
    // packColumnGranule(format), and so is c1 unless it is the width. Threads may fill
    // disjoint tiles at once.
    void packTile(const float* w, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

    MatrixView view() const;

private:
    WeightFormat m_format = WeightFormat::F32;
    int64_t m_rows = 0, m_cols = 0;
    std::unique_ptr<uint8_t[]> m_data;
    std::unique_ptr<float[]> m_scales;      // Int8 only
    std::unique_ptr<uint16_t[]> m_q4Scales; // Q4 only
    MatrixView m_borrowed;                  // set by borrow(): the memory m_keep holds
    std::shared_ptr<const void> m_keep;
};

// The columns a tile of PackedMatrix::packTile starts at a multiple of: a block (32)
// for Int8, a group of blocks (512) for Q4, a block for the others.
int64_t packColumnGranule(WeightFormat format);

// out[(r - r0) * cols + c] = the weight (r, c) as float32, for r in [r0, r1).
void unpackRows(const MatrixView& m, int64_t r0, int64_t r1, float* out);
// out[(r - r0) * (c1 - c0) + c - c0] = the weight (r, c) as float32, for r in [r0, r1)
// and c in [c0, c1), of an F32, F16 or BF16 matrix. A column-major matrix's tile is read
// down its columns, so a tile a few columns wide reads a few long stretches.
void unpackTile(const MatrixView& m, int64_t r0, int64_t r1, int64_t c0, int64_t c1, float* out);

// y[r] = dot(W[r, :], x) + b[r] for every row, on the decoder's worker team (the rows
// are split among threads; each row is computed by one thread in a fixed order, so
// the result does not depend on the team size). A transposed W is read in fixed chunks
// of 64 columns, each summed as p = fma(x[c], W(r, c), p) over its columns in order from
// 0: y[r] = b[r] + p_0 + p_1 + ..., added in chunk order (the same bits for any team). b may be
// null. `then`, when given, is an element-wise function applied to the thread's rows of y right
// after it computed them (within the same parallel step: then(y + r0, r1 - r0)).
using RowsThen = void (*)(float* y, int64_t n);
void gemv(const MatrixView& W, const float* x, const float* b, float* y, RowsThen then = nullptr);
// The same over rows [r0, r1) on the calling thread only.
void gemvRows(const MatrixView& W, const float* x, const float* b, float* y, int64_t r0,
              int64_t r1);

// y += a * x over n floats.
void axpy(float* y, const float* x, float a, int64_t n);

// The instruction sets the kernels have paths for.
enum class Isa { Scalar, Avx2, Avx512 };
const char* isaName(Isa isa);
Isa bestIsa(); // the best this CPU runs
Isa isa();     // the one in use
// Tests: selects a path (at most bestIsa(); a better one is lowered to it).
void setIsa(Isa isa);
// Whether the CPU has AVX512-BF16 and the AVX-512 path is in use: the decoder then
// multiplies BF16 weights with vdpbf16ps, and the batched paths (prefill, scoring)
// multiply F16 and BF16 weights in bf16 pairs (kernels/batched_products.h), about
// four times the float32 rate.
bool nativeBf16Products();

} // namespace baton::engine::cpu
