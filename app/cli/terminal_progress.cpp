#include "terminal_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace baton::cli {

namespace {

bool wanted() {
    if (const char* forced = std::getenv("BATON_PROGRESS"))
        return std::strcmp(forced, "0") != 0;
    const char* term = std::getenv("TERM");
    return ::isatty(STDERR_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

int terminalWidth() {
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20)
        return size.ws_col;
    return 80;
}

// 1234567 -> "1,234,567"; below 10 with one decimal.
std::string grouped(double value) {
    if (value < 10) {
        char one[16];
        std::snprintf(one, sizeof one, "%.1f", value);
        return one;
    }
    std::string digits = std::to_string(static_cast<long long>(std::llround(value)));
    for (int i = int(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(size_t(i), ",");
    return digits;
}

// 75 -> "1:15", 3725 -> "1:02:05".
std::string duration(double seconds) {
    const long long s = std::llround(std::max(0.0, seconds));
    char text[32];
    if (s >= 3600)
        std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
    return text;
}

// The first `columns` characters of UTF-8 text (never a split character).
std::string fitted(const std::string& text, int columns) {
    int seen = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xc0) == 0x80)
            continue; // a continuation byte
        if (seen++ == columns)
            return text.substr(0, i);
    }
    return text;
}

} // namespace

std::string progressLine(const std::string& label, double fraction, double rate,
                         const std::string& unit, double secondsLeft, const std::string& message,
                         int width) {
    fraction = std::clamp(fraction, 0.0, 1.0);
    constexpr int kBar = 24;
    const int filled = int(fraction * kBar);
    std::string line = label + " [" + std::string(size_t(filled), '#') +
                       std::string(size_t(kBar - filled), '.') + "] " +
                       std::to_string(int(fraction * 100)) + "%";
    if (rate >= 0 && !unit.empty())
        line += "  " + grouped(rate) + " " + unit + "/s";
    if (secondsLeft >= 0)
        line += "  " + duration(secondsLeft) + " left";
    if (!message.empty())
        line += "  " + message;
    return fitted(line, std::max(1, width - 1));
}

TerminalProgress::TerminalProgress(std::string label, double total, std::string unit)
    : m_label(std::move(label))
    , m_unit(std::move(unit))
    , m_total(total)
    , m_enabled(wanted())
    , m_start(std::chrono::steady_clock::now()) {}

TerminalProgress::~TerminalProgress() {
    finish();
}

void TerminalProgress::update(double fraction, const std::string& message) {
    if (!m_enabled)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (m_drawn && fraction < 1.0 && now - m_lastDraw < std::chrono::milliseconds(100))
        return;
    m_lastDraw = now;
    const double seconds = std::chrono::duration<double>(now - m_start).count();
    // The rate and the time left once there is something to go by.
    const bool measured = seconds > 0.5 && fraction > 0.001;
    const double rate = measured && m_total > 0 ? fraction * m_total / seconds : -1;
    const double left = measured && fraction < 1.0 ? seconds * (1 - fraction) / fraction : -1;
    const std::string line =
        progressLine(m_label, fraction, rate, m_unit, left, message, terminalWidth());
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    m_drawn = true;
}

engine::JobProgress TerminalProgress::reporter() {
    return [this](double fraction, const std::string& message) { update(fraction, message); };
}

void TerminalProgress::finish() {
    if (!m_drawn)
        return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    m_drawn = false;
}

} // namespace baton::cli
