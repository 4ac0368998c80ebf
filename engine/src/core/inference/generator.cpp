#include "baton/engine/generator.h"

#include "baton/engine/model.h"
#include "inference/state_blob.h"
#include "inference/stop_matcher.h"
#include "model/model_impl.h"
#include "util/core_budget.h"

#include <torch/torch.h>

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

namespace {

Error torchError(const c10::Error& e) {
    return makeError(ErrorCode::Internal, std::string("LibTorch: ") + e.what_without_backtrace());
}

// Pinned tokens must be in the vocabulary and leave every window room for at least one
// new token of the stream beside the overlap.
Result<void> checkPinned(const std::vector<int32_t>& ids, const WindowSettings& w, int vocab) {
    for (int32_t id : ids)
        if (id < 0 || id >= vocab)
            return makeError(ErrorCode::InvalidArgument,
                             "token id " + std::to_string(id) + " is outside the vocabulary");
    if (static_cast<int64_t>(ids.size()) + w.overlap >= w.window)
        return makeError(ErrorCode::InvalidArgument,
                         std::to_string(ids.size()) + " tokens pinned to every window and an " +
                             "overlap of " + std::to_string(w.overlap) +
                             " leave no room for new text in a window of " +
                             std::to_string(w.window));
    return {};
}

} // namespace

class Generator::Impl {
public:
    Impl(std::shared_ptr<const Model> model_, const WindowSettings& w_, bool useState_)
        : model(std::move(model_))
        , m(ModelAccess::of(*model))
        , w(w_)
        , useState(useState_) {
        const ModelConfig& c = m.info.config;
        // A module with write tokens runs them through the cache at each roll-over.
        cache.allocate(c, 1, w.window + (m.writesWithTokens() ? m.stateSlots() : 0), m.dtype,
                       m.device, m.stateSlots());
        lastLogits.assign(static_cast<size_t>(c.vocabSize), 0.f);
        hidden.assign(static_cast<size_t>(c.nEmbd), 0.f);
        if (m.recurrent())
            pooled = torch::zeros({1, m.stateSlots(), c.nEmbd},
                                  torch::TensorOptions().dtype(torch::kFloat32).device(m.device));
        if (m.decoder) {
            for (int l = 0; l < c.nLayer; ++l) {
                view.k.push_back(cache.k[l].data_ptr<float>());
                view.v.push_back(cache.v[l].data_ptr<float>());
            }
            view.stride = cache.slots + cache.capacity;
            view.slots = cache.slots;
            view.slotBias = m.slotBiasHost.empty() ? nullptr : m.slotBiasHost.data();
            view.sink = m.sinkHost.empty() ? nullptr : m.sinkHost.data();
        }
        checkpoint();
    }

    // The token an empty stream starts from (start-of-text, else end-of-text); -1: none.
    int startToken() const {
        const ModelConfig& c = m.info.config;
        const int eos =
            (m.tokenizer && m.tokenizer->eosId() >= 0) ? m.tokenizer->eosId() : c.eosTokenId;
        const int start = c.bosTokenId >= 0 ? c.bosTokenId : eos;
        return start >= 0 && start < c.vocabSize ? start : -1;
    }

