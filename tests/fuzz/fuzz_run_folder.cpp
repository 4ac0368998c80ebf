// A training run's folder as --resume reads it: run.json, LATEST, and the progress of
// the checkpoint LATEST names (checkpoints/step-N/trainer.json), given as three parts
// of one input. Refused with an error or read; LATEST never leads outside the run's
// folder. (The checkpoint's model and optimizer are safetensors files: the safetensors
// and config targets read those.)
#include "fuzz_support.h"

#include "training/run_config.h"
#include "training/run_progress.h"

#include <sys/stat.h>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = fuzz::splitParts(fuzz::asText(data, size), 3);
    const std::string run = fuzz::scratchDir() + "/run";
    ::mkdir(run.c_str(), 0700);
    ::mkdir((run + "/checkpoints").c_str(), 0700);
    ::mkdir((run + "/checkpoints/step-000000007").c_str(), 0700);
    fuzz::writeScratch("run/run.json", parts[0]);
    fuzz::writeScratch("run/LATEST", parts[1]);
    fuzz::writeScratch("run/checkpoints/step-000000007/trainer.json", parts[2]);
    auto config = engine::readRunConfig(run);
    if (!config)
        fuzz::check(!config.error().message.empty(), "an error says what is wrong");
    const std::string latest = engine::latestCheckpoint(run);
    fuzz::check(latest.empty() || latest == run + "/checkpoints/step-000000007",
                "LATEST names a checkpoint of this run or nothing");
    if (!latest.empty()) {
        auto progress = engine::readProgress(latest);
        if (progress)
            fuzz::check(progress->step >= 0 && progress->tokens >= 0, "usable progress");
    }
    return 0;
}
