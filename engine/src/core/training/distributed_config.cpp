// The launcher's variables (torchrun's or Slurm's) read into a DistributedConfig, and
// its checks. Torch-free: the CLI reads them before the engine starts.
#include "training/distributed_config.h"

#include <charconv>
#include <cstring>

namespace baton::engine {

namespace {

Error bad(const std::string& what) {
    return makeError(ErrorCode::InvalidArgument, "distributed training: " + what);
}

// An integer variable in [lo, hi]; nullopt when unset.
Result<std::optional<int>> intVariable(const std::function<const char*(const char*)>& getenv,
                                       const char* name, int lo, int hi) {
    const char* v = getenv(name);
    if (!v)
        return std::optional<int>();
    int value = 0;
    const char* end = v + std::strlen(v);
    auto [ptr, ec] = std::from_chars(v, end, value);
    if (ec != std::errc() || ptr != end || v == end || value < lo || value > hi)
        return bad(std::string(name) + "=\"" + v + "\" is not a whole number in [" +
                   std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return std::optional<int>(value);
}

} // namespace

Result<void> validateDistributed(const DistributedConfig& d) {
    if (d.worldSize < 1 || d.worldSize > kMaxRanks)
        return bad("the world size must be in [1, " + std::to_string(kMaxRanks) + "]");
    if (d.rank < 0 || d.rank >= d.worldSize)
        return bad("rank " + std::to_string(d.rank) + " is not in [0, " +
                   std::to_string(d.worldSize) + ")");
    if (d.localRank < 0 || d.localRank >= kMaxRanks)
        return bad("the local rank must be in [0, " + std::to_string(kMaxRanks) + ")");
    if (d.masterPort < 1 || d.masterPort > 65535)
        return bad("the master port must be in [1, 65535]");
    if (d.masterAddr.empty() || d.masterAddr.size() > 255 ||
        d.masterAddr.find_first_of(" \t\r\n") != std::string::npos)
        return bad("the master address \"" + d.masterAddr + "\" is not a host name");
    if (d.timeoutSeconds < 1 || d.timeoutSeconds > 7 * 24 * 3600)
        return bad("the timeout must be in [1 s, 7 days]");
    return {};
}

Result<DistributedConfig>
distributedFromEnvironment(const std::function<const char*(const char*)>& getenv) {
    DistributedConfig d;
    // torchrun's names first; Slurm's when torchrun's are absent (srun sets its own).
    const bool torchrun = getenv("WORLD_SIZE") != nullptr || getenv("RANK") != nullptr;
    const bool slurm = !torchrun && getenv("SLURM_NTASKS") != nullptr;
    if (!torchrun && !slurm)
        return d;
    const char* rankName = torchrun ? "RANK" : "SLURM_PROCID";
    const char* sizeName = torchrun ? "WORLD_SIZE" : "SLURM_NTASKS";
    const char* localName = torchrun ? "LOCAL_RANK" : "SLURM_LOCALID";
    auto size = intVariable(getenv, sizeName, 1, kMaxRanks);
    if (!size)
        return size.error();
    auto rank = intVariable(getenv, rankName, 0, kMaxRanks - 1);
    if (!rank)
        return rank.error();
    auto local = intVariable(getenv, localName, 0, kMaxRanks - 1);
    if (!local)
        return local.error();
    auto port = intVariable(getenv, "MASTER_PORT", 1, 65535);
    if (!port)
        return port.error();
    if (!*size || !*rank)
        return bad(std::string("both ") + rankName + " and " + sizeName +
                   " must be set (the launcher sets them for every process)");
    d.launched = true;
    d.worldSize = **size;
    d.rank = **rank;
    d.localRank = local->value_or(0);
    if (*port)
        d.masterPort = **port;
    if (const char* addr = getenv("MASTER_ADDR"))
        d.masterAddr = addr;
    else if (d.worldSize > 1 && slurm)
        return bad("under Slurm set MASTER_ADDR to the first node's host name (see the "
                   "README's srun example)");
    if (auto r = validateDistributed(d); !r)
        return r.error();
    return d;
}

} // namespace baton::engine
