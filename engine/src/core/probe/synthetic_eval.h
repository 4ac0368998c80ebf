// The synthetic task's evaluation, shared by its training run (synthetic.cpp) and
// evaluateSyntheticModel (synthetic_eval.cpp).
#pragma once

#include "baton/engine/synthetic.h"
#include "model/model_impl.h"

namespace baton::engine {

// The windows an evaluation's sequences have: `windows`, or 0 for the task's largest
// distance + 2.
int evalWindowsOf(const SyntheticTask& task, int windows);

// Accuracy by distance on `sequences` fresh sequences of `windows` windows from `seed`:
// a recurrent model with its state on and off (reading the module's caches: refresh
// them after a training step), a baseline as it is.
SyntheticEvaluation evaluateSynthetic(Model::Impl& m, const SyntheticTask& task, int sequences,
                                      int windows, uint64_t seed);

// Freezes the weights and refreshes the module's caches, for evaluation.
void setForInference(Model::Impl& m);

} // namespace baton::engine
