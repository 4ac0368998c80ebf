// Shared helpers for the benchmarks: timing, medians, peak memory, JSON lines.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace baton::bench {

using Clock = std::chrono::steady_clock;
inline double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);
double peakRssMb();

// The process's peak resident memory in MB with stretches left out: pause() before one
// that should not count (the read-bandwidth probe's buffer), resume() after it. Reads
// VmHWM and resets it through /proc/self/clear_refs (Linux); where that cannot be
// written nothing is left out, and leavesOut() is false.
class PeakMemory {
public:
    void pause();
    void resume();
    double mb();
    bool leavesOut() const { return m_leavesOut; }

private:
    double m_peak = 0;
    bool m_leavesOut = true;
};
// The process's resident anonymous memory now (RssAnon: not the page cache's pages a
// mapped file shares with other processes), or -1 where /proc does not say.
double privateRssMb();

// Prints {"bench": bench, "metric": metric, "value": value, "unit": unit, ...extra}.
void report(const std::string& bench, const std::string& metric, double value,
            const std::string& unit, const std::string& extraJsonFields = "");

// --name value lookups over argv with defaults.
std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback);

// N processes that busy-loop (at normal priority) until this object goes: another
// program using cores, as a desktop app meets it every day.
class BusyLoad {
public:
    explicit BusyLoad(int processes);
    ~BusyLoad();
    BusyLoad(const BusyLoad&) = delete;
    BusyLoad& operator=(const BusyLoad&) = delete;

private:
    std::vector<int> m_pids;
};

} // namespace baton::bench
