#include "baton/engine/scoring.h"

#include "baton/engine/model.h"
#include "baton/engine/sampling.h"
#include "model/model_impl.h"
#include "util/unicode.h"
#include "util/utf8.h"

#include <torch/torch.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <numeric>

namespace baton::engine {

int64_t countWords(std::string_view text) {
    int64_t words = 0;
    bool inWord = false;
    for (size_t pos = 0; pos < text.size();) {
        size_t len;
        const char32_t cp = utf8::decode(text, pos, len);
        const bool space = cp != utf8::kInvalid && unicode::isWhiteSpace(cp);
        if (!space && !inWord)
            ++words;
        inWord = !space;
        pos += len;
    }
    return words;
}

namespace {

// log p(target) for each row of hidden [n, k]: the target's logit minus the row's
// log-sum-exp (one pass over the logits, no full log-softmax materialised); with
// top > 0 also the top most likely tokens of each row and their log-probabilities.
struct Picked {
    torch::Tensor logprobs; // [n], float64 on the CPU
    torch::Tensor topIds;   // [n, top], int64 on the CPU (top > 0)
    torch::Tensor topLogprobs;
};
Picked targetLogProbs(Gpt2Impl& net, const torch::Tensor& hidden, const torch::Tensor& targets,
                      int top) {
    auto logits = net.logits(hidden).to(torch::kFloat32);
    auto logZ = torch::logsumexp(logits, 1, true);
    Picked p;
    p.logprobs =
        (logits.gather(1, targets) - logZ).squeeze(1).to(torch::kCPU, torch::kFloat64).contiguous();
    if (top > 0) {
        auto [values, indices] = logits.topk(top, 1);
        p.topLogprobs = (values - logZ).to(torch::kCPU, torch::kFloat32).contiguous();
        p.topIds = indices.to(torch::kCPU, torch::kLong).contiguous();
    }
    return p;
}

// The windows to run (resolved and checked against the model) for these ids.
Result<WindowSettings> checkedWindows(const Model::Impl& m, const WindowSettings& requested,
                                      const std::vector<int32_t>& ids) {
    const ModelConfig& c = m.info.config;
    const WindowSettings w = resolveWindows(m.info, requested);
    if (auto r = validateWindows(w, c.nPositions); !r)
        return r.error();
    for (int32_t id : ids)
        if (id < 0 || id >= c.vocabSize)
            return makeError(ErrorCode::InvalidArgument,
                             "token id " + std::to_string(id) + " is outside the vocabulary");
    return w;
}

torch::Tensor windowInput(const Model::Impl& m, const std::vector<int32_t>& ids,
                          const WindowSpan& span) {
    std::vector<int64_t> v(ids.begin() + span.start, ids.begin() + span.start + span.length);
    return torch::tensor(v, torch::kLong).to(m.device).unsqueeze(0);
}

// The state entering each window (undefined for window 0) when every window gets
// the true state of the one before.
std::vector<torch::Tensor> trueStates(Model::Impl& m, const std::vector<int32_t>& ids,
                                      const std::vector<WindowSpan>& spans, const WindowSettings& w,
                                      const CancelToken& cancel) {
    std::vector<torch::Tensor> states(spans.size());
    torch::Tensor state;
    for (const WindowSpan& span : spans) {
        if (cancel.cancelled())
            return {};
        states[size_t(span.index)] = state;
        const auto out = m.net->forward(windowInput(m, ids, span),
                                        m.windowArgs(state, 0, span.length, w.window));
        state = m.nextState(out, state, w.window);
    }
    return states;
}

// The states of an ablation: `truth[n]` entered window n under the true recurrence.
std::vector<torch::Tensor> ablatedStates(StateSource source,
                                         const std::vector<torch::Tensor>& truth, uint64_t seed) {
    const size_t n = truth.size();
    std::vector<torch::Tensor> out(n);
    if (n < 2)
        return out;
    const size_t M = n - 1; // windows 1..n-1 carry states
    if (source == StateSource::Mean) {
        auto sum = truth[1].to(torch::kFloat32).clone();
        for (size_t i = 2; i < n; ++i)
            sum += truth[i].to(torch::kFloat32);
        const auto mean = (sum / double(M)).to(truth[1].dtype());
        for (size_t i = 1; i < n; ++i)
            out[i] = mean;
        return out;
    }
    std::vector<size_t> from(M); // window 1 + i takes the state of window 1 + from[i]
    if (source == StateSource::Far) {
        for (size_t i = 0; i < M; ++i)
            from[i] = (i + M / 2) % M;
    } else {
        // Sattolo's algorithm: a random cyclic permutation, so no window keeps its own
        // state (with a single carrying window there is nothing to shuffle with).
        std::iota(from.begin(), from.end(), size_t(0));
        Rng rng(seed);
        for (size_t i = M; i > 1; --i)
            std::swap(from[i - 1], from[rng.next() % (i - 1)]);
    }
    for (size_t i = 0; i < M; ++i)
        out[1 + i] = truth[1 + from[i]];
    return out;
}

Result<ScoreResult> scoreImpl(const Model& model, const std::vector<int32_t>& ids,
                              const ScoreOptions& options, int64_t words) {
    Model::Impl& m = ModelAccess::of(model);
    const auto checked = checkedWindows(m, options.windows, ids);
    if (!checked)
        return checked.error();
    const WindowSettings w = *checked;
    if (options.topAlternatives < 0 || options.topAlternatives > 20 ||
        options.topAlternatives > m.info.config.vocabSize)
        return makeError(ErrorCode::InvalidArgument,
                         "the number of alternatives must be in [0, 20] (and at most the "
                         "vocabulary)");
    const StateSource source = m.recurrent() ? options.state : StateSource::Off;

    ScoreResult result;
    result.windows = w;
    result.state = source;
    result.tokens = static_cast<int64_t>(ids.size());
    result.words = words;
    result.recurrent = m.recurrent() && source != StateSource::Off;
    if (auto warning = windowWarning(m.info, w); !warning.empty())
        result.warnings.push_back(warning);
    for (auto [first, last] : {std::pair<int, int>{0, 15}, {16, 63}, {64, INT32_MAX}}) {
        PositionBand b;
        b.first = first;
        b.last = last;
        result.bands.push_back(b);
    }
    auto bandIndex = [](int64_t position) -> size_t {
        return position < 16 ? 0 : (position < 64 ? 1 : 2);
    };
    const auto spans = planWindows(result.tokens, w);
    result.windowCount = static_cast<int64_t>(spans.size());
    const auto t0 = std::chrono::steady_clock::now();
    try {
        torch::NoGradGuard noGrad;
        std::vector<torch::Tensor> replacement;
        if (source == StateSource::Mean || source == StateSource::Far ||
            source == StateSource::Shuffled) {
            const auto truth = trueStates(m, ids, spans, w, options.cancel);
            if (options.cancel.cancelled())
                return makeError(ErrorCode::Cancelled, "scoring was cancelled");
            replacement = ablatedStates(source, truth, options.shuffleSeed);
        }
        torch::Tensor state; // the true state for the next window
        for (const WindowSpan& span : spans) {
            if (options.cancel.cancelled())
                return makeError(ErrorCode::Cancelled, "scoring was cancelled");
            const torch::Tensor entering =
                source == StateSource::On
                    ? state
                    : (replacement.empty() ? torch::Tensor() : replacement[size_t(span.index)]);
            ForwardArgs args = m.windowArgs(entering, 0, span.length, w.window);
            args.wantSlotMass = entering.defined();
            auto out = m.net->forward(windowInput(m, ids, span), args);
            if (source == StateSource::On)
                state = m.nextState(out, entering, w.window);
            // Position p predicts token start + p + 1.
            const int64_t p0 = span.firstScored - 1 - span.start;
            const int64_t p1 = span.lastScored - 1 - span.start;
            auto hidden = out.hidden.squeeze(0).narrow(0, p0, p1 - p0 + 1);
            std::vector<int64_t> targets(ids.begin() + span.firstScored,
                                         ids.begin() + span.lastScored + 1);
            auto t = torch::tensor(targets, torch::kLong).to(m.device).unsqueeze(1);
            const int top = options.keepPerToken ? options.topAlternatives : 0;
            const Picked picked = targetLogProbs(*m.net, hidden, t, top);
            torch::Tensor mass;
            if (out.slotMass.defined())
                mass = out.slotMass.squeeze(0).to(torch::kCPU, torch::kFloat64).contiguous();
            WindowScore ws;
            ws.index = span.index;
            ws.bandNll.assign(result.bands.size(), 0.0);
            ws.bandTokens.assign(result.bands.size(), 0);
            const double* lp = picked.logprobs.data_ptr<double>();
            const int64_t scored = picked.logprobs.numel();
            for (int64_t i = 0; i < scored; ++i) {
                const int64_t position = p0 + i;
                const size_t bi = bandIndex(position);
                PositionBand& band = result.bands[bi];
                band.tokens += 1;
                band.nllSum -= lp[i];
                ws.bandNll[bi] -= lp[i];
                ws.bandTokens[bi] += 1;
                ws.nllSum -= lp[i];
                if (mass.defined()) {
                    band.slotMassSum += mass.data_ptr<double>()[position];
                    band.slotMassCount += 1;
                }
                if (options.keepPerToken) {
                    TokenScore s;
                    s.index = span.firstScored + i;
                    s.id = ids[static_cast<size_t>(s.index)];
                    s.logprob = static_cast<float>(lp[i]);
                    s.window = static_cast<int32_t>(span.index);
                    s.position = static_cast<int32_t>(position);
                    for (int j = 0; j < top; ++j)
                        s.top.emplace_back(
                            static_cast<int32_t>(picked.topIds.data_ptr<int64_t>()[i * top + j]),
                            picked.topLogprobs.data_ptr<float>()[i * top + j]);
                    result.perToken.push_back(std::move(s));
                }
            }
            ws.scored = scored;
            result.nllSum += ws.nllSum;
            result.scoredTokens += ws.scored;
            result.perWindow.push_back(std::move(ws));
            if (options.progress && !options.progress(span.index + 1, result.windowCount))
                return makeError(ErrorCode::Cancelled, "scoring was cancelled");
        }
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.tokenPerplexity =
        result.scoredTokens > 0 ? std::exp(result.nllSum / double(result.scoredTokens)) : 0.0;
    result.wordPerplexity = result.words > 0 ? std::exp(result.nllSum / double(result.words)) : 0.0;
    return result;
}

// The paired difference of per-window sums: mean = sum(d) / sum(t), and its standard
// error from the residuals d_n - mean t_n (the ratio estimator's linearisation).
PairedDifference pairedDifference(const std::vector<double>& d, const std::vector<int64_t>& t) {
    PairedDifference out;
    double sumD = 0;
    for (size_t i = 0; i < d.size(); ++i) {
        if (t[i] == 0)
            continue;
        sumD += d[i];
        out.tokens += t[i];
        out.windows += 1;
    }
    if (out.tokens == 0)
        return out;
    out.mean = sumD / double(out.tokens);
    if (out.windows < 2)
        return out;
    double sq = 0;
    for (size_t i = 0; i < d.size(); ++i)
        if (t[i] > 0) {
            const double r = d[i] - out.mean * double(t[i]);
            sq += r * r;
        }
    const double n = double(out.windows);
    out.stdError = std::sqrt(sq * n / (n - 1)) / double(out.tokens);
    return out;
}

} // namespace

Result<std::vector<StateReading>> readStates(const Model& model, const std::vector<int32_t>& ids,
                                             const WindowSettings& windows, int top,
                                             const CancelToken& cancel,
                                             const std::function<bool(int64_t, int64_t)>& progress,
                                             const std::vector<WindowSpan>& given) {
    Model::Impl& m = ModelAccess::of(model);
    if (!m.recurrent())
        return makeError(ErrorCode::InvalidArgument,
                         "the model has no recurrent state (a baseline model)");
    if (top < 1)
        return makeError(ErrorCode::InvalidArgument, "top must be at least 1");
    const auto checked = checkedWindows(m, windows, ids);
    if (!checked)
        return checked.error();
    const WindowSettings w = *checked;
    std::vector<StateReading> readings;
    const auto spans = given.empty() ? planWindows(static_cast<int64_t>(ids.size()), w) : given;
    for (const WindowSpan& span : spans)
        if (span.start < 0 || span.length < 1 || span.length > w.window ||
            span.start + span.length > static_cast<int64_t>(ids.size()))
            return makeError(ErrorCode::InvalidArgument,
                             "a window to read is outside the text or longer than T");
    try {
        torch::NoGradGuard noGrad;
        torch::Tensor state;
        for (const WindowSpan& span : spans) {
            if (cancel.cancelled())
                return makeError(ErrorCode::Cancelled, "reading the states was cancelled");
            if (state.defined()) {
                // The state through ln_f and the LM head (the mean over its slots).
                auto logits = m.net->logits(m.net->ln_f(state)).to(torch::kFloat32);
                auto probs = torch::softmax(logits, -1).reshape({-1, logits.size(-1)}).mean(0);
                const int64_t k = std::min<int64_t>(top, probs.size(0));
                auto best = torch::topk(probs, k);
                auto p = std::get<0>(best).to(torch::kCPU).contiguous();
                auto i = std::get<1>(best).to(torch::kCPU).contiguous();
                StateReading r;
                r.window = span.index;
                r.firstToken = span.start;
                for (int64_t j = 0; j < k; ++j) {
                    r.ids.push_back(static_cast<int32_t>(i.data_ptr<int64_t>()[j]));
                    r.probs.push_back(p.data_ptr<float>()[j]);
                }
                readings.push_back(std::move(r));
            }
            auto out = m.net->forward(windowInput(m, ids, span),
                                      m.windowArgs(state, 0, span.length, w.window));
            state = m.nextState(out, state, w.window);
            if (progress && !progress(span.index + 1, static_cast<int64_t>(spans.size())))
                return makeError(ErrorCode::Cancelled, "reading the states was cancelled");
        }
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    }
    return readings;
}

const char* stateSourceName(StateSource source) {
    switch (source) {
    case StateSource::On:
        return "on";
    case StateSource::Off:
        return "off";
    case StateSource::Mean:
        return "mean";
    case StateSource::Far:
        return "far";
    case StateSource::Shuffled:
        return "shuffled";
    }
    return "?";
}

Result<StateSource> parseStateSource(std::string_view name) {
    for (StateSource s : {StateSource::On, StateSource::Off, StateSource::Mean, StateSource::Far,
                          StateSource::Shuffled})
        if (name == stateSourceName(s))
            return s;
    return makeError(ErrorCode::InvalidArgument, "unknown state source '" + std::string(name) +
                                                     "' (use on, off, mean, far or shuffled)");
}

Result<PairedComparison> comparePaired(const std::vector<WindowScore>& a,
                                       const std::vector<WindowScore>& b) {
    if (a.size() != b.size())
        return makeError(ErrorCode::InvalidArgument, "the two scores cover different windows (" +
                                                         std::to_string(a.size()) + " and " +
                                                         std::to_string(b.size()) + ")");
    const size_t bands = a.empty() ? 0 : a.front().bandNll.size();
    std::vector<double> d(a.size());
    std::vector<int64_t> t(a.size());
    std::vector<std::vector<double>> bd(bands, std::vector<double>(a.size()));
    std::vector<std::vector<int64_t>> bt(bands, std::vector<int64_t>(a.size()));
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].scored != b[i].scored || a[i].bandTokens != b[i].bandTokens ||
            a[i].bandNll.size() != bands)
            return makeError(ErrorCode::InvalidArgument,
                             "window " + std::to_string(i) +
                                 " scores different tokens in the two results");
        d[i] = a[i].nllSum - b[i].nllSum;
        t[i] = a[i].scored;
        for (size_t k = 0; k < bands; ++k) {
            bd[k][i] = a[i].bandNll[k] - b[i].bandNll[k];
            bt[k][i] = a[i].bandTokens[k];
        }
    }
    PairedComparison out;
    out.all = pairedDifference(d, t);
    for (size_t k = 0; k < bands; ++k)
        out.bands.push_back(pairedDifference(bd[k], bt[k]));
    return out;
}

Result<PairedDifference> comparePairedSpans(const std::vector<ByteSpanScore>& a,
                                            const std::vector<ByteSpanScore>& b) {
    if (a.size() != b.size())
        return makeError(ErrorCode::InvalidArgument,
                         "the two scores cut the text into different spans (" +
                             std::to_string(a.size()) + " and " + std::to_string(b.size()) + ")");
    std::vector<double> d(a.size());
    std::vector<int64_t> t(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].bytes != b[i].bytes)
            return makeError(ErrorCode::InvalidArgument,
                             "span " + std::to_string(i) + " holds different bytes in the two");
        d[i] = a[i].nllSum - b[i].nllSum;
        t[i] = a[i].bytes;
    }
    return pairedDifference(d, t);
}

Result<ScoreResult> scoreTokens(const Model& model, const std::vector<int32_t>& ids,
                                const ScoreOptions& options) {
    const auto tokenizer = model.tokenizer();
    return scoreImpl(model, ids, options, tokenizer ? countWords(tokenizer->decode(ids)) : 0);
}

Result<ScoreResult> scoreText(const Model& model, std::string_view text,
                              const ScoreOptions& options) {
    return scoreImpl(model, model.tokenizer()->encode(text), options, countWords(text));
}

} // namespace baton::engine
