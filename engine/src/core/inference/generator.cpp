#include "inference/generator_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace baton::engine {

const char* stopReasonName(StopReason reason) {
    switch (reason) {
    case StopReason::MaxTokens:
        return "max-tokens";
    case StopReason::StopString:
        return "stop-string";
    case StopReason::EndOfText:
        return "end-of-text";
    case StopReason::Cancelled:
        return "cancelled";
    case StopReason::Callback:
        return "stopped";
    }
    return "?";
}

Generator::Generator(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)) {}
Generator::~Generator() = default;

Result<std::unique_ptr<Generator>> Generator::create(std::shared_ptr<const Model> model,
                                                     const WindowSettings& windows, bool useState) {
    if (!model)
        return makeError(ErrorCode::InvalidArgument, "no model");
    const WindowSettings w = resolveWindows(model->info(), windows);
    if (auto r = validateWindows(w, model->config().nPositions); !r)
        return r.error();
    try {
        torch::NoGradGuard noGrad;
        return std::unique_ptr<Generator>(
            new Generator(std::make_unique<Impl>(std::move(model), w, useState)));
    } catch (const c10::Error& e) {
        return torchError(e);
    }
}

Result<void> Generator::pin(const std::vector<int32_t>& ids) {
    Impl& g = *m_impl;
    if (g.streamLength != 0 || g.rollovers != 0 || g.cache.length != 0 || g.state.defined())
        return makeError(ErrorCode::InvalidArgument,
                         "tokens can be pinned to the windows only before anything is read");
    if (auto r = checkPinned(ids, g.w, g.m.info.config.vocabSize); !r)
        return r.error();
    try {
        torch::NoGradGuard noGrad;
        g.pinned = ids;
        g.beginWindow();
    } catch (const c10::Error& e) {
        g.pinned.clear();
        g.cache.clear();
        return torchError(e);
    }
    return {};
}

void Generator::mark() {
    Impl& g = *m_impl;
    torch::NoGradGuard noGrad;
    g.marked.streamLength = g.streamLength;
    g.marked.rollovers = g.rollovers;
    g.marked.cacheLength = g.cache.length;
    g.marked.windowSize = g.window.size();
    g.marked.pooled = g.pooled.defined() ? g.pooled.clone() : torch::Tensor();
    g.marked.lastLogits = g.lastLogits;
}

bool Generator::rewind() {
    Impl& g = *m_impl;
    const Impl::Mark& k = g.marked;
    if (k.streamLength < 0 || k.rollovers != g.rollovers || g.streamLength < k.streamLength)
        return false;
    torch::NoGradGuard noGrad;
    g.streamLength = k.streamLength;
    g.cache.length = k.cacheLength; // later keys and values are overwritten when read again
    g.window.resize(k.windowSize);
    while (!g.checkpoints.empty() && g.checkpoints.back().cacheLength > k.cacheLength)
        g.checkpoints.pop_back();
    if (g.guideAt >= 0 &&
        static_cast<int64_t>(g.pinned.size()) + g.guideAt >= k.cacheLength) { // read after the mark
        g.guideAt = -1;
        g.guidePooled = torch::Tensor();
    }
    if (k.pooled.defined())
        g.pooled.copy_(k.pooled);
    g.lastLogits = k.lastLogits;
    return true;
}

std::vector<float> Generator::currentState() const {
    if (!m_impl->state.defined())
        return {};
    return toHost(m_impl->state);
}

const WindowSettings& Generator::windows() const {
    return m_impl->w;
}
int64_t Generator::streamLength() const {
    return m_impl->streamLength;
}
int64_t Generator::windowStart() const {
    return m_impl->windowStart;
}
int Generator::windowFill() const {
    return m_impl->fill();
}
int64_t Generator::windowIndex() const {
    return m_impl->rollovers;
}
const std::vector<int32_t>& Generator::pinnedTokens() const {
    return m_impl->pinned;
}
const std::vector<int32_t>& Generator::windowTokens() const {
    return m_impl->window;
}
const std::vector<int32_t>& Generator::guideTokens() const {
    return m_impl->guide;
}
int64_t Generator::guidePosition() const {
    return m_impl->guideAt;
}
int64_t Generator::tokensRead() const {
    return m_impl->tokensRead;
}

