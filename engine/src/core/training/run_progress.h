// Where a training run is, read back from its folder: OUT/LATEST names the newest
// complete checkpoint (OUT/checkpoints/step-N), whose trainer.json holds the progress.
// Torch-free (checkpoints.h writes them; the fuzzing build reads them).
#pragma once

#include "baton/engine/error.h"

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

// A checkpoint's folder name for a step: "step-000000042".
std::string checkpointName(int64_t step);
// Whether a name is one checkpointName writes (LATEST may name nothing else: no path).
bool isCheckpointName(const std::string& name);

// The latest complete checkpoint's folder, or "" when there is none (or LATEST names
// something that is not a checkpoint of this run).
std::string latestCheckpoint(const std::string& outDir);

std::string progressText(const RunProgress& progress);
Result<RunProgress> readProgress(const std::string& checkpointDir);

} // namespace baton::engine
