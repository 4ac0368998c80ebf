// The stages of the sampler chain over candidates sorted by likelihood: the
// probabilities (softmax at a temperature), the truncations (tail-free, typical-p,
// top-p, a probability floor) and top-n-sigma over raw logits. Sampler::truncate runs
// them in the order the options give.
#pragma once

#include "baton/engine/sampling.h"

#include <vector>

namespace baton::engine::stages {

using Candidates = std::vector<Sampler::Candidate>;

// Probabilities at temperature t over the candidates, most likely first.
void softmax(Candidates& c, double t);
// The probabilities scaled to sum to 1.
void renormalise(Candidates& c);
// Tail-free sampling with parameter z (off at 1).
void tailFree(Candidates& c, double z);
// Locally typical sampling with mass p (off at 1).
void typical(Candidates& c, double p);
// Top-p: the likeliest tokens until their mass reaches p (off at 1).
void topP(Candidates& c, double p);
// Keeps the tokens with p >= floor (at least the likeliest).
void keepAtLeast(Candidates& c, double floor);
// The entropy of the candidates' distribution, in nats.
double entropyOf(const Candidates& c);
// Top-n-sigma: logits more than n standard deviations below the best become -inf.
void topNSigma(std::vector<float>& logits, double n);

} // namespace baton::engine::stages