    // Reads n tokens into the open window's cache, at the positions after what it
    // holds (the pinned tokens, then the stream's); the caller records them. Returns
    // the pooled sums of these n tokens (undefined for a baseline model), added to the
    // window's pool unless they are read again: a token counts in the pool once, where
    // it was first read in the window (so a window read again after guidance moved, or
    // from a saved state, keeps the pool it had).
    torch::Tensor prefill(const int32_t* ids, int64_t n, bool wantLogits, bool pool = true) {
        std::vector<int64_t> v(ids, ids + n);
        auto input = torch::tensor(v, torch::kLong).to(m.device).unsqueeze(0);
        ForwardArgs args = m.windowArgs(torch::Tensor(), cache.length, n, w.window);
        args.cache = &cache;
        args.writeTokens = torch::Tensor(); // they run at the roll-over (rollover())
        auto out = m.net->forward(input, args);
        tokensRead += n;
        torch::Tensor added;
        if (out.pooled.defined()) {
            added = out.pooled.to(torch::kFloat32);
            if (pool)
                pooled += added;
        }
        if (wantLogits && m.decoder) { // the decoder's LM head reads packed weights as they are
            auto h = out.hidden.select(1, n - 1).squeeze(0).contiguous();
            m.decoder->lmHead(h.data_ptr<float>(), lastLogits.data());
        } else if (wantLogits) {
            auto logits = m.net->logits(out.hidden.select(1, n - 1))
                              .squeeze(0)
                              .to(torch::kCPU, torch::kFloat32)
                              .contiguous();
            std::copy(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel(),
                      lastLogits.begin());
        }
        return added;
    }

    void decode(int32_t id) {
        if (m.decoder) {
            view.slotLayer = cache.slotLayer;
            view.slotLayers = cache.slotLayers;
            const int segment =
                m.recurrent() ? m.recurrence->segmentOf(cache.length, w.window) : -1;
            float* pool = segment >= 0
                              ? pooled.data_ptr<float>() + int64_t(segment) * m.info.config.nEmbd
                              : nullptr;
            m.decoder->step(id, cache.length, view, pool ? m.layerWeightsHost.data() : nullptr,
                            pool, hidden.data());
            cache.length += 1;
            tokensRead += 1;
            m.decoder->lmHead(hidden.data(), lastLogits.data());
            window.push_back(id);
        } else {
            readStream(&id, 1, true);
        }
    }

    // Puts the state into the (empty) cache as the slots' keys and values.
    void enterState() {
        const int first = m.insertBlock();
        for (int layer = first; layer < first + m.readBlocks(); ++layer) {
            auto [slotK, slotV] = m.net->slotKeyValue(state, layer);
            cache.k[static_cast<size_t>(layer)].narrow(2, 0, cache.slots).copy_(slotK);
            cache.v[static_cast<size_t>(layer)].narrow(2, 0, cache.slots).copy_(slotV);
        }
        cache.slotLayer = first;
        cache.slotLayers = m.readBlocks();
    }

    // The state for the next window from the open one: its pool, or its write tokens
    // run after what the cache holds (the cache is cleared right after).
    torch::Tensor nextState() {
        if (!m.writesWithTokens())
            return m.nextStateFrom(pooled, state, w.window, fill());
        ForwardArgs args;
        args.cache = &cache;
        args.slotLayer = m.insertBlock();
        args.slotLayers = m.readBlocks();
        args.slotBias = m.slotBias;
        args.sink = m.sink;
        args.writeTokens = m.recurrence->writeTokens;
        const auto none = torch::empty({1, 0}, m.idOptions());
        const auto out = m.net->forward(none, args);
        return m.nextStateFrom(out.written, state, w.window, fill());
    }

    // Reads stream tokens into the open window.
    void readStream(const int32_t* ids, int64_t n, bool wantLogits) {
        prefill(ids, n, wantLogits);
        window.insert(window.end(), ids, ids + n);
    }

    // A point of the open window the cache can be cut back to (placeGuide): its
    // positions in use, its stream tokens and the next-token logits.
    void checkpoint() {
        if (!checkpoints.empty() && checkpoints.back().cacheLength == cache.length)
            checkpoints.pop_back(); // the same point, taken again
        checkpoints.push_back({cache.length, window.size(), lastLogits});
    }

    // A new window begins: the state (if any), then the pinned tokens.
    void beginWindow() {
        checkpoints.clear();
        guideAt = -1;
        guidePooled = torch::Tensor();
        if (state.defined())
            enterState();
        if (!pinned.empty())
            prefill(pinned.data(), static_cast<int64_t>(pinned.size()), true);
        checkpoint();
    }

