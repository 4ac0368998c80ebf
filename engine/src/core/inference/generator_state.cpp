// A generator's state as an opaque blob: export, import (continuing exactly where the
// exported generator stopped) and its summary.
#include "inference/generator_impl.h"

namespace baton::engine {

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
        torch::NoGradGuard noGrad;
        m_impl->catchUp(); // a token generate() has handed out, read first
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

} // namespace baton::engine
