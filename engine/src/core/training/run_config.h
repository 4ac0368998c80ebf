// A training run's configuration on disk (OUT/run.json, read back by --resume), its
// checks, and the documents a run was given as text.
#pragma once

#include "baton/engine/training.h"

#include <string>

namespace baton::engine {

// run.json's text for a configuration.
std::string runConfigText(const TrainConfig& config);
// Reads OUT/run.json back (FileNotFound when there is none: nothing to resume).
Result<TrainConfig> readRunConfig(const std::string& outDir);
// Writes the documents given as text into OUT/documents/{train,validation} and adds
// those folders to the corpus and validation paths.
Result<void> writeDocuments(TrainConfig& config);

} // namespace baton::engine
