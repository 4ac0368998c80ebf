#include "baton/engine/generator.h"

#include "baton/engine/model.h"
#include "model/model_impl.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <limits>

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

namespace {

// Holds back text that may be the start of a stop string.
class StopMatcher {
public:
    explicit StopMatcher(const std::vector<std::string>& stops)
        : m_stops(stops) {}

    // Returns the text that is safe to emit; sets `matched` when a stop string occurred
    // (the returned text then ends just before it).
    std::string feed(const std::string& text, bool& matched) {
        m_pending += text;
        matched = false;
        size_t cut = std::string::npos;
        for (const auto& s : m_stops) {
            const size_t at = m_pending.find(s);
            if (at != std::string::npos && (cut == std::string::npos || at < cut))
                cut = at;
        }
        if (cut != std::string::npos) {
            matched = true;
            std::string out = m_pending.substr(0, cut);
            m_pending.clear();
            return out;
        }
        size_t hold = 0; // longest suffix that is a proper prefix of a stop string
        for (const auto& s : m_stops)
            for (size_t len = std::min(s.size() - 1, m_pending.size()); len > hold; --len)
                if (m_pending.compare(m_pending.size() - len, len, s, 0, len) == 0) {
                    hold = len;
                    break;
                }
        std::string out = m_pending.substr(0, m_pending.size() - hold);
        m_pending.erase(0, m_pending.size() - hold);
        return out;
    }
    std::string flush() {
        std::string out;
        out.swap(m_pending);
        return out;
    }

private:
    const std::vector<std::string>& m_stops;
    std::string m_pending;
};

Error torchError(const c10::Error& e) {
    return makeError(ErrorCode::Internal, std::string("LibTorch: ") + e.what_without_backtrace());
}

} // namespace

class Generator::Impl {
public:
    Impl(std::shared_ptr<const Model> model_, const WindowSettings& w_)
        : model(std::move(model_))
        , m(model->impl())
        , w(w_) {
        const ModelConfig& c = m.info.config;
        cache.allocate(c, 1, w.window, m.dtype, m.device);
        lastLogits.assign(static_cast<size_t>(c.vocabSize), 0.f);
        hidden.assign(static_cast<size_t>(c.nEmbd), 0.f);
        if (m.decoder) {
            for (int l = 0; l < c.nLayer; ++l) {
                view.k.push_back(cache.k[l].data_ptr<float>());
                view.v.push_back(cache.v[l].data_ptr<float>());
            }
            view.stride = cache.capacity + 1;
        }
    }

    void prefill(const int32_t* ids, int64_t n, bool wantLogits) {
        std::vector<int64_t> v(ids, ids + n);
        auto input = torch::tensor(v, torch::kLong).to(m.device).unsqueeze(0);
        ForwardArgs args;
        args.cache = &cache;
        auto out = m.net->forward(input, args);
        window.insert(window.end(), ids, ids + n);
        if (wantLogits) {
            auto logits = m.net->logits(out.hidden.select(1, n - 1))
                              .squeeze(0)
                              .to(torch::kCPU, torch::kFloat32)
                              .contiguous();
            std::copy(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel(),
                      lastLogits.begin());
        }
    }

    void decode(int32_t id) {
        if (m.decoder) {
            view.slotLayer = cache.slotLayer;
            m.decoder->step(id, cache.length, view, nullptr, nullptr, hidden.data());
            cache.length += 1;
            m.decoder->lmHead(hidden.data(), lastLogits.data());
            window.push_back(id);
        } else {
            prefill(&id, 1, true);
        }
    }

    void rollover() {
        const int64_t keep = w.overlap;
        std::vector<int32_t> tail(window.end() - keep, window.end());
        windowStart += w.window - w.overlap;
        cache.clear();
        window.clear();
        ++rollovers;
        if (keep > 0)
            prefill(tail.data(), keep, false);
    }

