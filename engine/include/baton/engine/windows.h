// Windowed execution (../shared/docs/method.md section 3): windows of T tokens
// starting every s = T - o tokens; positions restart at 0 in every window.
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/model_info.h"

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

struct WindowSettings {
    int window = 0;  // T; 0 means the model's default (its trained T, or n_positions)
    int overlap = 0; // o, 0 <= o < T

    int stride() const { return window - overlap; }
};

// One window of a windowed pass over `count` tokens: its input tokens are
// [start, start + length) and it scores the predictions of tokens
// [firstScored, lastScored] (each predicted from the position before it).
struct WindowSpan {
    int64_t index = 0;
    int64_t start = 0;
    int64_t length = 0;
    int64_t firstScored = 0;
    int64_t lastScored = 0; // inclusive
};

// The windows that score every token but the first exactly once: window 0 scores
// all its predictions, window n >= 1 only its last T - o.
std::vector<WindowSpan> planWindows(int64_t count, const WindowSettings& windows);

// The windows to use for `model` when `requested` leaves them open: window 0 means
// the model's default, which is the T (and, when the overlap is also 0, the o) a
// recurrent model was trained with, else n_positions with o = 0.
WindowSettings resolveWindows(const ModelInfo& model, const WindowSettings& requested);
// A warning when a recurrent model runs at an overlap or window other than the
// ones it was trained with (allowed, but its state was learnt for those); else "".
std::string windowWarning(const ModelInfo& model, const WindowSettings& windows);

// Where guidance (Generator::setGuide: a story's world info and author's note) goes in
// the open window, which holds `pinned` pinned and `stream` stream tokens: before the
// last `beforeLast` stream tokens. When the window has no room for `guide` more tokens
// and one new one, it rolls over first and the new window keeps `keep` stream tokens:
// the overlap before the guidance's place and what follows it (the tokens just before
// the continuation first, when not all fit).
struct GuidePlacement {
    bool rollsOver = false;
    int64_t keep = 0; // stream tokens the new window keeps (rollsOver)
    int64_t at = 0;   // the guidance sits before this stream token of the open window
};
GuidePlacement placeGuidance(const WindowSettings& windows, int64_t pinned, int64_t stream,
                             int64_t guide, int64_t beforeLast);

// Checks 1 <= T <= positions and 0 <= o < T.
Result<void> validateWindows(const WindowSettings& windows, int positions);

// FLOPs per scored token as the paper counts them: (2 N + 2 L T k) T / (T - o) with
// N = 12 L k^2; withHead adds the LM head's 2 V k.
double flopsPerToken(const ModelConfig& config, const WindowSettings& windows, bool withHead);

} // namespace baton::engine
