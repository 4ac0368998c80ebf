// A run's checkpoints: OUT/checkpoints/step-N folders (a model folder, the
// optimizer's state, the progress), written atomically (LATEST moves last), the
// newest few kept.
#pragma once

#include "baton/engine/error.h"
#include "model/model_impl.h"
#include "training/optimizer.h"
#include "training/run_progress.h"

#include <cstdint>
#include <string>

namespace baton::engine {

// Writes checkpoint step-<progress.step>, moves LATEST to it and keeps the newest
// `keep`; returns its folder.
Result<std::string> writeCheckpoint(const std::string& outDir, int keep, Model::Impl& model,
                                    const std::string& tokenizerDir, const AdamOptimizer& optimizer,
                                    const RunProgress& progress);

} // namespace baton::engine
