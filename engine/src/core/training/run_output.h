// What a finished run leaves: OUT/model, a whole model folder (the best-validation
// model when validation ran, else the last), or with TrainConfig::adapter OUT/adapter,
// the recurrence module alone naming the base it was trained on.
#pragma once

#include "baton/engine/model.h"
#include "baton/engine/training.h"

#include <memory>
#include <string>

namespace baton::engine {

// The output's folder (written by rank 0; the other ranks report it).
std::string runOutputDir(const TrainConfig& config);

// Writes the output from `last` (its tokenizer files in lastTokenizerDir) or, when
// bestDir is not empty, from the best-validation model saved there.
Result<void> writeRunOutput(const TrainConfig& config, const std::shared_ptr<Model>& last,
                            const std::string& lastTokenizerDir, const std::string& bestDir);

} // namespace baton::engine
