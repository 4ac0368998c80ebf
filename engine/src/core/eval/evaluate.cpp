// A text under several settings, row by row, and its losses by token and by span of
// bytes (scoring.h: evaluate, tokenLosses, scoreByteSpans).
#include "baton/engine/model.h"
#include "baton/engine/scoring.h"
#include "baton/engine/tokenizer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace baton::engine {

TokenLosses tokenLosses(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                        const ScoreResult& scored, size_t textBytes) {
    TokenLosses out;
    out.windows = scored.windows;
    out.withState = scored.state == StateSource::On || !scored.recurrent;
    out.byteEnd.reserve(ids.size());
    int64_t end = 0;
    for (int32_t id : ids) {
        end += int64_t(tokenizer.tokenBytes(id).size());
        out.byteEnd.push_back(std::min<int64_t>(end, int64_t(textBytes)));
    }
    out.nll.assign(ids.size(), std::numeric_limits<float>::quiet_NaN());
    for (const TokenScore& t : scored.perToken)
        if (t.index >= 0 && t.index < int64_t(ids.size()))
            out.nll[size_t(t.index)] = -t.logprob;
    return out;
}

std::vector<ByteSpanScore> scoreByteSpans(const TokenLosses& losses, int64_t textBytes,
                                          int64_t spanBytes) {
    std::vector<ByteSpanScore> spans;
    if (spanBytes < 1 || textBytes < 1)
        return spans;
    spans.resize(size_t((textBytes + spanBytes - 1) / spanBytes));
    for (size_t k = 0; k < spans.size(); ++k)
        spans[k].bytes = std::min<int64_t>(spanBytes, textBytes - int64_t(k) * spanBytes);
    for (size_t i = 0; i < losses.nll.size() && i < losses.byteEnd.size(); ++i) {
        if (std::isnan(losses.nll[i]) || losses.byteEnd[i] < 1)
            continue;
        const size_t k = size_t((losses.byteEnd[i] - 1) / spanBytes);
        spans[std::min(k, spans.size() - 1)].nllSum += double(losses.nll[i]);
    }
    return spans;
}

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
            out.losses =
                tokenLosses(*tokenizer, tokenizer->encode(request.text), *r, request.text.size());
            out.losses.withState = runs[i].second;
        }
        out.score = std::move(*r);
        if (row)
            row(std::move(out));
    }
    return {};
}

} // namespace baton::engine
