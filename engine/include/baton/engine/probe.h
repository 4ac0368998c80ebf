// The memory probe: does a model remember a fact from an earlier window?
//
// Each episode takes ordinary text from a held-out book, states a fact in it ("Mr. Crane
// hid the key in the cellar.") in one window, and asks for it d windows later ("The key
// had been hidden in the"). The model's answer is the alternative it gives the highest
// log-probability among eight (chance: 1/8). A baseline model cannot see a fact from an
// earlier window, so it must be at chance for d >= 1; a recurrent model can only know it
// through its state. The probe's templates and names are disjoint from those that
// training with --episodes mixes into fine-tuning data.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/scoring.h"
#include "baton/engine/windows.h"

#include <functional>
#include <string>
#include <vector>

namespace baton::engine {

class Model;

struct ProbeOptions {
    WindowSettings windows; // see resolveWindows(): window 0 = the model's default
    std::vector<int> distances{0, 1, 2, 4};
    int episodes = 200; // per distance
    uint64_t seed = 1;  // which book passages, facts and answers
    // The states a recurrent model's question window receives (see StateSource; Mean is
    // the mean over the episodes of one distance, Far and Shuffled the state of another
    // episode). Ignored for a baseline model.
    std::vector<StateSource> states{StateSource::On};
    CancelToken cancel;
    // (episodes done, episodes in all); false cancels.
    std::function<bool(int64_t, int64_t)> progress;
};

struct ProbeCell {
    int distance = 0;
    StateSource state = StateSource::On; // Off for a baseline
    int episodes = 0;
    int correct = 0;
    double meanLogProb = 0; // of the right answer (nats, summed over its tokens)
    double meanShare = 0;   // the right answer's probability among the alternatives
    double accuracy() const { return episodes ? double(correct) / episodes : 0.0; }
    double accuracyStdError() const;
};

struct ProbeResult {
    WindowSettings windows;
    bool recurrent = false;
    double chance = 0;            // 1 / alternatives
    std::vector<ProbeCell> cells; // distance-major, then state
};

// Episodes from the texts (one or more books); InvalidArgument when the texts are too
// short for the windows and distances, or the windows too small for an episode.
Result<ProbeResult> runProbe(const Model& model, const std::vector<std::string>& texts,
                             const ProbeOptions& options);

} // namespace baton::engine