    int guideLength() const { return guideAt >= 0 ? static_cast<int>(guide.size()) : 0; }
    int fill() const { return static_cast<int>(pinned.size() + window.size()) + guideLength(); }
    // The open window's tokens, pinned ones first (the guide left out: the repetition
    // penalty sees the story, not the guidance).
    std::vector<int32_t> context() const {
        std::vector<int32_t> all = pinned;
        all.insert(all.end(), window.begin(), window.end());
        return all;
    }
    bool full() const { return fill() == w.window; }

    // Reads window[from..) into the open window, with the guide before window[guideBefore]
    // when guideBefore >= from (the caller has cut the cache back to window[from]). The
    // stream tokens count in the pool when this window reads them for the first time
    // (`first`: a new window's overlap), the guide always (its part is taken out again
    // when it moves).
    void readWindowFrom(size_t from, int64_t guideBefore, bool first) {
        const size_t at = guideBefore >= static_cast<int64_t>(from)
                              ? std::min(static_cast<size_t>(guideBefore), window.size())
                              : window.size();
        const bool placing = guideBefore >= static_cast<int64_t>(from) && !guide.empty();
        if (at > from) {
            prefill(window.data() + from, static_cast<int64_t>(at - from),
                    !placing && at == window.size(), first);
            checkpoint();
        }
        if (placing) {
            guidePooled =
                prefill(guide.data(), static_cast<int64_t>(guide.size()), at == window.size());
            guideAt = static_cast<int64_t>(at);
            checkpoint();
        }
        if (window.size() > at) {
            prefill(window.data() + at, static_cast<int64_t>(window.size() - at), true, first);
            checkpoint();
        }
    }

    // The open window is pooled into h_prev and a new one begins with the last `keep`
    // stream tokens (the overlap o; more when it rolls over early to make room for the
    // guide), the guide before window[guideBefore] of the new window when >= 0.
    void rollover(size_t keep, int64_t guideBefore = -1) {
        keep = std::min(keep, window.size());
        std::vector<int32_t> tail(window.end() - static_cast<std::ptrdiff_t>(keep), window.end());
        if (m.recurrent() && useState)
            state = nextState();
        cache.clear();
        window.clear();
        if (pooled.defined())
            pooled.zero_();
        ++rollovers;
        beginWindow();
        window = std::move(tail);
        windowStart = streamLength - static_cast<int64_t>(window.size());
        readWindowFrom(0, guideBefore, true);
    }
    void rollover() { rollover(static_cast<size_t>(w.overlap), guide.empty() ? -1 : w.overlap); }

    // Places the guide before the last `beforeLast` stream tokens of the open window:
    // the cache is cut back to the last checkpoint before that point (and before a
    // guide placed earlier, whose part of the pool is taken out) and read again from
    // there. A window without room for it rolls over first, keeping the overlap before
    // that point and what follows it (as much of it as fits beside the guide).
    void placeGuide(size_t beforeLast) {
        const GuidePlacement place = placeGuidance(
            w, static_cast<int64_t>(pinned.size()), static_cast<int64_t>(window.size()),
            static_cast<int64_t>(guide.size()), static_cast<int64_t>(beforeLast));
        if (place.rollsOver) {
            rollover(static_cast<size_t>(place.keep), place.at);
            return;
        }
        const size_t at = static_cast<size_t>(place.at);
        size_t cut = at;
        if (guideAt >= 0)
            cut = std::min(cut, static_cast<size_t>(guideAt));
        // The last checkpoint at or before `cut` with no guide before it (the first one,
        // after the pinned tokens, always qualifies).
        size_t i = checkpoints.size();
        while (i > 1 && (checkpoints[i - 1].windowSize > cut ||
                         checkpoints[i - 1].cacheLength !=
                             static_cast<int64_t>(pinned.size() + checkpoints[i - 1].windowSize)))
            --i;
        Checkpoint cp = std::move(checkpoints[i - 1]);
        checkpoints.resize(i - 1);
        cache.length = cp.cacheLength; // later keys and values are overwritten when read again
        lastLogits = cp.logits;
        const size_t from = cp.windowSize;
        checkpoints.push_back(std::move(cp));
        if (guideAt >= 0 && guidePooled.defined())
            pooled -= guidePooled;
        guideAt = -1;
        guidePooled = torch::Tensor();
        readWindowFrom(from, guide.empty() ? -1 : static_cast<int64_t>(at), false);
    }

