#include "baton/engine/windows.h"

#include <algorithm>
#include <string>

namespace baton::engine {

std::vector<WindowSpan> planWindows(int64_t count, const WindowSettings& w) {
    std::vector<WindowSpan> out;
    const int64_t T = w.window, o = w.overlap, s = T - o;
    if (count < 2 || T < 1 || o < 0 || o >= T)
        return out;
    for (int64_t n = 0;; ++n) {
        WindowSpan span;
        span.index = n;
        span.start = s * n;
        span.firstScored = n == 0 ? 1 : span.start + o + 1;
        if (span.firstScored > count - 1)
            break;
        span.lastScored = std::min(span.start + T, count - 1);
        // The input must reach the position before the last scored token.
        span.length = std::min(T, count - span.start);
        out.push_back(span);
    }
    return out;
}

WindowSettings resolveWindows(const ModelInfo& model, const WindowSettings& requested) {
    WindowSettings w = requested;
    if (w.window == 0) {
        if (model.recurrence) {
            w.window = model.recurrence->window;
            if (requested.overlap == 0)
                w.overlap = model.recurrence->overlap;
        } else {
            w.window = model.config.nPositions;
        }
    }
    return w;
}

std::string windowWarning(const ModelInfo& model, const WindowSettings& w) {
    if (!model.recurrence)
        return {};
    const auto& r = *model.recurrence;
    if (r.overlap == w.overlap && r.window == w.window)
        return {};
    return "this recurrent model was trained with T = " + std::to_string(r.window) +
           ", o = " + std::to_string(r.overlap) +
           " and now runs with T = " + std::to_string(w.window) +
           ", o = " + std::to_string(w.overlap) + ": its state was learnt for the trained setting";
}

GuidePlacement placeGuidance(const WindowSettings& w, int64_t pinned, int64_t stream, int64_t guide,
                             int64_t beforeLast) {
    GuidePlacement p;
    const int64_t tail = std::clamp<int64_t>(beforeLast, 0, stream);
    p.at = stream - tail;
    const int64_t room = std::max<int64_t>(0, w.window - pinned - 1 - guide);
    if (guide == 0 || stream <= room)
        return p;
    p.rollsOver = true;
    const int64_t after = std::min(tail, room);
    const int64_t before =
        after < tail ? 0 : std::min({static_cast<int64_t>(w.overlap), p.at, room - after});
    p.keep = before + after;
    p.at = before;
    return p;
}

Result<void> validateWindows(const WindowSettings& w, int positions) {
    if (w.window < 1 || w.window > positions)
        return makeError(ErrorCode::InvalidArgument,
                         "window size " + std::to_string(w.window) + " must be in [1, " +
                             std::to_string(positions) + "] (the model's positions)");
    if (w.overlap < 0 || w.overlap >= w.window)
        return makeError(ErrorCode::InvalidArgument,
                         "overlap " + std::to_string(w.overlap) + " must be in [0, " +
                             std::to_string(w.window - 1) + "] (less than the window)");
    return {};
}

double flopsPerToken(const ModelConfig& c, const WindowSettings& w, bool withHead) {
    const double L = c.nLayer, k = c.nEmbd, T = w.window, o = w.overlap;
    const double N = 12.0 * L * k * k;
    double f = (2.0 * N + 2.0 * L * T * k) * T / (T - o);
    if (withHead)
        f += 2.0 * double(c.vocabSize) * k;
    return f;
}

} // namespace baton::engine
