// Held-out text kept out of training: validation works taken out of a corpus by name,
// and the check that no held-out text, nor a long stretch of it, is in the training
// stream (a test book, a validation work, or a second edition of one of them under
// another name).
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/training.h"
#include "training/corpus.h"

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

// Whether a document's name is `work` or ends with "/" and `work`.
bool namesWork(const std::string& name, const std::string& work);

// Moves the documents named by `works` from `corpus` into `validation` (appended in
// the order of `works`). A document matches a work by namesWork():
// "library-07.tar.xz/cbm/Title.txt", or "cbm/Title.txt".
// InvalidArgument naming a work that matches no document, or more than one.
Result<void> takeWorks(TokenizedCorpus& corpus, TokenizedCorpus& validation,
                       const std::vector<std::string>& works);

// Stretches shorter than this many tokens are not looked for.
constexpr int kOverlapGram = 32;

struct Overlap {
    int64_t tokens = 0;            // the longest stretch found; 0 when no kOverlapGram tokens match
    std::string heldOut, training; // the documents it was found in
    int64_t trainingOffset = 0;    // where it starts in the training document (tokens)
};

// The longest stretch of a training document every kOverlapGram consecutive tokens of
// which appear in the held-out documents (found by a rolling hash of every
// kOverlapGram-token run of the held-out text, each hit compared token by token).
// Uses up to `threads` threads (0: one per core).
Overlap longestOverlap(const TokenizedCorpus& training,
                       const std::vector<const TokenizedCorpus*>& heldOut, int threads = 0);

} // namespace baton::engine
