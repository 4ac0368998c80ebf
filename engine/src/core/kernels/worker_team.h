// The decoder's own team of worker threads (no OpenMP): runs the parts of one
// matrix-vector product or one attention step in parallel.
//
// A decode step is about fifty short parallel steps per token. OpenMP either spins
// between them (OMP_WAIT_POLICY=ACTIVE: a thread that shares its core with another
// program makes every step wait for its time slice) or sleeps (PASSIVE: every step
// pays a wake-up, measured 17% slower decode on an idle machine). These workers spin
// for a short while (200 us, longer than the gap between two steps of one token) and
// then sleep, so an idle machine decodes at full speed and the workers give their
// cores back between tokens; the team size comes from the thread budget
// (kernels/core_budget.h), so a busy core gets no worker at all.
#pragma once

#include <functional>

namespace baton::engine::cpu {

// How many parts the decoder's parallel steps use (the thread budget sets it).
void setThreadCount(int threads);
int threadCount();

// Runs fn(part, parts) for every part in [0, parts): part 0 on the calling thread,
// the others on the team; returns when all have returned. parts <= 1, or a team
// already busy with another caller's step, runs every part on the calling thread.
// fn must not throw.
void runParts(int parts, const std::function<void(int part, int parts)>& fn);

} // namespace baton::engine::cpu
