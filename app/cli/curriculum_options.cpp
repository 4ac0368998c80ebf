#include "curriculum_options.h"

#include "cli_support.h"

namespace baton::cli {

void addCurriculumOptions(Args& args, const char* budgetHelp) {
    args.option("curriculum", "W[,W...]",
                "A curriculum of windows per training sequence, rising from the first stage "
                "(the last one sets --bptt-windows)")
        .option("stage-steps", "N", budgetHelp, "0")
        .option("mix-shorter", "X",
                "Curriculum: the share of each batch's sequences that take the length of an "
                "earlier stage (mixed lengths)",
                "0");
}

CurriculumOptions curriculumFromArgs(const Args& args, int& bpttWindows) {
    CurriculumOptions o;
    if (args.has("curriculum")) {
        for (int64_t w : args.getIntList("curriculum", 1, 100000))
            o.windows.push_back(int(w));
        if (args.has("bptt-windows") && bpttWindows != o.windows.back())
            throw UsageError("--bptt-windows must be the curriculum's last stage");
        bpttWindows = o.windows.back();
    }
    o.stageSteps = args.getInt("stage-steps", 0, INT64_MAX / 2);
    o.mixShorter = args.getDouble("mix-shorter", 0, 1);
    if (o.windows.empty() && (o.mixShorter > 0 || o.stageSteps > 0))
        throw UsageError("--mix-shorter and --stage-steps need a --curriculum");
    return o;
}

} // namespace baton::cli
