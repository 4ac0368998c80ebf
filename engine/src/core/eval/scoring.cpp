#include "baton/engine/scoring.h"

#include "baton/engine/model.h"
#include "model/model_impl.h"
#include "util/unicode.h"
#include "util/utf8.h"

#include <torch/torch.h>

#include <chrono>
#include <climits>
#include <cmath>

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
// log-sum-exp (one pass over the logits, no full log-softmax materialised).
torch::Tensor targetLogProbs(Gpt2Impl& net, const torch::Tensor& hidden,
                             const torch::Tensor& targets) {
    auto logits = net.logits(hidden).to(torch::kFloat32);
    return logits.gather(1, targets).squeeze(1) - torch::logsumexp(logits, 1);
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

Result<ScoreResult> scoreImpl(const Model& model, const std::vector<int32_t>& ids,
                              const ScoreOptions& options, int64_t words) {
    Model::Impl& m = model.impl();
    const auto checked = checkedWindows(m, options.windows, ids);
    if (!checked)
        return checked.error();
    const WindowSettings w = *checked;

    ScoreResult result;
    result.windows = w;
    result.tokens = static_cast<int64_t>(ids.size());
    result.words = words;
    result.recurrent = m.recurrent() && options.useState;
    if (auto warning = windowWarning(m.info, w); !warning.empty())
        result.warnings.push_back(warning);
    for (auto [first, last] : {std::pair<int, int>{0, 15}, {16, 63}, {64, INT32_MAX}}) {
        PositionBand b;
        b.first = first;
        b.last = last;
        result.bands.push_back(b);
    }
    auto bandOf = [&](int64_t position) -> PositionBand& {
        return result.bands[position < 16 ? 0 : (position < 64 ? 1 : 2)];
    };
    const auto spans = planWindows(result.tokens, w);
    result.windowCount = static_cast<int64_t>(spans.size());
    const auto t0 = std::chrono::steady_clock::now();
    try {
        torch::NoGradGuard noGrad;
        torch::Tensor state; // h_prev for the next window
        for (const WindowSpan& span : spans) {
            if (options.cancel.cancelled())
                return makeError(ErrorCode::Cancelled, "scoring was cancelled");
            std::vector<int64_t> v(ids.begin() + span.start,
                                   ids.begin() + span.start + span.length);
            auto input = torch::tensor(v, torch::kLong).to(m.device).unsqueeze(0);
            ForwardArgs args;
            if (m.recurrent()) {
                args.layerWeights = m.layerWeights;
                args.slotLayer = m.insertBlock();
                args.slotBias = m.slotBias;
                if (options.useState && state.defined()) {
                    args.state = state;
                    args.wantSlotMass = true;
                }
            }
            auto out = m.net->forward(input, args);
            if (m.recurrent() && options.useState)
                state = m.stateFromPooled(out.pooled, span.length);
            // Position p predicts token start + p + 1.
            const int64_t p0 = span.firstScored - 1 - span.start;
            const int64_t p1 = span.lastScored - 1 - span.start;
            auto hidden = out.hidden.squeeze(0).narrow(0, p0, p1 - p0 + 1);
            std::vector<int64_t> targets(ids.begin() + span.firstScored,
                                         ids.begin() + span.lastScored + 1);
            auto t = torch::tensor(targets, torch::kLong).to(m.device).unsqueeze(1);
            auto picked =
                targetLogProbs(*m.net, hidden, t).to(torch::kCPU, torch::kFloat64).contiguous();
            torch::Tensor mass;
            if (out.slotMass.defined())
                mass = out.slotMass.squeeze(0).to(torch::kCPU, torch::kFloat64).contiguous();
            const double* lp = picked.data_ptr<double>();
            for (int64_t i = 0; i < picked.numel(); ++i) {
                const int64_t position = p0 + i;
                result.nllSum -= lp[i];
                PositionBand& band = bandOf(position);
                band.tokens += 1;
                band.nllSum -= lp[i];
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
                    result.perToken.push_back(s);
                }
            }
            result.scoredTokens += picked.numel();
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

} // namespace

Result<std::vector<StateReading>>
readStates(const Model& model, const std::vector<int32_t>& ids, const WindowSettings& windows,
           int top, const CancelToken& cancel,
           const std::function<bool(int64_t, int64_t)>& progress) {
    Model::Impl& m = model.impl();
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
    const auto spans = planWindows(static_cast<int64_t>(ids.size()), w);
    try {
        torch::NoGradGuard noGrad;
        torch::Tensor state;
        for (const WindowSpan& span : spans) {
            if (cancel.cancelled())
                return makeError(ErrorCode::Cancelled, "reading the states was cancelled");
            if (state.defined()) {
                // h_prev through ln_f and the LM head.
                auto logits = m.net->logits(m.net->ln_f(state)).to(torch::kFloat32).reshape({-1});
                auto probs = torch::softmax(logits, 0);
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
            std::vector<int64_t> v(ids.begin() + span.start,
                                   ids.begin() + span.start + span.length);
            auto input = torch::tensor(v, torch::kLong).to(m.device).unsqueeze(0);
            ForwardArgs args;
            args.layerWeights = m.layerWeights;
            args.slotLayer = m.insertBlock();
            args.slotBias = m.slotBias;
            if (state.defined())
                args.state = state;
            auto out = m.net->forward(input, args);
            state = m.stateFromPooled(out.pooled, span.length);
            if (progress && !progress(span.index + 1, static_cast<int64_t>(spans.size())))
                return makeError(ErrorCode::Cancelled, "reading the states was cancelled");
        }
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    }
    return readings;
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
