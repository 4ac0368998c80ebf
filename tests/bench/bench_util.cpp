#include "bench_util.h"

#include <algorithm>
#include <cstdio>
#include <sys/resource.h>

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

void report(const std::string& bench, const std::string& metric, double value,
            const std::string& unit, const std::string& extra) {
    std::printf("{\"bench\": \"%s\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"%s%s}\n",
                bench.c_str(), metric.c_str(), value, unit.c_str(), extra.empty() ? "" : ", ",
                extra.c_str());
    std::fflush(stdout);
}

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (argv[i] == "--" + name)
            return argv[i + 1];
    return fallback;
}

} // namespace baton::bench
