#include "bench_util.h"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
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

double privateRssMb() {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    double kb = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "RssAnon: %lf kB", &kb) == 1)
            break;
    std::fclose(f);
    return kb < 0 ? -1 : kb / 1024.0;
}

void report(const std::string& bench, const std::string& metric, double value,
            const std::string& unit, const std::string& extra) {
    std::printf("{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"%s%s}\n",
                bench.c_str(), metric.c_str(), value, unit.c_str(), extra.empty() ? "" : ", ",
                extra.c_str());
    std::fflush(stdout);
}

double readBandwidthGBs(int threads) {
    threads = std::max(1, threads);
    const size_t n = (size_t(256) << 20) / sizeof(uint32_t);
    std::vector<uint32_t> data(n, 1u);
    std::vector<double> seconds;
    std::vector<uint32_t> sums(size_t(threads), 0);
    for (int r = 0; r < 6; ++r) {
        const auto t0 = Clock::now();
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                const size_t b = (n / 4) * size_t(t) / size_t(threads) * 4;
                const size_t e = (n / 4) * size_t(t + 1) / size_t(threads) * 4;
                // 16-byte vector loads, four independent sums: the loop is bound by
                // memory, not by the core (a scalar loop is not, at 30+ GB/s).
                using V = uint32_t __attribute__((vector_size(16)));
                const V* v = reinterpret_cast<const V*>(data.data());
                V s0 = {}, s1 = {}, s2 = {}, s3 = {};
                const size_t vb = b / 4, ve = e / 4; // slices are multiples of 4 elements
                size_t i = vb;
                for (; i + 4 <= ve; i += 4) {
                    s0 += v[i];
                    s1 += v[i + 1];
                    s2 += v[i + 2];
                    s3 += v[i + 3];
                }
                for (; i < ve; ++i)
                    s0 += v[i];
                const V sum = s0 + s1 + s2 + s3;
                const uint32_t a = sum[0] + sum[1] + sum[2] + sum[3];
                sums[size_t(t)] = a;
            });
        for (auto& th : pool)
            th.join();
        if (r > 0) // the first pass faults the pages in
            seconds.push_back(secondsSince(t0));
    }
    uint32_t check = 0;
    for (uint32_t v : sums)
        check += v;
    if (check != uint32_t(n)) // every element is 1: also keeps the sums alive
        std::fprintf(stderr, "bandwidth check failed: %u\n", check);
    return double(n * sizeof(uint32_t)) / median(seconds) / 1e9;
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
