#include "bench_util.h"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace baton::bench {

double median(std::vector<double> v) {
    return percentile(std::move(v), 0.5);
}

double percentile(std::vector<double> v, double p) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const double pos = p * double(v.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

double peakRssMb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0;
}

namespace {
// A "Name: N kB" line of /proc/self/status in MB, or -1 where it says nothing.
double statusFieldMb(const char* field) {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    const std::string format = std::string(field) + ": %lf kB";
    char line[256];
    double kb = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, format.c_str(), &kb) == 1)
            break;
    std::fclose(f);
    return kb < 0 ? -1 : kb / 1024.0;
}
} // namespace

void PeakMemory::pause() {
    m_peak = std::max(m_peak, statusFieldMb("VmHWM"));
}

void PeakMemory::resume() {
    FILE* f = std::fopen("/proc/self/clear_refs", "w");
    const bool reset = f && std::fputs("5", f) >= 0;
    if (f && std::fclose(f) != 0)
        m_leavesOut = false;
    if (!reset)
        m_leavesOut = false;
}

double PeakMemory::mb() {
    pause();
    return m_peak;
}

double privateRssMb() {
    return statusFieldMb("RssAnon");
}

void report(const std::string& bench, const std::string& metric, double value,
            const std::string& unit, const std::string& extra) {
    std::printf("{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"%s%s}\n",
                bench.c_str(), metric.c_str(), value, unit.c_str(), extra.empty() ? "" : ", ",
                extra.c_str());
    std::fflush(stdout);
}

BusyLoad::BusyLoad(int processes) {
    for (int i = 0; i < processes; ++i) {
        const pid_t pid = fork();
        if (pid == 0) {
            volatile unsigned long x = 0;
            for (;;)
                x = x + 1;
        }
        if (pid > 0)
            m_pids.push_back(pid);
    }
    if (processes > 0) // let the scheduler settle
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

BusyLoad::~BusyLoad() {
    for (int pid : m_pids) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
}

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (argv[i] == "--" + name)
            return argv[i + 1];
    return fallback;
}

} // namespace baton::bench
