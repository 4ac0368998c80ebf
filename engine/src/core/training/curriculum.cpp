#include "training/curriculum.h"

namespace baton::engine {

namespace {

uint64_t mixSeed(uint64_t a, uint64_t b) {
    uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

} // namespace

std::vector<int> curriculumWindows(const std::vector<int>& curriculum, int windows, int stage,
                                   double mixShorter, int64_t batch, uint64_t seed, int64_t step) {
    if (curriculum.empty())
        return std::vector<int>(size_t(batch), windows);
    std::vector<int> out(size_t(batch), curriculum[size_t(stage)]);
    const int64_t shorter = stage > 0 ? int64_t(mixShorter * double(batch)) : 0;
    for (int64_t b = 0; b < shorter; ++b)
        out[size_t(b)] = curriculum[size_t(
            mixSeed(mixSeed(seed ^ 0x5107ULL, uint64_t(step)), uint64_t(b)) % uint64_t(stage))];
    return out;
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
