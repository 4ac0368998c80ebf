// The machine's read bandwidth, measured so that it cannot be understated: the bound
// a decoder's speed is compared with (bench_gpt2).
//  - The loads are the widest the CPU has, chosen by the kernels' own ISA dispatch
//    (cpu::readSum: 64-byte loads on AVX-512, eight independent sums), so the loop is
//    bound by memory, not by the core.
//  - The threads are started when the probe is made, and each measurement's buffer
//    pages are touched by the thread that reads them before the passes: a pass times
//    the reads alone, from the moment every thread is waiting at the start to the
//    moment the last one is done.
//  - The buffer (512 MiB by default) is far beyond any last-level cache. It exists
//    only during measure(), so a benchmark's peak memory can leave it out
//    (bench_util.h's PeakMemory).
//  - A measurement is the best of several passes: the machine's bandwidth moves, and
//    nothing makes a pass faster than the memory allows.
// Measure right before and right after the figure it bounds and compare with the higher.
#pragma once

#include <cstddef>
#include <memory>

namespace baton::bench {

class ReadBandwidthProbe {
public:
    explicit ReadBandwidthProbe(int threads, size_t bytes = size_t(512) << 20);
    ~ReadBandwidthProbe();
    ReadBandwidthProbe(const ReadBandwidthProbe&) = delete;
    ReadBandwidthProbe& operator=(const ReadBandwidthProbe&) = delete;

    // GB/s: the whole buffer read once, best of `passes` passes after one not counted.
    double measure(int passes = 9);
    int threads() const;

private:
    struct Team;
    std::unique_ptr<Team> m_team;
};

} // namespace baton::bench
