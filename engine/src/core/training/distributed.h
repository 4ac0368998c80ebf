// The ranks of one data-parallel training run, through LibTorch's distributed engine
// (c10d): a TCPStore served by rank 0 for the rendezvous, and a process group (Gloo
// for CPU tensors, NCCL for CUDA ones) for the sums. Every failure of another rank (it
// died, hangs past the timeout, cannot be reached, was started differently) comes
// back as an error naming it, never as a silent wait.
#pragma once

#include "baton/engine/training.h"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace baton::engine {

class RankGroup {
public:
    // Meets the other ranks at config.masterAddr:masterPort (rank 0 serves the store and
    // waits for all of them), then connects the process group for tensors on `device`.
    static Result<std::unique_ptr<RankGroup>> connect(const DistributedConfig& config,
                                                      const torch::Device& device);
    ~RankGroup();
    RankGroup(const RankGroup&) = delete;
    RankGroup& operator=(const RankGroup&) = delete;

    int rank() const;
    int size() const;

    // Publishes this rank's fingerprint of `what` (its configuration, corpus, model)
    // and compares every rank's with rank 0's: all ranks return the same error, naming
    // the ranks that differ, or all go on.
    Result<void> agree(const std::string& what, const std::string& fingerprint);

    // Work that rank 0 alone does (setting up the run folder): rank 0 calls finish()
    // with its outcome ("" = done, else the error's message), the others await() it for
    // as long as it takes; they fail at once if rank 0's process ends without it.
    Result<void> finish(const std::string& key, const std::string& errorMessage);
    Result<void> await(const std::string& key);

    // Sums the tensors over the ranks, in place: contiguous tensors of one dtype on the
    // group's device, sent in buckets of about 25 MB, all in flight together. The sum
    // of each element is the same on every rank.
    Result<void> sum(const std::vector<torch::Tensor>& tensors);
    // Sums a few numbers over the ranks (in float64, through the group's device).
    Result<void> sumValues(std::vector<double>& values);
    // Bytes each rank sends per sum of `elements` float32 values (ring all-reduce:
    // 2 (N-1)/N of the data), for the progress report.
    double bytesPerSum(int64_t elements) const;

private:
    struct Impl;
    explicit RankGroup(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> d;
};

} // namespace baton::engine
