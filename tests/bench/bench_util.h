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

// Prints {"bench": bench, "metric": metric, "value": value, "unit": unit, ...extra}.
void report(const std::string& bench, const std::string& metric, double value,
            const std::string& unit, const std::string& extraJsonFields = "");

// --name value lookups over argv with defaults.
std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback);

} // namespace baton::bench
