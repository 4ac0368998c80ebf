// The curriculum switches (the windows per training sequence growing in stages),
// shared by `train` and `probe --synthetic`.
#pragma once

#include "args.h"

#include <cstdint>
#include <vector>

namespace baton::cli {

struct CurriculumOptions {
    std::vector<int> windows; // empty: none
    int64_t stageSteps = 0;
    double mixShorter = 0;
};

// --curriculum, --stage-steps (`budgetHelp` says what the budget does) and
// --mix-shorter.
void addCurriculumOptions(Args& args, const char* budgetHelp);
// The options given; with a curriculum, `bpttWindows` becomes its last stage (a
// --bptt-windows that differs is refused).
CurriculumOptions curriculumFromArgs(const Args& args, int& bpttWindows);

} // namespace baton::cli