    void append(const std::vector<int32_t>& ids, const CancelToken& cancel) {
        size_t i = 0;
        while (i < ids.size()) {
            if (cancel.cancelled())
                return;
            if (full())
                rollover(static_cast<size_t>(w.overlap));
            const size_t room = static_cast<size_t>(w.window - fill());
            const size_t take = std::min(room, ids.size() - i);
            readStream(ids.data() + i, static_cast<int64_t>(take), true);
            checkpoint();
            i += take;
            streamLength += static_cast<int64_t>(take);
        }
    }

    std::shared_ptr<const Model> model;
    Model::Impl& m;
    WindowSettings w;
    bool useState = true;
    KvCache cache;
    cpu::CacheView view;
    std::vector<int32_t> pinned; // at the start of every window (pin())
    std::vector<int32_t> window; // the open window's stream tokens
    std::vector<int32_t> guide;  // guidance before the continuation (setGuide)
    int64_t guideAt = -1;        // the guide sits before window[guideAt]; -1: not in the window
    torch::Tensor guidePooled;   // the guide's pooled sums in the open window
    struct Checkpoint {
        int64_t cacheLength = 0;
        size_t windowSize = 0;
        std::vector<float> logits;
    };
    std::vector<Checkpoint> checkpoints; // of the open window, in order
    int64_t windowStart = 0;
    int64_t streamLength = 0;
    int64_t rollovers = 0;
    int64_t tokensRead = 0; // read into windows, read again included
    torch::Tensor state;    // the open window's state [1, S, k], compute dtype; undefined if none
    torch::Tensor pooled;   // running sums per slot over the open window, float32 [1, S, k]
    std::vector<float> lastLogits;
    std::vector<float> hidden;

    // mark(): what rewind() restores while the window has not rolled over since.
    struct Mark {
        int64_t streamLength = -1, rollovers = 0, cacheLength = 0;
        size_t windowSize = 0;
        torch::Tensor pooled;
        std::vector<float> lastLogits;
    } marked;
};

