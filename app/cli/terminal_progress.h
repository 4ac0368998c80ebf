// The progress bar of baton-cli's long commands (eval, probe, score, topics fit,
// train): one line on standard error, redrawn at most ten times a second, with the
// share done, the rate and the time left, fed by the engine's job progress
// (engine::JobProgress). Nothing at all is written when standard error is not a
// terminal (a log file, a pipe, a test), unless BATON_PROGRESS=1 asks for it.
#pragma once

#include <baton/engine/cancel.h>

#include <chrono>
#include <string>

namespace baton::cli {

class TerminalProgress {
public:
    // label: what runs ("eval"); total and unit: how much of what the whole job is
    // (40000 "tokens"), for the rate; total 0 leaves the rate out.
    explicit TerminalProgress(std::string label, double total = 0, std::string unit = {});
    // Clears the line (what was printed after it stays readable).
    ~TerminalProgress();
    TerminalProgress(const TerminalProgress&) = delete;
    TerminalProgress& operator=(const TerminalProgress&) = delete;

    // The fraction done (0..1) and what is being done now.
    void update(double fraction, const std::string& message = {});
    // update() as a JobProgress, for the engine's functions (valid while this lives).
    engine::JobProgress reporter();
    // Ends the bar: clears its line. Safe to call twice.
    void finish();

    bool shown() const { return m_enabled; }

private:
    std::string m_label, m_unit;
    double m_total;
    bool m_enabled;
    bool m_drawn = false;
    std::chrono::steady_clock::time_point m_start, m_lastDraw;
};

// The bar's line (without the leading carriage return), fitted to `width` columns:
//   "eval [#########.........] 45%  1,230 tokens/s  0:32 left  setting 1 of 2"
// rate < 0 or secondsLeft < 0 leave those out.
std::string progressLine(const std::string& label, double fraction, double rate,
                         const std::string& unit, double secondsLeft, const std::string& message,
                         int width);

} // namespace baton::cli
