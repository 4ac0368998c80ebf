// A loaded GPT-2 checkpoint (optionally with Baton's recurrence module) and its
// tokenizer. Loading validates every file before allocating anything.
//
// Thread-safety: nothing that uses a loaded Model changes it, so several threads may
// read one at once (each with its own Generator). The app, the server and the CLI still
// run one job at a time on a model, through its queue (model_queue.h): a job gets the
// machine's memory bandwidth to itself.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/model_info.h"
#include "baton/engine/tokenizer.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace baton::engine {

// Call once at start-up: sets LibTorch's and Baton's kernels' thread counts to the
// machine's cores (LibTorch defaults to one thread on some machines).
void initializeRuntime(int threads = 0);
// Where the content hash that names a loaded model is remembered by its files'
// identities, so that a model opened again is named without reading all its bytes
// (empty, the default: nothing is remembered). The app and baton-cli keep them in
// $XDG_CACHE_HOME/baton/model-ids.
void rememberModelIdentitiesIn(const std::string& folder);
// Where the weights a load converts (to int8 or q4, or to f16 or bf16 from a file stored
// in another dtype) are kept, so that the same model loaded again in the same format maps
// them instead of converting again (empty, the default: nowhere). A kept file is named
// by the model's content hash, so it is only found when that hash is remembered
// (rememberModelIdentitiesIn). The least recently used files are removed to keep the
// folder under maxBytes. The app and baton-cli keep them in
// $XDG_CACHE_HOME/baton/converted-weights, 8 GiB at most.
void keepConvertedWeightsIn(const std::string& folder, uint64_t maxBytes = uint64_t(8) << 30);
// The versions of the libraries the engine runs on, e.g. "LibTorch 1.13.1".
std::string runtimeVersions();

struct LoadOptions {
    WeightFormat weights = WeightFormat::F32;
    std::string device = "cpu"; // "cpu", "cuda" or "cuda:N" (needs a CUDA LibTorch)
    // Weights stored in the format they are held in (an F32 file with f32 weights, F16
    // with f16, BF16 with bf16) are the memory-mapped file's pages themselves, no copy
    // (ModelInfo::mappedBytes says how much). The file must then not be overwritten in
    // place while the model lives; replacing it by a rename, as Baton saves, is safe.
    // BF16 weights are copied anyway on a CPU with native bf16 products (they decode
    // faster from Baton's own layout). Training loads with false: it writes its weights.
    // With true, converted weights kept by an earlier load are mapped too
    // (keepConvertedWeightsIn); with false, nothing is kept or mapped.
    bool mapWeights = true;
    // A recurrence adapter folder (baton-cli train --adapter) to load onto this model:
    // it must be the baseline model the adapter was trained on (refused otherwise).
    std::string adapter;
    CancelToken cancel;
    // Called with the fraction loaded (0..1); return false to cancel.
    std::function<bool(double)> progress;
};

// What a recurrence adapter's adapter.json names as its base.
struct AdapterBase {
    std::string identity; // the base model's identity (ModelInfo::identity)
    std::string name;     // its folder's name when the adapter was made, for messages
};
// Reads an adapter folder's adapter.json (an error if the folder is not an adapter).
Result<AdapterBase> readAdapterBase(const std::string& folder);

// What a model folder holds, read from its config.json and baton.json without
// loading any weights (the app's model list shows it).
struct ModelFolderSummary {
    std::string path;
    bool present = false; // config.json exists and describes a GPT-2 model
    std::string error;    // why not, or why baton.json could not be read
    ModelConfig config;
    std::optional<RecurrenceConfig> recurrence; // set for a recurrent checkpoint
    int64_t bytes = 0;                          // the files in the folder
};
// With an adapter folder: the base folder's summary with the adapter's recurrence
// (read against the base's shape) and the adapter's size on disk; present is false
// when either cannot be read.
ModelFolderSummary probeModelFolder(const std::string& folder, const std::string& adapter = {});

class Model {
public:
    static Result<std::shared_ptr<Model>> load(const std::string& folder,
                                               const LoadOptions& options = {});
    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const ModelInfo& info() const;
    const ModelConfig& config() const { return info().config; }
    std::shared_ptr<const Tokenizer> tokenizer() const;
    // True for a recurrent checkpoint (baton.json + recurrence.safetensors).
    bool recurrent() const { return info().recurrence.has_value(); }

    // The logits at every position of one window of ids with no state: ids.size() x
    // vocab floats, row-major. ids.size() must be in [1, n_positions].
    Result<std::vector<float>> windowLogits(const std::vector<int32_t>& ids) const;

    class Impl;

private:
    friend struct ModelAccess; // the engine's torch code (model/model_impl.h)
    explicit Model(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace baton::engine