namespace {

std::vector<float> toHost(const torch::Tensor& t) {
    auto c = t.to(torch::kCPU, torch::kFloat32).contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

} // namespace

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

Result<StateSummary> summariseState(const std::vector<uint8_t>& blob) {
    auto decoded = decodeStateBlob(blob);
    if (!decoded)
        return decoded.error();
    StateSummary s;
    s.hasState = decoded->hasState;
    s.windowIndex = decoded->rollovers;
    s.windowStart = decoded->windowStart;
    s.streamLength = decoded->streamLength;
    s.windowTokens = std::move(decoded->tokens);
    return s;
}

Result<std::vector<uint8_t>> Generator::exportState() const {
    const Impl& g = *m_impl;
    try {
        StateBlob b;
        b.identity = g.m.info.identity;
        b.window = g.w.window;
        b.overlap = g.w.overlap;
        b.width = g.m.info.config.nEmbd;
        b.insertBlock = g.m.insertBlock();
        b.slots = g.m.stateSlots();
        b.pinned = static_cast<int32_t>(g.pinned.size());
        b.hasState = g.state.defined();
        b.windowStart = g.windowStart;
        b.streamLength = g.streamLength;
        b.rollovers = g.rollovers;
        b.tokens = g.window;
        if (g.state.defined())
            b.state = toHost(g.state);
        // The pool as the stream made it: the guide is read again, wherever the next
        // continuation places it.
        if (g.pooled.defined())
            b.pooled = toHost(g.guidePooled.defined() ? g.pooled - g.guidePooled : g.pooled);
        return encodeStateBlob(b);
    } catch (const c10::Error& e) {
        return torchError(e);
    }
}

Result<std::unique_ptr<Generator>> Generator::importState(std::shared_ptr<const Model> model,
                                                          const std::vector<uint8_t>& blob,
                                                          const WindowSettings& expected,
                                                          const CancelToken& cancel,
                                                          const std::vector<int32_t>& pinned) {
    if (!model)
        return makeError(ErrorCode::InvalidArgument, "no model");
    const Model::Impl& m = ModelAccess::of(*model);
    auto decoded = decodeStateBlob(blob);
    if (!decoded)
        return decoded.error();
    const StateBlob& b = *decoded;
    const ModelInfo& info = model->info();
    if (b.identity != info.identity)
        return makeError(ErrorCode::StateMismatch, "the saved state belongs to another model (" +
                                                       b.identity + ", this one is " +
                                                       info.identity + ")");
    if (b.width != info.config.nEmbd || b.insertBlock != m.insertBlock() ||
        b.slots != m.stateSlots() || b.pooled.empty() == m.recurrent())
        return makeError(ErrorCode::StateMismatch, "the saved state has another shape");
    const WindowSettings w{b.window, b.overlap};
    if (auto r = validateWindows(w, info.config.nPositions); !r)
        return makeError(ErrorCode::StateCorrupt,
                         "the saved state is damaged: " + r.error().message);
    const WindowSettings want = resolveWindows(info, expected);
    if (want.window != w.window || want.overlap != w.overlap)
        return makeError(ErrorCode::StateMismatch,
                         "the saved state was made with T = " + std::to_string(w.window) +
                             ", o = " + std::to_string(w.overlap) +
                             " but the story now runs with T = " + std::to_string(want.window) +
                             ", o = " + std::to_string(want.overlap));
    for (int32_t t : b.tokens)
        if (t < 0 || t >= info.config.vocabSize)
            return makeError(ErrorCode::StateCorrupt,
                             "the saved state is damaged: a token id is outside the vocabulary");
    if (auto r = checkPinned(pinned, w, info.config.vocabSize); !r)
        return r.error();
    // Version 3 records its pinned tokens; earlier versions rolled over only when full,
    // so their windows start at multiples of the stride those tokens leave.
    const int64_t stride = w.window - w.overlap - static_cast<int64_t>(pinned.size());
    if ((b.pinned >= 0 && b.pinned != static_cast<int32_t>(pinned.size())) ||
        (b.pinned < 0 && b.windowStart != b.rollovers * stride) ||
        b.tokens.size() + pinned.size() > static_cast<size_t>(w.window))
        return makeError(ErrorCode::StateMismatch,
                         "the saved state was made with another number of tokens pinned to its "
                         "windows");

    auto created = create(model, w, true);
    if (!created)
        return created.error();
    Impl& g = *(*created)->m_impl;
    g.pinned = pinned;
    try {
        torch::NoGradGuard noGrad;
        const auto opts = torch::TensorOptions().dtype(torch::kFloat32);
        const int64_t S = b.slots, k = b.width;
        if (b.hasState)
            g.state = torch::from_blob(const_cast<float*>(b.state.data()), {1, S, k}, opts)
                          .clone()
                          .to(g.m.device, g.m.dtype);
        g.beginWindow();
        if (!b.tokens.empty())
            g.readStream(b.tokens.data(), static_cast<int64_t>(b.tokens.size()), true);
        g.checkpoint();
        if (cancel.cancelled())
            return makeError(ErrorCode::Cancelled, "cancelled while restoring the state");
        // The stored running pool continues the exported one exactly.
        if (g.pooled.defined())
            g.pooled.copy_(torch::from_blob(const_cast<float*>(b.pooled.data()), {1, S, k}, opts));
        g.windowStart = b.windowStart;
        g.streamLength = b.streamLength;
        g.rollovers = b.rollovers;
    } catch (const c10::Error& e) {
        return torchError(e);
    }
    return created;
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
