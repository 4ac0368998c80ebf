#include "baton/engine/generator.h"

#include "baton/engine/model.h"
#include "model/model_impl.h"
#include "util/hash.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstring>
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
    Impl(std::shared_ptr<const Model> model_, const WindowSettings& w_, bool useState_)
        : model(std::move(model_))
        , m(model->impl())
        , w(w_)
        , useState(useState_) {
        const ModelConfig& c = m.info.config;
        cache.allocate(c, 1, w.window, m.dtype, m.device, m.stateSlots());
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
    }

    void prefill(const int32_t* ids, int64_t n, bool wantLogits) {
        std::vector<int64_t> v(ids, ids + n);
        auto input = torch::tensor(v, torch::kLong).to(m.device).unsqueeze(0);
        ForwardArgs args =
            m.windowArgs(torch::Tensor(), static_cast<int64_t>(window.size()), n, w.window);
        args.cache = &cache;
        auto out = m.net->forward(input, args);
        window.insert(window.end(), ids, ids + n);
        if (m.recurrent())
            pooled += out.pooled.to(torch::kFloat32);
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
            const int segment =
                m.recurrent() ? m.recurrence->segmentOf(cache.length, w.window) : -1;
            float* pool = segment >= 0
                              ? pooled.data_ptr<float>() + int64_t(segment) * m.info.config.nEmbd
                              : nullptr;
            m.decoder->step(id, cache.length, view, pool ? m.layerWeightsHost.data() : nullptr,
                            pool, hidden.data());
            cache.length += 1;
            m.decoder->lmHead(hidden.data(), lastLogits.data());
            window.push_back(id);
        } else {
            prefill(&id, 1, true);
        }
    }

    // Puts the state into the (empty) cache as the slots' keys and values.
    void enterState() {
        auto [slotK, slotV] = m.net->slotKeyValue(state, m.insertBlock());
        const int layer = m.insertBlock();
        cache.k[static_cast<size_t>(layer)].narrow(2, 0, cache.slots).copy_(slotK);
        cache.v[static_cast<size_t>(layer)].narrow(2, 0, cache.slots).copy_(slotV);
        cache.slotLayer = layer;
    }

    // The open window is full: pool it into h_prev, keep its last o tokens.
    void rollover() {
        const int64_t keep = w.overlap;
        std::vector<int32_t> tail(window.end() - keep, window.end());
        if (m.recurrent() && useState)
            state = m.nextState(pooled, static_cast<int64_t>(window.size()));
        windowStart += w.window - w.overlap;
        cache.clear();
        window.clear();
        if (pooled.defined())
            pooled.zero_();
        ++rollovers;
        if (state.defined())
            enterState();
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
    bool useState = true;
    KvCache cache;
    cpu::CacheView view;
    std::vector<int32_t> window;
    int64_t windowStart = 0;
    int64_t streamLength = 0;
    int64_t rollovers = 0;
    torch::Tensor state;  // the open window's state [1, S, k], compute dtype; undefined if none
    torch::Tensor pooled; // running sums per slot over the open window, float32 [1, S, k]
    std::vector<float> lastLogits;
    std::vector<float> hidden;
};

