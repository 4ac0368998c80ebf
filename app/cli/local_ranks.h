// `baton-cli train --nproc N`: the ranks of one data-parallel run started on this
// machine, as torchrun starts them (its variables set for each process).
#pragma once

#include <string>
#include <vector>

namespace baton::cli {

// Runs this program N times with `args` (the train command's arguments, without
// --nproc) and RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1
// and MASTER_PORT (a free port) set, and waits for them. When one rank fails the others
// are given `graceSeconds` to stop by themselves, then killed. Returns 0 when every
// rank succeeded, else the first failure's exit code (128 + signal for a killed one).
int runLocalRanks(int count, const std::vector<std::string>& args, int graceSeconds);

} // namespace baton::cli