    void append(const std::vector<int32_t>& ids, const CancelToken& cancel) {
        size_t i = 0;
        while (i < ids.size()) {
            if (cancel.cancelled())
                return;
            if (static_cast<int>(window.size()) == w.window)
                rollover();
            const size_t room = static_cast<size_t>(w.window) - window.size();
            const size_t take = std::min(room, ids.size() - i);
            prefill(ids.data() + i, static_cast<int64_t>(take), true);
            i += take;
            streamLength += static_cast<int64_t>(take);
        }
    }

    std::shared_ptr<const Model> model;
    Model::Impl& m;
    WindowSettings w;
    KvCache cache;
    cpu::CacheView view;
    std::vector<int32_t> window;
    int64_t windowStart = 0;
    int64_t streamLength = 0;
    int64_t rollovers = 0;
    std::vector<float> lastLogits;
    std::vector<float> hidden;
};

Generator::Generator(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)) {}
Generator::~Generator() = default;

Result<std::unique_ptr<Generator>> Generator::create(std::shared_ptr<const Model> model,
                                                     const WindowSettings& windows) {
    if (!model)
        return makeError(ErrorCode::InvalidArgument, "no model");
    WindowSettings w = windows;
    const int positions = model->config().nPositions;
    if (w.window == 0)
        w.window = positions;
    if (auto r = validateWindows(w, positions); !r)
        return r.error();
    try {
        torch::NoGradGuard noGrad;
        return std::unique_ptr<Generator>(
            new Generator(std::make_unique<Impl>(std::move(model), w)));
    } catch (const c10::Error& e) {
        return torchError(e);
    }
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
    return static_cast<int>(m_impl->window.size());
}
const std::vector<int32_t>& Generator::windowTokens() const {
    return m_impl->window;
}

const std::vector<float>& Generator::nextLogits() const {
    static const std::vector<float> none;
    return m_impl->streamLength > 0 ? m_impl->lastLogits : none;
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

Result<void> Generator::appendText(std::string_view text, const CancelToken& cancel) {
    if (!m_impl->m.tokenizer)
        return makeError(ErrorCode::InvalidArgument, "this model has no tokenizer");
    return append(m_impl->m.tokenizer->encode(text), cancel);
}

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
    if (g.streamLength == 0) {
        const int start = config.bosTokenId >= 0 ? config.bosTokenId : eos;
        if (start < 0 || start >= config.vocabSize)
            return makeError(ErrorCode::InvalidArgument,
                             "the prompt is empty and this model has no start-of-text token");
        if (auto r = append({start}, cancel); !r)
            return r.error();
    }

    GenerationResult result;
    Sampler sampler(options);
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
            work = g.lastLogits;
            if (eos >= 0 && !options.stopAtEndOfText)
                work[static_cast<size_t>(eos)] = -std::numeric_limits<float>::infinity();
            const int32_t token = sampler.sample(work, g.window);
            if (token == eos && options.stopAtEndOfText) {
                result.reason = StopReason::EndOfText;
                break;
            }
            if (static_cast<int>(g.window.size()) == g.w.window)
                g.rollover();
            g.decode(token);
            g.streamLength += 1;
            result.tokens.push_back(token);

            bool matched = false;
            GenerationEvent event;
            event.token = token;
            event.text = stops.feed(decoder.push(token), matched);
            event.generated = static_cast<int64_t>(result.tokens.size());
            event.streamLength = g.streamLength;
            event.windowFill = static_cast<int>(g.window.size());
            result.text += event.text;
            if (onToken && !onToken(event)) {
                result.reason = StopReason::Callback;
                break;
            }
            if (matched) {
                result.reason = StopReason::StopString;
                break;
            }
        }
    } catch (const c10::Error& e) {
        return torchError(e);
    }
    if (result.reason != StopReason::StopString) {
        bool matched = false;
        std::string tail = stops.feed(decoder.finish(), matched);
        if (matched)
            result.reason = StopReason::StopString;
        else
            tail += stops.flush();
        if (!tail.empty()) {
            result.text += tail;
            if (onToken) {
                GenerationEvent event;
                event.token = -1; // trailing text, no new token
                event.text = tail;
                event.generated = static_cast<int64_t>(result.tokens.size());
                event.streamLength = g.streamLength;
                event.windowFill = static_cast<int>(g.window.size());
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
