#include "training/validation.h"

#include "baton/engine/scoring.h"
#include "training/distributed.h"

#include <algorithm>

namespace baton::engine {

Result<ValidationLoss> validationLoss(Model& model, const TokenizedCorpus& validation,
                                      const TrainConfig& c, bool useState, RankGroup* group,
                                      const CancelToken& cancel) {
    // sums[0] NLL, [1] tokens, [2 + 2 i] band i's NLL, [3 + 2 i] its tokens.
    std::vector<double> sums(8, 0.0);
    int64_t budget = c.validationMaxTokens;
    const auto& docs = validation.docs;
    for (size_t d = 0; d < docs.size() && budget > 1; ++d) {
        const auto& doc = docs[d];
        const int64_t take = std::min<int64_t>(budget, int64_t(doc.size()));
        budget -= take;
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