Result<void> Generator::setGuide(const std::vector<int32_t>& ids, int64_t beforeLast) {
    Impl& g = *m_impl;
    for (int32_t id : ids)
        if (id < 0 || id >= g.m.info.config.vocabSize)
            return makeError(ErrorCode::InvalidArgument,
                             "token id " + std::to_string(id) + " is outside the vocabulary");
    if (static_cast<int64_t>(g.pinned.size() + ids.size()) + g.w.overlap >= g.w.window)
        return makeError(
            ErrorCode::InvalidArgument,
            std::to_string(ids.size()) + " tokens of guidance, " + std::to_string(g.pinned.size()) +
                " pinned and an overlap of " + std::to_string(g.w.overlap) +
                " leave no room for new text in a window of " + std::to_string(g.w.window));
    if (beforeLast < 0)
        return makeError(ErrorCode::InvalidArgument, "the guide's place is before the stream");
    // Nothing read: the stream starts as generate() would start it, then the guidance.
    if (!ids.empty() && g.streamLength == 0 && g.pinned.empty() && g.startToken() >= 0)
        if (auto r = append({g.startToken()}); !r)
            return r;
    try {
        torch::NoGradGuard noGrad;
        g.guide = ids;
        if (ids.empty() && g.guideAt < 0)
            return {}; // nothing placed, nothing to place
        g.placeGuide(static_cast<size_t>(beforeLast));
    } catch (const c10::Error& e) {
        return torchError(e);
    }
    return {};
}

const std::vector<float>& Generator::nextLogits() const {
    static const std::vector<float> none;
    return m_impl->streamLength > 0 || !m_impl->pinned.empty() ? m_impl->lastLogits : none;
}

Result<void> Generator::append(const std::vector<int32_t>& ids, const CancelToken& cancel) {
    const int vocab = m_impl->m.info.config.vocabSize;
    for (int32_t id : ids)
        if (id < 0 || id >= vocab)
            return makeError(ErrorCode::InvalidArgument,
                             "token id " + std::to_string(id) + " is outside the vocabulary");
    try {
        torch::NoGradGuard noGrad;
        m_impl->append(ids, cancel);
    } catch (const c10::Error& e) {
        return torchError(e);
    }
    if (cancel.cancelled())
        return makeError(ErrorCode::Cancelled, "cancelled while reading the context");
    return {};
}

Result<void> Generator::appendPrompt(std::string_view text, const CancelToken& cancel) {
    Impl& g = *m_impl;
    if (g.streamLength == 0 && g.pinned.empty() && g.startToken() >= 0)
        if (auto r = append({g.startToken()}, cancel); !r)
            return r;
    return text.empty() ? Result<void>() : appendText(text, cancel);
}

Result<GenerationResult> generateFrom(std::shared_ptr<const Model> model,
                                      const GenerateRequest& request,
                                      const std::function<bool(const GenerationEvent&)>& onToken,
                                      const CancelToken& cancel) {
    auto created = Generator::create(std::move(model), request.windows, request.useState);
    if (!created)
        return created.error();
    if (auto r = (*created)->appendPrompt(request.prompt, cancel); !r)
        return r.error();
    return (*created)->generate(request.sampling, onToken, cancel);
}

Result<void> Generator::appendText(std::string_view text, const CancelToken& cancel) {
    if (!m_impl->m.tokenizer)
        return makeError(ErrorCode::InvalidArgument, "this model has no tokenizer");
    return append(m_impl->m.tokenizer->encode(text), cancel);
}

namespace {

// The model's log-probability of `token` and of the `top` most likely tokens.
void fillLogprobs(const std::vector<float>& logits, int32_t token, int top,
                  GenerationEvent& event) {
    const float best = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits)
        sum += std::exp(double(l) - best);
    const double logZ = best + std::log(sum);
    event.logprob = static_cast<float>(logits[size_t(token)] - logZ);
    const int n = std::min<int>(top, int(logits.size()));
    std::vector<int32_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int32_t a, int32_t b) {
        return logits[size_t(a)] != logits[size_t(b)] ? logits[size_t(a)] > logits[size_t(b)]
                                                      : a < b;
    });
    event.topLogprobs.clear();
    for (int i = 0; i < n; ++i)
        event.topLogprobs.emplace_back(order[size_t(i)],
                                       static_cast<float>(logits[size_t(order[size_t(i)])] - logZ));
}

} // namespace

