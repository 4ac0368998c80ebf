// Checks of a DistributedConfig (the launcher's variables are read in
// distributed_config.cpp, declared in the public training.h).
#pragma once

#include "baton/engine/training.h"

namespace baton::engine {

constexpr int kMaxRanks = 4096;

// Rank, world size, port, address and timeout in range.
Result<void> validateDistributed(const DistributedConfig& d);

} // namespace baton::engine
