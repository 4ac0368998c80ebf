#include "training/validation.h"

#include "baton/engine/scoring.h"
#include "training/distributed.h"

#include <algorithm>

namespace baton::engine {

std::vector<int64_t> validationTokenShares(const std::vector<int64_t>& sizes, int64_t budget,
                                           bool spread) {
    std::vector<int64_t> take(sizes.size(), 0);
    if (!spread) {
        for (size_t d = 0; d < sizes.size() && budget > 1; ++d) {
            take[d] = std::min(budget, sizes[d]);
            budget -= take[d];
        }
        return take;
    }
    std::vector<size_t> order(sizes.size());
    for (size_t d = 0; d < order.size(); ++d)
        order[d] = d;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return sizes[a] < sizes[b]; });
    for (size_t k = 0; k < order.size(); ++k) {
        const int64_t share = budget / int64_t(order.size() - k);
        take[order[k]] = std::min(share, sizes[order[k]]);
        budget -= take[order[k]];
    }
    return take;
}

Result<ValidationLoss> validationLoss(Model& model, const TokenizedCorpus& validation,
                                      const TrainConfig& c, bool useState, RankGroup* group,
                                      const CancelToken& cancel) {
    // sums[0] NLL, [1] tokens, [2 + 2 i] band i's NLL, [3 + 2 i] its tokens.
    std::vector<double> sums(8, 0.0);
    const auto& docs = validation.docs;
    std::vector<int64_t> sizes;
    for (const auto& doc : docs)
        sizes.push_back(int64_t(doc.size()));
    const auto shares = validationTokenShares(sizes, c.validationMaxTokens, c.validationSpread);
    for (size_t d = 0; d < docs.size(); ++d) {
        const auto& doc = docs[d];
        const int64_t take = shares[d];
        if (take < 2)
            continue;
        if (group && int(d % size_t(group->size())) != group->rank())
            continue;
        ScoreOptions o;
        o.windows = {c.window, c.overlap};
        o.state = useState ? StateSource::On : StateSource::Off;
        o.keepPerToken = false;
        if (!group)
            o.cancel = cancel;
        auto r = scoreTokens(model, std::vector<int32_t>(doc.begin(), doc.begin() + take), o);
        if (!r)
            return r.error();
        sums[0] += r->nllSum;
        sums[1] += double(r->scoredTokens);
        for (size_t i = 0; i < 3; ++i) {
            sums[2 + 2 * i] += r->bands[i].nllSum;
            sums[3 + 2 * i] += double(r->bands[i].tokens);
        }
    }
    if (group)
        if (auto r = group->sumValues(sums); !r)
            return r.error();
    ValidationLoss v;
    v.loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
    for (size_t i = 0; i < 3; ++i)
        v.bands.push_back(sums[3 + 2 * i] > 0 ? sums[2 + 2 * i] / sums[3 + 2 * i] : 0.0);
    return v;
}

} // namespace baton::engine
