// A text under several settings, row by row (scoring.h: evaluate).
#include "baton/engine/model.h"
#include "baton/engine/scoring.h"
#include "baton/engine/tokenizer.h"

#include <algorithm>
#include <limits>

namespace baton::engine {

namespace {

// Where each token ends in the text it was encoded from (bytes, at most textBytes).
std::vector<int64_t> tokenByteEnds(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                                   size_t textBytes) {
    std::vector<int64_t> ends;
    ends.reserve(ids.size());
    int64_t end = 0;
    for (int32_t id : ids) {
        end += int64_t(tokenizer.tokenBytes(id).size());
        ends.push_back(std::min<int64_t>(end, int64_t(textBytes)));
    }
    return ends;
}

} // namespace

Result<void> evaluate(const Model& model, const EvaluateRequest& request,
                      const std::function<void(EvaluationRow)>& row, const CancelToken& cancel,
                      const JobProgress& progress) {
    std::vector<std::pair<WindowSettings, bool>> runs;
    for (const auto& w : request.settings) {
        runs.push_back({w, true});
        if (request.alsoWithoutState && model.recurrent())
            runs.push_back({w, false});
    }
    for (size_t i = 0; i < runs.size(); ++i) {
        ScoreOptions o;
        o.windows = runs[i].first;
        o.state = runs[i].second ? StateSource::On : StateSource::Off;
        o.keepPerToken = request.keepPerToken;
        o.cancel = cancel;
        o.progress = [&](int64_t done, int64_t total) {
            if (progress)
                progress((double(i) + (total > 0 ? double(done) / double(total) : 1.0)) /
                             double(runs.size()),
                         "setting " + std::to_string(i + 1) + " of " + std::to_string(runs.size()));
            return !cancel.cancelled();
        };
        auto r = scoreText(model, request.text, o);
        if (!r)
            return r.error();
        EvaluationRow out;
        out.withState = runs[i].second;
        if (request.keepPerToken) {
            const auto tokenizer = model.tokenizer();
            const std::vector<int32_t> ids = tokenizer->encode(request.text);
            out.losses.windows = r->windows;
            out.losses.withState = runs[i].second;
            out.losses.byteEnd = tokenByteEnds(*tokenizer, ids, request.text.size());
            out.losses.nll.assign(ids.size(), std::numeric_limits<float>::quiet_NaN());
            for (const TokenScore& t : r->perToken)
                if (t.index >= 0 && t.index < int64_t(ids.size()))
                    out.losses.nll[size_t(t.index)] = -t.logprob;
        }
        out.score = std::move(*r);
        if (row)
            row(std::move(out));
    }
    return {};
}

} // namespace baton::engine
