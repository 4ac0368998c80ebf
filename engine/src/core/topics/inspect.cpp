// The topics view of a text (topics.h: inspectTopics).
#include "baton/engine/model.h"
#include "baton/engine/scoring.h"
#include "baton/engine/tokenizer.h"
#include "baton/engine/topics.h"

#include <algorithm>

namespace baton::engine {

Result<TopicsInspection> inspectTopics(const Model& model, const TopicsInspectRequest& request,
                                       const CancelToken& cancel, const JobProgress& progress) {
    auto topics = TopicModel::load(request.topicModelPath);
    if (!topics)
        return topics.error();
    const WindowSettings w = resolveWindows(model.info(), request.windows);
    if (auto ok = validateWindows(w, model.config().nPositions); !ok)
        return ok.error();
    const auto tokenizer = model.tokenizer();
    const std::vector<int32_t> ids = tokenizer->encode(request.text);
    std::vector<int64_t> byteEnd;
    int64_t end = 0;
    for (int32_t id : ids)
        byteEnd.push_back(std::min<int64_t>(end += int64_t(tokenizer->tokenBytes(id).size()),
                                            int64_t(request.text.size())));
    auto report = [&](double f, const std::string& m) {
        if (progress)
            progress(f, m);
    };
    TopicsInspection out;
    out.topics = topics->topics();
    for (int t = 0; t < out.topics; ++t) {
        std::vector<std::string> words;
        for (const auto& [word, p] : topics->topWords(t, request.topWords))
            words.push_back(word);
        out.topWords.push_back(std::move(words));
    }
    out.recurrent = model.recurrent();
    std::vector<WindowSpan> spans;
    if (request.windowStartBytes.empty()) {
        spans = planWindows(int64_t(ids.size()), w);
    } else {
        // The token each window begins with: the first that ends past its start byte.
        std::vector<int64_t> starts;
        for (int64_t b : request.windowStartBytes) {
            const auto t =
                int64_t(std::upper_bound(byteEnd.begin(), byteEnd.end(), b) - byteEnd.begin());
            if (t < int64_t(ids.size()) && (starts.empty() || t > starts.back()))
                starts.push_back(t);
        }
        for (size_t i = 0; i < starts.size(); ++i) {
            WindowSpan s;
            s.index = int64_t(i);
            s.start = starts[i];
            s.length = std::min<int64_t>(
                (i + 1 < starts.size() ? starts[i + 1] : int64_t(ids.size())) - s.start, w.window);
            spans.push_back(s);
        }
    }
    // Topic distributions: about half of the work; the states the rest.
    const double topicShare = out.recurrent ? 0.5 : 0.9;
    for (const WindowSpan& span : spans) {
        if (cancel.cancelled())
            return makeError(ErrorCode::Cancelled, "the topics view was cancelled");
        WindowTopics wt;
        wt.window = span.index;
        wt.firstToken = span.start;
        wt.firstByte = span.start > 0 ? byteEnd[size_t(span.start - 1)] : 0;
        const std::vector<int32_t> window(ids.begin() + span.start,
                                          ids.begin() + span.start + span.length);
        wt.theta = topics->infer(tokenizer->decode(window), request.inferIterations).theta;
        out.windows.push_back(std::move(wt));
        report(topicShare * double(span.index + 1) / double(spans.size()),
               "topics of window " + std::to_string(span.index + 1) + " of " +
                   std::to_string(spans.size()));
    }
    if (out.recurrent) {
        auto readings = readStates(
            model, ids, w, request.stateTokens, cancel,
            [&](int64_t done, int64_t all) {
                report(topicShare + (1 - topicShare) * double(done) / double(all),
                       "state of window " + std::to_string(done) + " of " + std::to_string(all));
                return !cancel.cancelled();
            },
            spans);
        if (!readings)
            return readings.error();
        for (const StateReading& r : *readings) {
            if (r.window < 0 || r.window >= int64_t(out.windows.size()))
                continue;
            WindowTopics& wt = out.windows[size_t(r.window)];
            for (size_t i = 0; i < r.ids.size(); ++i) {
                wt.stateTokens.push_back(tokenizer->decode({r.ids[i]}));
                wt.stateProbs.push_back(r.probs[i]);
            }
        }
    }
    const int64_t split = request.continuationByte;
    if (split > 0 && split < int64_t(request.text.size())) {
        // The context: the last T tokens that end before the continuation.
        size_t n = 0;
        while (n < byteEnd.size() && byteEnd[n] <= split)
            ++n;
        const size_t from = n > size_t(w.window) ? n - size_t(w.window) : 0;
        const std::vector<int32_t> context(ids.begin() + int64_t(from), ids.begin() + int64_t(n));
        out.context = topics->infer(tokenizer->decode(context), request.inferIterations).theta;
        out.continuation = topics
                               ->infer(std::string_view(request.text).substr(size_t(split)),
                                       request.inferIterations)
                               .theta;
        out.jsdBits = jensenShannonBits(out.context, out.continuation);
    }
    report(1.0, "done");
    return out;
}

} // namespace baton::engine