namespace {

// ---- the state blob ----
// "BATONST\0", u32 version, 16-byte model identity, i32 T, o, k, insert block,
// i32 slots S (version 2 on; 1 in version 1), u8 has-state, i64 window start, stream
// length, roll-overs, u32 token count, i32 tokens..., f32 state[S * k] (if has-state),
// f32 pool[S * k] (recurrent models), u64 checksum of everything before it.
constexpr char kStateMagic[8] = {'B', 'A', 'T', 'O', 'N', 'S', 'T', '\0'};

class BlobWriter {
public:
    template <typename T>
    void put(const T& v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        bytes.insert(bytes.end(), p, p + sizeof(T));
    }
    void putBytes(const void* data, size_t n) {
        const auto* p = static_cast<const uint8_t*>(data);
        bytes.insert(bytes.end(), p, p + n);
    }
    std::vector<uint8_t> bytes;
};

class BlobReader {
public:
    BlobReader(const std::vector<uint8_t>& b, size_t end)
        : m_b(b)
        , m_end(end) {}
    template <typename T>
    bool get(T& v) {
        return getBytes(&v, sizeof(T));
    }
    bool getBytes(void* out, size_t n) {
        if (m_pos + n > m_end)
            return false;
        std::memcpy(out, m_b.data() + m_pos, n);
        m_pos += n;
        return true;
    }
    bool atEnd() const { return m_pos == m_end; }

private:
    const std::vector<uint8_t>& m_b;
    size_t m_end;
    size_t m_pos = 0;
};

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

Result<std::vector<uint8_t>> Generator::exportState() const {
    const Impl& g = *m_impl;
    try {
        BlobWriter out;
        out.putBytes(kStateMagic, sizeof(kStateMagic));
        out.put(kStateFormatVersion);
        const std::string& id = g.m.info.identity;
        char identity[16] = {};
        std::memcpy(identity, id.data(), std::min<size_t>(16, id.size()));
        out.putBytes(identity, 16);
        out.put(int32_t(g.w.window));
        out.put(int32_t(g.w.overlap));
        out.put(int32_t(g.m.info.config.nEmbd));
        out.put(int32_t(g.m.insertBlock()));
        out.put(int32_t(g.m.stateSlots()));
        out.put(uint8_t(g.state.defined() ? 1 : 0));
        out.put(int64_t(g.windowStart));
        out.put(int64_t(g.streamLength));
        out.put(int64_t(g.rollovers));
        out.put(uint32_t(g.window.size()));
        out.putBytes(g.window.data(), g.window.size() * sizeof(int32_t));
        if (g.state.defined()) {
            const auto s = toHost(g.state);
            out.putBytes(s.data(), s.size() * sizeof(float));
        }
        if (g.pooled.defined()) {
            const auto p = toHost(g.pooled);
            out.putBytes(p.data(), p.size() * sizeof(float));
        }
        ContentHash h;
        h.update(out.bytes.data(), out.bytes.size());
        out.put(h.digest());
        return std::move(out.bytes);
    } catch (const c10::Error& e) {
        return torchError(e);
    }
}

Result<std::unique_ptr<Generator>> Generator::importState(std::shared_ptr<const Model> model,
                                                          const std::vector<uint8_t>& blob,
                                                          const WindowSettings& expected,
                                                          const CancelToken& cancel) {
    if (!model)
        return makeError(ErrorCode::InvalidArgument, "no model");
    auto corrupt = [](const std::string& what) {
        return makeError(ErrorCode::StateCorrupt, "the saved state is damaged: " + what);
    };
    if (blob.size() < sizeof(kStateMagic) + 4 + 8 ||
        std::memcmp(blob.data(), kStateMagic, sizeof(kStateMagic)) != 0)
        return corrupt("it is not a Baton state");
    uint32_t version = 0;
    std::memcpy(&version, blob.data() + sizeof(kStateMagic), 4);
    if (version != kStateFormatVersion && version != 1)
        return makeError(ErrorCode::StateVersion, "the saved state has format version " +
                                                      std::to_string(version) +
                                                      "; this build reads versions 1 to " +
                                                      std::to_string(kStateFormatVersion) +
                                                      " (it will be recomputed from the text)");
    uint64_t stored = 0;
    std::memcpy(&stored, blob.data() + blob.size() - 8, 8);
    ContentHash h;
    h.update(blob.data(), blob.size() - 8);
    if (h.digest() != stored)
        return corrupt("checksum mismatch");

    const ModelInfo& info = model->info();
    BlobReader in(blob, blob.size() - 8);
    char magic[8], identity[16];
    int32_t T = 0, o = 0, k = 0, block = 0, slots = 1;
    uint8_t hasState = 0;
    int64_t windowStart = 0, streamLength = 0, rollovers = 0;
    uint32_t count = 0;
    if (!in.getBytes(magic, 8) || !in.get(version) || !in.getBytes(identity, 16) || !in.get(T) ||
        !in.get(o) || !in.get(k) || !in.get(block) || (version >= 2 && !in.get(slots)) ||
        !in.get(hasState) || !in.get(windowStart) || !in.get(streamLength) || !in.get(rollovers) ||
        !in.get(count))
        return corrupt("it is too short");
    if (std::string(identity, 16) != info.identity)
        return makeError(ErrorCode::StateMismatch, "the saved state belongs to another model (" +
                                                       std::string(identity, 16) +
                                                       ", this one is " + info.identity + ")");
    if (k != info.config.nEmbd || block != model->impl().insertBlock() ||
        slots != model->impl().stateSlots())
        return makeError(ErrorCode::StateMismatch, "the saved state has another shape");
    const WindowSettings w{T, o};
    if (auto r = validateWindows(w, info.config.nPositions); !r)
        return corrupt(r.error().message);
    const WindowSettings want = resolveWindows(info, expected);
    if (want.window != T || want.overlap != o)
        return makeError(ErrorCode::StateMismatch,
                         "the saved state was made with T = " + std::to_string(T) +
                             ", o = " + std::to_string(o) + " but the story now runs with T = " +
                             std::to_string(want.window) + ", o = " + std::to_string(want.overlap));
    if (count > uint32_t(T) || windowStart < 0 || windowStart % (T - o) != 0 ||
        windowStart + int64_t(count) != streamLength || (hasState && !model->impl().recurrent()))
        return corrupt("inconsistent positions");
    std::vector<int32_t> tokens(count);
    if (!in.getBytes(tokens.data(), count * sizeof(int32_t)))
        return corrupt("it is too short");
    for (int32_t t : tokens)
        if (t < 0 || t >= info.config.vocabSize)
            return corrupt("a token id is outside the vocabulary");
    const size_t width = size_t(slots) * size_t(k);
    std::vector<float> state(hasState ? width : 0), pooled;
    if (hasState && !in.getBytes(state.data(), state.size() * sizeof(float)))
        return corrupt("it is too short");
    if (model->impl().recurrent()) {
        pooled.resize(width);
        if (!in.getBytes(pooled.data(), pooled.size() * sizeof(float)))
            return corrupt("it is too short");
    }
    if (!in.atEnd())
        return corrupt("unexpected trailing bytes");

    auto created = create(model, w, true);
    if (!created)
        return created.error();
    Impl& g = *(*created)->m_impl;
    try {
        torch::NoGradGuard noGrad;
        const auto opts = torch::TensorOptions().dtype(torch::kFloat32);
        if (hasState) {
            g.state = torch::from_blob(state.data(), {1, slots, k}, opts)
                          .clone()
                          .to(g.m.device, g.m.dtype);
            g.enterState();
        }
        if (!tokens.empty())
            g.prefill(tokens.data(), static_cast<int64_t>(tokens.size()), true);
        if (cancel.cancelled())
            return makeError(ErrorCode::Cancelled, "cancelled while restoring the state");
        // The stored running pool continues the exported one exactly.
        if (g.pooled.defined())
            g.pooled.copy_(torch::from_blob(pooled.data(), {1, slots, k}, opts));
        g.windowStart = windowStart;
        g.streamLength = streamLength;
        g.rollovers = rollovers;
    } catch (const c10::Error& e) {
        return torchError(e);
    }
    return created;
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
