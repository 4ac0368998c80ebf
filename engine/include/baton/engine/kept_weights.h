// The converted weights kept on disk (keepConvertedWeightsIn, model.h): what the folder
// holds, and clearing it (baton-cli cache).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

struct KeptWeights {
    std::string path;     // the file
    std::string model;    // the model folder it was converted from ("" if unknown)
    std::string identity; // the model's content hash
    std::string format;   // "int8", "q4", "f16" or "bf16"
    int64_t bytes = 0;
    int64_t lastUsed = 0; // when a load last wrote or mapped it (seconds since 1970)
};

// The folder set by keepConvertedWeightsIn ("" when none) and its cap in bytes.
std::string keptWeightsFolder();
int64_t keptWeightsCap();
// The files in that folder, most recently used first (files that are not Baton's kept
// weights are left out).
std::vector<KeptWeights> keptWeights();
// Removes every kept file (a model that has one mapped keeps its pages until it is
// unloaded) and the temporary files of processes that died; returns the bytes freed.
int64_t clearKeptWeights();

} // namespace baton::engine
