// A run's validation loss: the held-out documents scored in windows as generation reads
// them, with the recurrent state on or off; shared out among the ranks of a
// data-parallel run.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/model.h"
#include "baton/engine/training.h"
#include "training/corpus.h"

#include <vector>

namespace baton::engine {

class RankGroup;

struct ValidationLoss {
    double loss = 0;           // mean NLL per scored token (nats)
    std::vector<double> bands; // mean NLL by position band 0-15, 16-63, rest
};

// Scores config.validationMaxTokens tokens of the documents (validationTokenShares) with
// windows of config.window and config.overlap. With a group, each rank scores every N-th document
// and the sums are added up, so every rank returns the same loss; the scoring is then
// not cancelled midway (one rank leaving would leave the others waiting).
// How many tokens validation scores from the start of each document: with spread, equal
// shares of the budget (what a short document leaves goes to the others); without, the
// first documents' tokens in order until the budget is spent.
std::vector<int64_t> validationTokenShares(const std::vector<int64_t>& sizes, int64_t budget,
                                           bool spread);

Result<ValidationLoss> validationLoss(Model& model, const TokenizedCorpus& validation,
                                      const TrainConfig& config, bool useState, RankGroup* group,
                                      const CancelToken& cancel);

} // namespace baton::engine
