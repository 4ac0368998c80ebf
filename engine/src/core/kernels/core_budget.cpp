#include "kernels/core_budget.h"

#include "kernels/worker_team.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

namespace baton::engine::cpu {

std::optional<MachineTimes> parseProcStat(std::string_view text, double ticksPerSecond) {
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("cpu ", 0) != 0)
            continue;
        std::istringstream fields(line.substr(4));
        double v[8] = {};
        int n = 0;
        while (n < 8 && fields >> v[n])
            ++n;
        if (n < 4 || ticksPerSecond <= 0)
            return std::nullopt;
        MachineTimes t;
        t.busy = (v[0] + v[2] + v[5] + v[6] + v[7]) / ticksPerSecond;
        t.niced = v[1] / ticksPerSecond;
        return t;
    }
    return std::nullopt;
}

int threadsFor(int cores, int cap, double othersCores) {
    cores = std::max(1, cores);
    if (cap <= 0 || cap > cores)
        cap = cores;
    const double free = static_cast<double>(cores) - std::max(0.0, othersCores);
    // While we compete with a busy program, the scheduler shares out the cores and the
    // other program's measured use falls (two of our threads and one busy loop on two
    // cores: it gets 2/3 of a core): rounding up only from 0.7 keeps us at one thread.
    const int n = static_cast<int>(std::floor(free + 0.3));
    return std::clamp(n, 1, cap);
}

namespace {

std::atomic<int> g_cap{0};
std::atomic<bool> g_adaptive{true};

int machineCores() {
    static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return cores;
}

double monotonicSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double ownCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::optional<MachineTimes> readMachine() {
    std::ifstream in("/proc/stat");
    if (!in)
        return std::nullopt;
    std::string first;
    std::getline(in, first);
    static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    return parseProcStat(first, ticks);
}

bool autogroupEnabled() {
    std::ifstream in("/proc/sys/kernel/sched_autogroup_enabled");
    int on = 0;
    return (in >> on) && on != 0;
}

struct Sampler {
    std::mutex mutex;
    bool have = false;
    double wall = 0, own = 0, busy = 0, niced = 0;
    double othersCores = 0;

    double others() {
        std::lock_guard lock(mutex);
        const double now = monotonicSeconds();
        if (have && now - wall < 0.2)
            return othersCores;
        const auto machine = readMachine();
        if (!machine) // no /proc: assume the machine is ours
            return othersCores = 0;
        const double own = ownCpuSeconds();
        static const bool autogroup = autogroupEnabled();
        const bool niced = nicedCountsAsBusy(getpriority(PRIO_PROCESS, 0) > 0, autogroup);
        const double busy = machine->busy + (niced ? machine->niced : 0.0);
        if (have) {
            const double span = now - wall;
            // /proc/stat counts in ticks of 10 ms: over 200 ms that is +-5% per core.
            othersCores = std::max(0.0, ((busy - this->busy) - (own - this->own)) / span);
        }
        have = true;
        wall = now;
        this->own = own;
        this->busy = busy;
        return othersCores;
    }
};

Sampler& sampler() {
    static Sampler s;
    return s;
}

} // namespace

bool nicedCountsAsBusy(bool weAreNiced, bool autogroupEnabled) {
    return weAreNiced || autogroupEnabled;
}

void setThreadCap(int cap) {
    g_cap = cap;
}
int threadCap() {
    const int cap = g_cap.load();
    return cap > 0 ? std::min(cap, machineCores()) : machineCores();
}
void setAdaptiveThreads(bool on) {
    g_adaptive = on;
}
bool adaptiveThreads() {
    return g_adaptive.load();
}

int currentThreads() {
    const int cap = threadCap();
    if (!g_adaptive.load() || cap <= 1)
        return cap;
    return threadsFor(machineCores(), cap, sampler().others());
}

void applyThreadBudget() {
    setThreadCount(currentThreads());
}

} // namespace baton::engine::cpu
