// A run's checkpoints: OUT/checkpoints/step-N folders (a model folder, the
// optimizer's state, the progress), written atomically (LATEST moves last), the
// newest few kept.
#pragma once

#include "baton/engine/error.h"
#include "model/model_impl.h"
#include "training/optimizer.h"

#include <cstdint>
#include <string>

namespace baton::engine {

// Where a run is: saved in every checkpoint, restored by --resume.
struct RunProgress {
    int64_t step = 0, tokens = 0, epoch = 0, position = 0;
    int64_t nextValidation = 0;
    double bestVal = 0;
    bool haveBest = false;
    int sinceBest = 0;
    int64_t totalSteps = 0;
};

// The latest complete checkpoint's folder, or "" when there is none.
std::string latestCheckpoint(const std::string& outDir);
// Writes checkpoint step-<progress.step>, moves LATEST to it and keeps the newest
// `keep`; returns its folder.
Result<std::string> writeCheckpoint(const std::string& outDir, int keep, Model::Impl& model,
                                    const std::string& tokenizerDir, const AdamOptimizer& optimizer,
                                    const RunProgress& progress);
Result<RunProgress> readProgress(const std::string& checkpointDir);

} // namespace baton::engine
