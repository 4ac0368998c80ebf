// A curriculum over the windows per training sequence (the recurrent-memory
// literature's recipe), shared by text runs (training.h: TrainConfig::curriculum) and
// the synthetic task's runs (synthetic.h): stage s trains on sequences of
// curriculum[s] windows, with a share of each batch taking an earlier stage's length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

// The windows of each of `batch` sequences of a step (1-based) in `stage`: without a
// curriculum `windows` for all; else the stage's, the first floor(mixShorter * batch)
// sequences an earlier stage's (drawn uniformly from the seed and the step) once past
// the first stage.
std::vector<int> curriculumWindows(const std::vector<int>& curriculum, int windows, int stage,
                                   double mixShorter, int64_t batch, uint64_t seed, int64_t step);

// The stage of a text run's step after `done` steps, stages of `stageSteps` steps each
// (the last one to the end); 0 without a curriculum.
int curriculumStage(const std::vector<int>& curriculum, int64_t stageSteps, int64_t done);

// What a text run says before its step done + 1 when that step starts a stage, or
// starts the run (or its resumption) inside one: "curriculum: sequences of W windows from
// step S"; "" otherwise and without a curriculum.
std::string curriculumNotice(const std::vector<int>& curriculum, int64_t stageSteps, int64_t done,
                             bool firstOfRun);

// Why a curriculum cannot train sequences of `windows` windows ("" when it can): its
// stages must rise from 1 or more to `windows`; mixShorter is a share in [0, 1] and
// needs a curriculum.
std::string curriculumProblem(const std::vector<int>& curriculum, int windows, double mixShorter);

} // namespace baton::engine
