// Memory episodes: a fact stated in one window and asked for d windows later, built
// into a token stream of ordinary book text. The memory probe (probe.cpp) scores them on
// held-out books; training mixes them into fine-tuning data (trainer.cpp) with their
// own templates and names, disjoint from the probe's.
#pragma once

#include "baton/engine/sampling.h"
#include "baton/engine/tokenizer.h"
#include "baton/engine/windows.h"

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

enum class EpisodeSet {
    Training, // the templates and names fine-tuning sees
    Probe,    // held out: other templates, other names
};

// One fact and its question, as text. Every alternative starts with a space and
// continues the question; alternatives[answer] is the right one.
struct Episode {
    std::string kind; // "colour", "place" or "name"
    std::string fact; // a sentence, with a leading space
    std::string question;
    std::vector<std::string> alternatives;
    int answer = 0;
};

constexpr int kEpisodeAlternatives = 8;

Episode makeEpisode(EpisodeSet set, Rng& rng);

// Which tokens end a sentence (their text ends in . ! or ?, or holds a new line):
// episodes are inserted after them, so that they read as sentences of their own.
std::vector<bool> sentenceEndTokens(const Tokenizer& tokenizer);

// An episode placed in a token stream, in the stream's coordinates.
struct PlacedEpisode {
    int64_t factStart = 0, factEnd = 0; // [start, end)
    int64_t questionStart = 0, questionEnd = 0;
};

// Inserts `fact` into `stream` in window `factWindow` (entirely before window
// factWindow + 1 starts, so that with d >= 1 the question's window cannot see it), and
// `question` in window factWindow + d (in its scored part: positions o and up; after
// the fact when d = 0) leaving `room` tokens after it in that window. Insertion points
// are sentence ends where there are any. The stream is cut right after the question
// when `cutAfterQuestion` (the probe), else cut back to its original length (training).
// Returns false when the stream is too short or a window too small for the episode.
bool placeEpisode(std::vector<int32_t>& stream, const std::vector<int32_t>& fact,
                  const std::vector<int32_t>& question, int64_t room, int64_t factWindow,
                  int distance, const WindowSettings& windows, const std::vector<bool>& sentenceEnd,
                  bool cutAfterQuestion, Rng& rng, PlacedEpisode& placed);

// Mixes `perSequence` episodes of the training set into one training sequence of
// `bpttWindows` windows (each with its answer and a full stop after the question; the
// stream keeps its length). Distances are drawn from 0..4 within blocks of windows
// that do not overlap, so at most one fact is open at a time.
void mixEpisodes(std::vector<int32_t>& stream, int perSequence, int bpttWindows,
                 const WindowSettings& windows, const Tokenizer& tokenizer,
                 const std::vector<bool>& sentenceEnd, Rng& rng);

} // namespace baton::engine
