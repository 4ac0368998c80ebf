// Weights converted while a model loads (to int8 or q4, or to f16 or bf16 from a file
// stored in another dtype) kept on disk, so that the same model loaded again in the same
// format maps them instead of converting every matrix again: GPT-2 XL's 3.1 GB
// checkpoint takes seconds to convert to int8, its 1.9 GB of converted weights a
// fraction of a second to map.
//
// One safetensors file per model and format, named by the checkpoint's content hash
// (checkpoint.cpp; remembered by identity_memo.h, which is what lets a load find it
// before reading the checkpoint) and the format. Each matrix is stored as the decoder
// holds it (row-major; Int8's and Q4's scales as tensors of their own, named
// "<matrix>.scales"), and the file's metadata names the model, the format and the
// layout. A file that cannot be opened, names another model, format or layout, lacks a
// matrix or holds one in another shape, dtype or alignment is removed, and the weights
// are converted again. Files are written whole to a temporary file and renamed into
// place; the least recently used are removed to keep the folder under its cap, and
// temporary files left by a process that died are removed too. Torch-free.
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/kept_weights.h"
#include "kernels/weight_matrix.h"
#include "model/safetensors.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton::engine {

// Where converted weights are kept, and the most bytes the folder may hold; an empty
// folder (the default) keeps none. (keptWeightsFolder() reads it back.)
void setConvertedWeightsFolder(const std::string& folder, uint64_t maxBytes);

// A matrix a load converts: its name (Gpt2Impl::packableWeights) and shape.
struct ConvertedShape {
    std::string name;
    int64_t rows = 0, cols = 0;
};

// One model's converted weights in one format, mapped.
class ConvertedWeights {
public:
    // The kept file of the checkpoint `identity` (its content hash) in `format`, when it
    // holds every matrix of `shapes` as this build lays it out; nullopt otherwise (a file
    // that does not qualify is removed). A file found is marked as just used.
    static std::optional<ConvertedWeights> open(const std::string& identity, WeightFormat format,
                                                const std::vector<ConvertedShape>& shapes);
    // The matrix `name` (one of the shapes given to open), its memory the file's pages.
    cpu::PackedMatrix matrix(const std::string& name) const;

private:
    SafetensorsFile m_file;
    WeightFormat m_format = WeightFormat::F32;
    std::map<std::string, int64_t> m_cols; // each matrix's width (Q4's bytes round it up)
};

// Keeps `matrices` (all in `format`, none borrowed from a checkpoint) as the converted
// weights of the checkpoint `identity`, loaded from the folder `model` (for listings). The least
// recently used files are removed first so that the folder stays under its cap with this one in it.
// Nothing is written (an error says why) when no folder is set, the file alone is over the cap, or
// less than 1 GiB of the disk would be left free. `progress` as writeSafetensors takes it.
Result<void>
keepConvertedWeights(const std::string& identity, const std::string& model, WeightFormat format,
                     const std::vector<std::pair<std::string, const cpu::PackedMatrix*>>& matrices,
                     const std::function<bool(double)>& progress = {});

// The bytes keepConvertedWeights writes for these shapes (the file's data).
uint64_t convertedBytes(WeightFormat format, const std::vector<ConvertedShape>& shapes);

} // namespace baton::engine
