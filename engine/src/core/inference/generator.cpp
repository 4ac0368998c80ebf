#include "inference/generator_impl.h"
#include "inference/phrase_bans.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
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
    case StopReason::BannedPhrase:
        return "banned-phrase";
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

namespace {
// Where the caller has no error to return: the model reads the token generate() handed
// out before reading it. A failure leaves it unread, for generate() to report.
Generator::Impl& caughtUp(Generator::Impl& g) {
    try {
        torch::NoGradGuard noGrad;
        g.catchUp();
    } catch (const c10::Error&) {
    }
    return g;
}
} // namespace

void Generator::mark() {
    torch::NoGradGuard noGrad;
    m_impl->marked = caughtUp(*m_impl).takeMark();
}

bool Generator::rewind() {
    torch::NoGradGuard noGrad;
    return caughtUp(*m_impl).restoreMark(m_impl->marked);
}

std::vector<float> Generator::currentState() const {
    if (!m_impl->state.defined()) // set at roll-overs, which come after a catch-up
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
    if (!ids.empty() && g.streamLength == 0 && g.pinned.empty() && g.emptyStart() >= 0)
        if (auto r = append({g.emptyStart()}); !r)
            return r;
    try {
        torch::NoGradGuard noGrad;
        g.catchUp();
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
    const Impl& g = caughtUp(*m_impl);
    return g.streamLength > 0 || !g.pinned.empty() ? g.lastLogits : none;
}

Result<void> Generator::append(const std::vector<int32_t>& ids, const CancelToken& cancel) {
    const int vocab = m_impl->m.info.config.vocabSize;
    for (int32_t id : ids)
        if (id < 0 || id >= vocab)
            return makeError(ErrorCode::InvalidArgument,
                             "token id " + std::to_string(id) + " is outside the vocabulary");
    try {
        torch::NoGradGuard noGrad;
        m_impl->catchUp();
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

// The model's log-probability of `token` and of the `top` most likely tokens (ties: the
// lower id first). One pass for the normaliser and one for the top list, which is
// kept sorted in place: a story records eight alternatives for every token it writes.
void fillLogprobs(const std::vector<float>& logits, int32_t token, int top,
                  GenerationEvent& event) {
    const float best = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits)
        sum += std::exp(l - best); // expf: the sum is a double, the terms need no more
    const double logZ = best + std::log(sum);
    event.logprob = static_cast<float>(logits[size_t(token)] - logZ);
    const size_t n = std::min<size_t>(size_t(std::max(top, 0)), logits.size());
    auto& list = event.topLogprobs;
    list.clear();
    list.reserve(n + 1);
    if (n == 0)
        return;
    for (size_t i = 0; i < logits.size(); ++i) {
        const float l = logits[i];
        if (list.size() == n && !(l > list.back().second))
            continue; // not above the n-th (ties keep the lower id, which came first)
        auto at = list.end();
        while (at != list.begin() && l > std::prev(at)->second)
            --at;
        list.insert(at, {int32_t(i), l});
        if (list.size() > n)
            list.pop_back();
    }
    for (auto& [id, value] : list)
        value = static_cast<float>(value - logZ);
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
        const int start = g.emptyStart();
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
    // Banned phrases: generated tokens wait in `held` while their text could still
    // become one; a completed one sends the generator back to the token where it began
    // (`before`: its state then), which is banned at that position, and sampling goes on.
    const PhraseBans bans(options.bannedPhrases, options.bannedInsideWords);
    struct Held {
        int32_t token;
        GenerationEvent event;
        std::string text;
        Impl::Mark before;
        StreamDecoder decoderBefore;
    };
    std::vector<Held> held;
    std::string heldText;
    // The byte before heldText (for whole-word bans): the last one handed out, at first
    // the last of the text already read (0: the stream's start).
    char heldAfter = 0;
    if (!bans.empty() && g.m.tokenizer && !g.window.empty())
        if (const std::string last = g.m.tokenizer->tokenBytes(g.window.back()); !last.empty())
            heldAfter = last.back();
    std::vector<Impl::WindowSnapshot> reopenable;     // windows rolled over while tokens were held
    std::map<int64_t, std::vector<int32_t>> bannedAt; // stream position -> tokens banned there
    // Back to just before held[j]: its state, its decoder; held[j..] are gone.
    auto goBackTo = [&](size_t j) {
        const Impl::Mark& k = held[j].before;
        if (k.rollovers != g.rollovers)
            for (const auto& w : reopenable)
                if (w.rollovers == k.rollovers) {
                    g.reopen(w);
                    break;
                }
        g.restoreMark(k);
        decoder = held[j].decoderBefore;
        size_t textStart = 0;
        for (size_t i = 0; i < j; ++i)
            textStart += held[i].text.size();
        heldText.resize(textStart);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(j), held.end());
        bannedAt.erase(bannedAt.upper_bound(k.streamLength), bannedAt.end());
    };
    // Hands the held tokens before `upTo` to the caller (through the stop strings);
    // false when the generation ends there (a stop string, or the callback).
    auto release = [&](size_t upTo) {
        size_t i = 0;
        bool go = true;
        for (; i < upTo && go; ++i) {
            bool matched = false;
            GenerationEvent& event = held[i].event;
            event.text = stops.feed(held[i].text, matched);
            result.tokens.push_back(held[i].token);
            result.text += event.text;
            if (onToken && !onToken(event)) {
                result.reason = StopReason::Callback;
                go = false;
            } else if (matched) {
                result.reason = StopReason::StopString;
                result.stopString = stops.matched();
                go = false;
            }
        }
        if (!go && i < held.size()) // the stream ends with the last token handed out
            goBackTo(i);
        size_t released = 0;
        for (size_t k = 0; k < i; ++k)
            released += held[k].text.size();
        if (released > 0)
            heldAfter = heldText[released - 1];
        held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(i));
        heldText.erase(0, released);
        if (held.empty())
            reopenable.clear();
        return go;
    };
    // A phrase completed at `at` of heldText: back to the token it begins in, which is
    // banned at that position. False when it keeps coming back (the generation ends).
    int backtracks = 0;
    constexpr int kMaxBacktracks = 256;
    auto banFrom = [&](size_t at) {
        size_t j = 0, end = held[0].text.size();
        while (end <= at && j + 1 < held.size())
            end += held[++j].text.size();
        const int32_t banned = held[j].token;
        const int64_t position = held[j].before.streamLength;
        goBackTo(j);
        if (++backtracks > kMaxBacktracks) {
            result.reason = StopReason::BannedPhrase;
            return false;
        }
        bannedAt[position].push_back(banned);
        return true;
    };
    // Whether the generation may end here: no whole-word phrase waits at the end of
    // what is held (the end completes it), else it goes back and samples on.
    auto mayEnd = [&](bool& goOn) {
        const size_t at =
            bans.empty() ? std::string::npos : bans.firstMatch(heldText, heldAfter, true);
        if (at == std::string::npos)
            return true;
        goOn = banFrom(at);
        return false;
    };
    std::vector<float> work;
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t rolloversBefore = g.rollovers;
    result.reason = StopReason::MaxTokens;
    try {
        torch::NoGradGuard noGrad;
        for (;;) {
            if (static_cast<int64_t>(result.tokens.size() + held.size()) >= options.maxTokens) {
                bool goOn = false;
                if (mayEnd(goOn) || !goOn)
                    break;
                continue;
            }
            if (cancel.cancelled()) {
                result.reason = StopReason::Cancelled;
                break;
            }
            cpu::applyThreadBudget();
            g.catchUp(); // the token handed out last
            work = g.lastLogits;
            if (eos >= 0 && !options.stopAtEndOfText)
                work[static_cast<size_t>(eos)] = -std::numeric_limits<float>::infinity();
            if (const auto b = bannedAt.find(g.streamLength); b != bannedAt.end())
                for (int32_t id : b->second)
                    work[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
            // The repetition penalty sees the whole window, pinned tokens included.
            const int32_t token = g.pinned.empty() ? sampler.sample(work, g.window)
                                                   : sampler.sample(work, g.context());
            if (token == eos && options.stopAtEndOfText) {
                bool goOn = false;
                if (mayEnd(goOn)) {
                    result.reason = StopReason::EndOfText;
                    break;
                }
                if (!goOn)
                    break;
                continue;
            }
            Held h{token, {}, {}, {}, decoder};
            if (options.logprobs >= 0 && options.logprobsAfterSampling) {
                h.event.logprob = static_cast<float>(std::log(sampler.lastProbability()));
                for (const auto& [id, p] : sampler.lastTop())
                    h.event.topLogprobs.emplace_back(id, static_cast<float>(std::log(p)));
            } else if (options.logprobs >= 0) {
                fillLogprobs(g.lastLogits, token, options.logprobs, h.event);
            }
            if (!bans.empty())
                h.before = g.takeMark();
            if (g.full()) {
                if (!bans.empty())
                    reopenable.push_back(g.snapshotWindow());
                g.rollover();
            }
            g.push(token); // read when the next token is sampled (or something else needs it)
            h.text = decoder.push(token);
            h.event.token = token;
            h.event.generated = static_cast<int64_t>(result.tokens.size() + held.size() + 1);
            h.event.streamLength = g.streamLength;
            h.event.windowFill = g.fill();
            h.event.windowIndex = g.rollovers;
            heldText += h.text;
            held.push_back(std::move(h));
            if (const size_t at = bans.firstMatch(heldText, heldAfter, false);
                at != std::string::npos) {
                if (!banFrom(at)) // it keeps coming back: end before it
                    break;
                continue;
            }
            if (!release(bans.empty() ? held.size() : [&] {
                    // The tokens wholly before what must be held back.
                    const size_t hold = bans.holdFrom(heldText, heldAfter);
                    size_t n = 0, end = 0;
                    while (n < held.size() && end + held[n].text.size() <= hold)
                        end += held[n++].text.size();
                    return n;
                }()))
                break;
        }
        // What is still held back completes no phrase.
        if (result.reason != StopReason::StopString && result.reason != StopReason::Callback)
            release(held.size());
        g.catchUp(); // the stream ends read
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
