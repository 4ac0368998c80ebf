#include "training/curriculum.h"

#include "util/hash.h"

#include <algorithm>

namespace baton::engine {

std::vector<int> curriculumWindows(const std::vector<int>& curriculum, int windows, int stage,
                                   double mixShorter, int64_t batch, uint64_t seed, int64_t step) {
    if (curriculum.empty())
        return std::vector<int>(size_t(batch), windows);
    std::vector<int> out(size_t(batch), curriculum[size_t(stage)]);
    const int64_t shorter = stage > 0 ? int64_t(mixShorter * double(batch)) : 0;
    for (int64_t b = 0; b < shorter; ++b)
        out[size_t(b)] = curriculum[size_t(
            mixSeeds(mixSeeds(seed ^ 0x5107ULL, uint64_t(step)), uint64_t(b)) % uint64_t(stage))];
    return out;
}

int curriculumStage(const std::vector<int>& curriculum, int64_t stageSteps, int64_t done) {
    if (curriculum.empty())
        return 0;
    return int(
        std::min<int64_t>(int64_t(curriculum.size()) - 1, done / std::max<int64_t>(1, stageSteps)));
}

std::string curriculumNotice(const std::vector<int>& curriculum, int64_t stageSteps, int64_t done,
                             bool firstOfRun) {
    if (curriculum.empty())
        return {};
    const int stage = curriculumStage(curriculum, stageSteps, done);
    if (!firstOfRun && done > 0 && stage == curriculumStage(curriculum, stageSteps, done - 1))
        return {};
    const int windows = curriculum[size_t(stage)];
    return "curriculum: sequences of " + std::to_string(windows) +
           (windows == 1 ? " window" : " windows") + " from step " + std::to_string(done + 1);
}

std::string curriculumProblem(const std::vector<int>& curriculum, int windows, double mixShorter) {
    for (size_t i = 0; i < curriculum.size(); ++i)
        if (curriculum[i] < 1 || (i > 0 && curriculum[i] <= curriculum[i - 1]))
            return "the curriculum's windows must rise from at least 1";
    if (!curriculum.empty() && curriculum.back() != windows)
        return "the curriculum's last stage must be the bptt windows (" + std::to_string(windows) +
               ")";
    if (!(mixShorter >= 0) || mixShorter > 1)
        return "the share of shorter sequences must be in [0, 1]";
    if (mixShorter > 0 && curriculum.empty())
        return "shorter sequences are mixed in from a curriculum's earlier stages: give one";
    return {};
}

} // namespace baton::engine
