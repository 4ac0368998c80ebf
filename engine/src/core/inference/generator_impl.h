// The generator's state and its window arithmetic (generator.cpp runs it; the state
// blob's export and import are in generator_state.cpp). Engine-internal.
#pragma once

#include "baton/engine/generator.h"

#include "baton/engine/model.h"
#include "inference/state_blob.h"
#include "inference/stop_matcher.h"
#include "kernels/core_budget.h"
#include "model/model_impl.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace baton::engine {

inline Error torchError(const c10::Error& e) {
    return makeError(ErrorCode::Internal, std::string("LibTorch: ") + e.what_without_backtrace());
}

// Pinned tokens must be in the vocabulary and leave every window room for at least one
// new token of the stream beside the overlap.
inline Result<void> checkPinned(const std::vector<int32_t>& ids, const WindowSettings& w,
                                int vocab) {
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

    // The token a text read from its beginning starts with (model_info.h:
    // startOfTextToken, else the tokenizer's end-of-text); -1: none, or the model reads
    // texts without one.
    int startToken() const { return m.info.config.addBosToken ? emptyStart() : -1; }
    // What a generation from nothing starts from (model_info.h: emptyStartToken, else
    // the tokenizer's end-of-text); -1: none.
    int emptyStart() const {
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

    // Reads a generated token after the open window's: its keys and values, its part
    // of the pool and the next logits (the caller has put it in `window` already).
    void readGenerated(int32_t id) {
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
        } else {
            prefill(&id, 1, true);
        }
    }

    // generate() hands each token out before the model reads it, so the caller sees it
    // a step of the model sooner: push() puts it in the stream and the window, and
    // catchUp() has the model read it once something needs what the model makes of it
    // (the next token, an exported state, a mark, more input). A token left unread is
    // read on the next try when reading it fails.
    void push(int32_t id) {
        window.push_back(id);
        streamLength += 1;
        unread = id;
    }
    void catchUp() {
        if (unread < 0)
            return;
        readGenerated(unread);
        unread = -1;
    }

    // Puts the state into the (empty) cache as the slots' keys and values.
    void enterState() {
        const int first = m.insertBlock();
        const auto kv =
            m.net->slotKeyValues(state, first, m.readBlocks(), m.recurrence->config().memoryTokens);
        for (int i = 0; i < m.readBlocks(); ++i) {
            const size_t layer = static_cast<size_t>(first + i);
            cache.k[layer].narrow(2, 0, cache.slots).copy_(kv[size_t(i)].first);
            cache.v[layer].narrow(2, 0, cache.slots).copy_(kv[size_t(i)].second);
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
    int32_t unread = -1;    // the last token of the stream, not read yet (push); -1: none
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

    Mark takeMark() const { // with everything read (catchUp)
        Mark k;
        k.streamLength = streamLength;
        k.rollovers = rollovers;
        k.cacheLength = cache.length;
        k.windowSize = window.size();
        k.pooled = pooled.defined() ? pooled.clone() : torch::Tensor();
        k.lastLogits = lastLogits;
        return k;
    }
    // Back to a mark of the open window (false if it has rolled over since).
    bool restoreMark(const Mark& k) {
        if (k.streamLength < 0 || k.rollovers != rollovers || streamLength < k.streamLength)
            return false;
        streamLength = k.streamLength;
        unread = -1; // a mark is taken with everything read: a token unread is after it
        cache.length = k.cacheLength; // later keys and values are overwritten when read again
        window.resize(k.windowSize);
        while (!checkpoints.empty() && checkpoints.back().cacheLength > k.cacheLength)
            checkpoints.pop_back();
        if (guideAt >= 0 &&
            static_cast<int64_t>(pinned.size()) + guideAt >= k.cacheLength) { // read after it
            guideAt = -1;
            guidePooled = torch::Tensor();
        }
        if (k.pooled.defined())
            pooled.copy_(k.pooled);
        lastLogits = k.lastLogits;
        return true;
    }

    // A window as it was just before it rolled over: enough to read it again (reopen),
    // for going back past a roll-over (banned phrases).
    struct WindowSnapshot {
        int64_t rollovers = 0, windowStart = 0, streamLength = 0, guideAt = -1;
        std::vector<int32_t> window;
        torch::Tensor state;
    };
    WindowSnapshot snapshotWindow() const {
        return {rollovers, windowStart, streamLength,
                guideAt,   window,      state.defined() ? state.clone() : torch::Tensor()};
    }
    // The snapshot's window again, read anew into the cache from its entering state.
    void reopen(const WindowSnapshot& s) {
        state = s.state.defined() ? s.state.clone() : torch::Tensor();
        cache.clear();
        window.clear();
        if (pooled.defined())
            pooled.zero_();
        rollovers = s.rollovers;
        windowStart = s.windowStart;
        streamLength = s.streamLength;
        unread = -1; // taken with everything read, before the token unread
        beginWindow();
        window = s.window;
        readWindowFrom(0, s.guideAt, true);
    }
};

inline std::vector<float> toHost(const torch::Tensor& t) {
    auto c = t.to(torch::kCPU, torch::kFloat32).contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

} // namespace baton::engine
