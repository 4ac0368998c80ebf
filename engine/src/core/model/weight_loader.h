// Turning a checkpoint's stored tensors into the model's weights, on the decoder's
// worker team: float32 rows (Hugging Face's Conv1D weights transposed on the way), or
// straight into a packed format (--weights f16|bf16|int8|q4) a tile at a time (a
// Conv1D weight in tiles a few columns wide, read down its stored columns), so that no
// float32 copy of a whole matrix is ever made. No torch here.
#pragma once

#include "kernels/weight_matrix.h"
#include "model/safetensors.h"

#include <cstdint>

namespace baton::engine {

// A stored tensor seen as the [rows, cols] matrix the model holds (a vector is one
// row). `transposed`: the bytes hold [cols, rows] (a Conv1D weight).
struct StoredMatrix {
    const unsigned char* data = nullptr;
    StDtype dtype = StDtype::F32; // F32, F16 or BF16
    int64_t rows = 0, cols = 0;
    bool transposed = false;
};

// The weight format that holds a stored dtype's values as they are (F32, F16, BF16).
WeightFormat formatOf(StDtype dtype);
// The whole matrix as float32 into out (rows * cols floats), on the worker team.
void loadFloat(const StoredMatrix& m, float* out);
// The whole matrix in `format`, on the worker team.
cpu::PackedMatrix loadPacked(const StoredMatrix& m, WeightFormat format);

} // namespace baton::engine
