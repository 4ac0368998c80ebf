// How many threads the engine may use now (one-token decode and batched work): the
// cores that other programs leave free, capped by the threads asked for (--threads,
// 0: all cores).
//
// A desktop app shares its machine. A parallel step with a fixed team of threads is
// as slow as its slowest thread, and a thread that shares its core with another
// program gets a fraction of it in slices of milliseconds: with one of two cores
// busy, a two-thread decode ran slower than one thread on the free core (issue 16
// measured 26.5 against 46 tokens/s for GPT-2 small). So the team is sized by the
// free cores, measured from /proc/stat minus this process's own CPU time, sampled
// at most every 200 ms. Time of niced programs is not counted as busy (the scheduler
// gives way to us there) unless this process is niced itself, or the kernel groups
// processes by session (sched_autogroup_enabled, the default of Debian and Ubuntu):
// then a niced program started from another terminal competes as a whole group at
// normal weight, and the measured cost was the same as a busy core's (GPT-2 small
// decode with two threads 24-28 tokens/s beside three niced processes of other
// sessions, 68 once their groups were niced with /proc/PID/autogroup).
#pragma once

#include <optional>
#include <string_view>

namespace baton::engine::cpu {

// The machine's CPU time so far from /proc/stat's "cpu" line, in seconds: busy time
// of programs at normal priority (user, system, irq, softirq, steal) and of niced
// ones. nullopt when the text has no such line.
struct MachineTimes {
    double busy = 0;
    double niced = 0;
};
std::optional<MachineTimes> parseProcStat(std::string_view text, double ticksPerSecond);

// Whether niced programs' time counts as busy (see above).
bool nicedCountsAsBusy(bool weAreNiced, bool autogroupEnabled);

// The team size for `cores` cores when other programs used `othersCores` cores on
// average: the free cores, rounded up from .7 on, at least 1, at most cap.
int threadsFor(int cores, int cap, double othersCores);

// The process-wide cap (initializeRuntime sets it; 0 or less: all cores).
void setThreadCap(int cap);
int threadCap();
// Off: always the cap (the benchmarks compare both).
void setAdaptiveThreads(bool on);
bool adaptiveThreads();

// The team size to use now (samples the machine when the last sample is older than
// 200 ms; thread-safe).
int currentThreads();

// Applies currentThreads() to the one-token decoder (kernels/cpu_decoder.h), before
// each decode step. Its matrix-vector products give every row to one thread, so the
// result is the same bits whatever the team size. The batched work (prefill, scoring,
// training) sizes LibTorch's team by the same budget before every forward pass, with
// its thread-dependent operations computed in fixed blocks (model/fixed_blocks.h), so
// scores, seeded texts and resumed training runs do not depend on what else the
// machine is doing either.
void applyThreadBudget();

} // namespace baton::engine::cpu