Result<GenerationResult>
Generator::generate(const SamplingOptions& options,
                    const std::function<bool(const GenerationEvent&)>& onToken,
                    const CancelToken& cancel) {
    if (auto r = validateSampling(options); !r)
        return r.error();
    Impl& g = *m_impl;
    const ModelConfig& config = g.m.info.config;
    const int eos =
        (g.m.tokenizer && g.m.tokenizer->eosId() >= 0) ? g.m.tokenizer->eosId() : config.eosTokenId;
    if (g.streamLength == 0 && g.pinned.empty()) {
        const int start = g.startToken();
        if (start < 0)
            return makeError(ErrorCode::InvalidArgument,
                             "the prompt is empty and this model has no start-of-text token");
        if (auto r = append({start}, cancel); !r)
            return r.error();
    }

    if (!g.guide.empty() && g.guideAt < 0) { // rolled over since it was placed
        try {
            torch::NoGradGuard noGrad;
            g.placeGuide(0);
        } catch (const c10::Error& e) {
            return torchError(e);
        }
    }

    GenerationResult result;
    SamplingOptions effective = options; // the texts' biases as token biases
    if (!options.textBias.empty()) {
        if (!g.m.tokenizer)
            return makeError(ErrorCode::InvalidArgument,
                             "a text logit bias needs the model's tokenizer");
        for (const auto& bias : textBiasTokens(*g.m.tokenizer, options.textBias))
            effective.logitBias.push_back(bias);
    }
    Sampler sampler(effective, options.dryMultiplier > 0 && g.m.tokenizer
                                   ? dryBreakerTokens(*g.m.tokenizer, options.drySequenceBreakers)
                                   : std::vector<int32_t>{});
    StreamDecoder decoder(g.m.tokenizer);
    StopMatcher stops(options.stopStrings);
    std::vector<float> work;
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t rolloversBefore = g.rollovers;
    result.reason = StopReason::MaxTokens;
    try {
        torch::NoGradGuard noGrad;
        for (int i = 0; i < options.maxTokens; ++i) {
            if (cancel.cancelled()) {
                result.reason = StopReason::Cancelled;
                break;
            }
            cpu::applyThreadBudget();
            work = g.lastLogits;
            if (eos >= 0 && !options.stopAtEndOfText)
                work[static_cast<size_t>(eos)] = -std::numeric_limits<float>::infinity();
            // The repetition penalty sees the whole window, pinned tokens included.
            const int32_t token = g.pinned.empty() ? sampler.sample(work, g.window)
                                                   : sampler.sample(work, g.context());
            if (token == eos && options.stopAtEndOfText) {
                result.reason = StopReason::EndOfText;
                break;
            }
            GenerationEvent event;
            if (options.logprobs >= 0)
                fillLogprobs(g.lastLogits, token, options.logprobs, event);
            if (g.full())
                g.rollover();
            g.decode(token);
            g.streamLength += 1;
            result.tokens.push_back(token);

            bool matched = false;
            event.token = token;
            event.text = stops.feed(decoder.push(token), matched);
            event.generated = static_cast<int64_t>(result.tokens.size());
            event.streamLength = g.streamLength;
            event.windowFill = g.fill();
            event.windowIndex = g.rollovers;
            result.text += event.text;
            if (onToken && !onToken(event)) {
                result.reason = StopReason::Callback;
                break;
            }
            if (matched) {
                result.reason = StopReason::StopString;
                result.stopString = stops.matched();
                break;
            }
        }
    } catch (const c10::Error& e) {
        return torchError(e);
    }
    if (result.reason != StopReason::StopString) {
        bool matched = false;
        std::string tail = stops.feed(decoder.finish(), matched);
        if (matched) {
            result.reason = StopReason::StopString;
            result.stopString = stops.matched();
        } else
            tail += stops.flush();
        if (!tail.empty()) {
            result.text += tail;
            if (onToken) {
                GenerationEvent event;
                event.token = -1; // trailing text, no new token
                event.text = tail;
                event.generated = static_cast<int64_t>(result.tokens.size());
                event.streamLength = g.streamLength;
                event.windowFill = g.fill();
                event.windowIndex = g.rollovers;
                onToken(event);
            }
        }
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.tokensPerSecond =
        result.seconds > 0 ? double(result.tokens.size()) / result.seconds : 0.0;
    result.rollovers = g.rollovers - rolloversBefore;
    return result;
}

} // namespace baton::engine
