// The truncations of the sampler chain, each as its reference implementation defines it
// (cited with each); sampler.cpp runs them in the options' order.
#include "inference/sampler_stages.h"
#include "inference/logit_order.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace baton::engine::stages {

// Probabilities at temperature t over the candidates, most likely first.
void softmax(Candidates& c, double t) {
    sortByLogit(
        c, [](const auto& x) { return x.logit; }, [](const auto& x) { return x.id; });
    double total = 0;
    for (auto& x : c) {
        x.p = std::exp((double(x.logit) - double(c.front().logit)) / t);
        total += x.p;
    }
    for (auto& x : c)
        x.p /= total;
}

void renormalise(Candidates& c) {
    double total = 0;
    for (const auto& x : c)
        total += x.p;
    for (auto& x : c)
        x.p /= total;
}

// Tail-free sampling (llama.cpp's llama_sample_tail_free, before its removal): the
// second differences of the sorted probabilities, normalised, summed until they pass z.
void tailFree(Candidates& c, double z) {
    if (z >= 1 || c.size() <= 2)
        return;
    std::vector<double> first(c.size() - 1), second(c.size() - 2);
    for (size_t i = 0; i + 1 < c.size(); ++i)
        first[i] = c[i].p - c[i + 1].p;
    double sum = 0;
    for (size_t i = 0; i + 1 < first.size(); ++i) {
        second[i] = std::abs(first[i] - first[i + 1]);
        sum += second[i];
    }
    for (double& d : second)
        d = sum > 1e-6 ? d / sum : 1.0 / double(second.size());
    double cum = 0;
    size_t last = c.size();
    for (size_t i = 0; i < second.size(); ++i) {
        cum += second[i];
        if (cum > z && i >= 1) {
            last = i;
            break;
        }
    }
    c.resize(last);
    renormalise(c);
}

// Locally typical sampling (llama.cpp's llama_sampler_typical_apply): tokens by how far
// their surprise is from the entropy, kept until their mass passes p.
void typical(Candidates& c, double p) {
    if (p >= 1)
        return;
    double entropy = 0;
    for (const auto& x : c)
        if (x.p > 0)
            entropy -= x.p * std::log(x.p);
    std::vector<std::pair<double, size_t>> scored;
    for (size_t i = 0; i < c.size(); ++i)
        scored.emplace_back(std::abs(-std::log(c[i].p) - entropy), i);
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    double cum = 0;
    size_t last = scored.size();
    for (size_t i = 0; i < scored.size(); ++i) {
        cum += c[scored[i].second].p;
        if (cum > p) {
            last = i + 1;
            break;
        }
    }
    Candidates kept;
    for (size_t i = 0; i < last; ++i)
        kept.push_back(c[scored[i].second]);
    std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
        return a.p != b.p ? a.p > b.p : a.id < b.id;
    });
    c = std::move(kept);
    renormalise(c);
}

// Top-p (llama.cpp's): the likeliest tokens until their mass reaches p.
void topP(Candidates& c, double p) {
    if (p >= 1)
        return;
    double cum = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        cum += c[i].p;
        if (cum >= p) {
            c.resize(i + 1);
            break;
        }
    }
    renormalise(c);
}

// Keeps the tokens with p >= floor (at least the likeliest).
void keepAtLeast(Candidates& c, double floor) {
    size_t keep = 1;
    while (keep < c.size() && c[keep].p >= floor)
        ++keep;
    c.resize(keep);
    renormalise(c);
}

double entropyOf(const Candidates& c) {
    double h = 0;
    for (const auto& x : c)
        if (x.p > 0)
            h -= x.p * std::log(x.p);
    return h;
}

// Top-n-sigma (llama.cpp's): logits more than n standard deviations below the best
// are out. First in the chain it reads every token's logit; later, the candidates'.
void topNSigma(std::vector<float>& logits, double n) {
    double sum = 0, sq = 0, count = 0;
    float best = -std::numeric_limits<float>::infinity();
    for (float l : logits)
        if (std::isfinite(l)) {
            sum += l;
            sq += double(l) * l;
            count += 1;
            best = std::max(best, l);
        }
    const double mean = sum / std::max(1.0, count);
    const double sigma = std::sqrt(std::max(0.0, sq / std::max(1.0, count) - mean * mean));
    const double floor = best - n * sigma;
    for (float& l : logits)
        if (l < floor)
            l = -std::numeric_limits<float>::infinity();
}

} // namespace baton::engine::stages
