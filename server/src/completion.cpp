#include "completion.h"

#include <baton/engine/scoring.h>
#include <baton/engine/tokenizer.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace baton::server {

using engine::ErrorCode;
using engine::makeError;

namespace {

// Streams remembered for prompts the client trims: a story in each of a few tabs or
// front ends.
constexpr size_t kRecentStreams = 4;

} // namespace

struct CompletionEngine::Live {
    std::unique_ptr<engine::Generator> generator;
    std::vector<int32_t> stream; // every token it read or generated
    size_t promptLength = 0;     // of those, the prompt's (the generator's mark)
};

CompletionEngine::CompletionEngine(engine::WindowSettings windows, size_t cacheBytes,
                                   std::unique_ptr<SavedStates> saved)
    : m_windows(windows)
    , m_cache(cacheBytes)
    , m_saved(std::move(saved)) {}

CompletionEngine::~CompletionEngine() = default;

std::vector<int32_t> CompletionEngine::tokenize(const engine::Model& model,
                                                const std::string& text) {
    const auto tokenizer = model.tokenizer();
    return tokenizer ? tokenizer->encode(text) : std::vector<int32_t>{};
}

CompletionStats CompletionEngine::stats() const {
    std::lock_guard lock(m_statsMutex);
    CompletionStats s = m_stats;
    s.cacheEntries = m_cache.entries();
    s.cacheBytes = m_cache.bytes();
    return s;
}

engine::Result<std::unique_ptr<engine::Generator>>
CompletionEngine::startFrom(const std::shared_ptr<const engine::Model>& model,
                            const engine::WindowSettings& w, const std::vector<int32_t>& ids,
                            const std::vector<PrefixHasher::Key>& keys, int64_t& start,
                            int64_t& reread, const engine::CancelToken& cancel) {
    reread = 0;
    if (m_live) {
        const auto [covered, toMark] = liveCovers(ids);
        if (covered > 0 && (!toMark || m_live->generator->rewind()))
            start = covered;
        auto generator = std::move(m_live->generator);
        m_live.reset();
        if (start > 0)
            return generator;
    }
    for (;;) {
        // The longest saved prefix, in memory or, longer, in the database.
        auto hit = m_cache.longest(keys);
        bool fromDatabase = false;
        if (m_saved)
            if (auto saved = m_saved->longest(m_cacheOwner, keys, hit ? hit->length + 1 : 0)) {
                hit = std::move(saved);
                fromDatabase = true;
            }
        if (!hit)
            break;
        const PrefixHasher::Key& key = keys[size_t(hit->length)];
        auto generator = engine::Generator::importState(model, hit->blob, w, cancel);
        if (generator) {
            start = hit->length;
            reread = (*generator)->windowFill(); // an imported state re-reads its window
            if (fromDatabase) {
                std::lock_guard lock(m_statsMutex);
                ++m_stats.savedHits;
                m_cache.put(key, std::move(hit->blob));
            }
            return std::move(*generator);
        }
        if (generator.error().code == ErrorCode::Cancelled)
            return generator.error();
        if (fromDatabase) // another build's state, or damaged
            m_saved->erase(m_cacheOwner, key);
        else
            m_cache.erase(key);
    }
    start = 0;
    return engine::Generator::create(model, w);
}

std::pair<int64_t, bool> CompletionEngine::liveCovers(const std::vector<int32_t>& ids) const {
    if (!m_live)
        return {0, false};
    // What it read and generated, or what it read (back to its mark, before the
    // generated text: a client that sends its own text after the prompt).
    const auto& stream = m_live->stream;
    const size_t prompt = m_live->promptLength;
    if (stream.size() <= ids.size() && std::equal(stream.begin(), stream.end(), ids.begin()))
        return {int64_t(stream.size()), false};
    if (prompt <= ids.size() &&
        std::equal(stream.begin(), stream.begin() + long(prompt), ids.begin()))
        return {int64_t(prompt), true};
    return {0, false};
}

int64_t CompletionEngine::reusable(const std::vector<int32_t>& ids,
                                   const std::vector<PrefixHasher::Key>& keys) const {
    int64_t covered = std::max(m_cache.longestLength(keys), liveCovers(ids).first);
    if (m_saved)
        covered = std::max(covered, m_saved->longestLength(m_cacheOwner, keys));
    return covered;
}

std::vector<int32_t>
CompletionEngine::continueTrimmed(const std::shared_ptr<const engine::Model>& model,
                                  const Prompt& prompt, CompletionResult& out) const {
    const std::vector<int32_t>& ids = prompt.ids;
    const engine::WindowSettings& w = prompt.windows;
    if (m_recent.empty() || int64_t(ids.size()) < 2 * w.window)
        return ids;
    // Only when more than a window would be read otherwise.
    const int64_t covered = reusable(ids, prefixKeys(ids));
    if (int64_t(ids.size()) - covered <= w.window)
        return ids;
    std::vector<ReadStream> streams;
    streams.reserve(m_recent.size());
    for (const Recent& r : m_recent)
        streams.push_back(r.stream);
    const auto tokenizer = model->tokenizer();
    auto decode = [&](const std::vector<int32_t>& t) { return tokenizer->decode(t); };
    auto hasState = [&](size_t stream, int64_t boundary) {
        const PrefixHasher::Key& key = m_recent[stream].keys[size_t(boundary)];
        return m_cache.contains(key) || (m_saved && m_saved->has(m_cacheOwner, key));
    };
    const auto match = matchTrimmedPrompt(ids, streams, w, decode, hasState, covered);
    if (!match || match->promptAt <= covered)
        return ids;
    const std::vector<int32_t>& s = streams[match->stream].tokens;
    std::vector<int32_t> effective(s.begin(), s.begin() + long(match->boundary));
    effective.insert(effective.end(), ids.begin() + long(match->promptAt), ids.end());
    out.continuedTrimmed = true;
    out.continuedFrom = match->boundary;
    out.reusedTokens = match->promptAt;
    return effective;
}

void CompletionEngine::remember(ReadStream stream, bool save) {
    // A stream that continues a remembered one replaces it.
    for (auto it = m_recent.begin(); it != m_recent.end(); ++it)
        if (it->stream.tokens.size() <= stream.tokens.size() &&
            std::equal(it->stream.tokens.begin(), it->stream.tokens.end(), stream.tokens.begin())) {
            m_recent.erase(it);
            break;
        }
    if (save && m_saved)
        m_saved->putStream(m_cacheOwner, stream);
    auto keys = prefixKeys(stream.tokens);
    m_recent.push_front(Recent{std::move(stream), std::move(keys)});
    while (m_recent.size() > kRecentStreams)
        m_recent.pop_back();
}

engine::Result<CompletionEngine::Prompt>
CompletionEngine::readPrompt(const std::shared_ptr<const engine::Model>& model,
                             const CompletionRequest& request) const {
    if (!model)
        return makeError(ErrorCode::Unsupported, "no model is loaded");
    const engine::ModelInfo& info = model->info();
    Prompt p;
    p.windows = engine::resolveWindows(info, m_windows);
    if (auto r = engine::validateWindows(p.windows, info.config.nPositions); !r)
        return r.error();
    const auto tokenizer = model->tokenizer();
    if (!tokenizer)
        return makeError(ErrorCode::Unsupported, "this model has no tokenizer");
    // Start-of-text first, for a model that reads texts after it; an empty prompt starts
    // from what a generation from nothing starts from.
    const int startToken = engine::startOfTextToken(info.config);
    const int emptyStart = engine::emptyStartToken(info.config);
    if (startToken >= info.config.vocabSize || emptyStart < 0 ||
        emptyStart >= info.config.vocabSize)
        return makeError(ErrorCode::Unsupported, "this model has no start-of-text token");
    std::vector<int32_t> text =
        request.promptIds ? *request.promptIds : tokenizer->encode(request.prompt);
    for (int32_t id : text)
        if (id < 0 || id >= info.config.vocabSize)
            return makeError(ErrorCode::InvalidArgument,
                             "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                 std::to_string(info.config.vocabSize) + " tokens)");
    if (request.maxContextTokens > 0) {
        const int64_t keep =
            std::max<int64_t>(1, request.maxContextTokens - int64_t(request.sampling.maxTokens));
        if (int64_t(text.size()) > keep) {
            text.erase(text.begin(), text.end() - keep);
            p.truncated = true;
        }
    }
    p.ids.reserve(text.size() + 1);
    if (startToken >= 0 || text.empty())
        p.ids.push_back(startToken >= 0 ? startToken : emptyStart);
    p.ids.insert(p.ids.end(), text.begin(), text.end());
    return p;
}

engine::Result<std::vector<engine::TokenScore>>
CompletionEngine::scorePrompt(const std::shared_ptr<const engine::Model>& model,
                              const CompletionRequest& request, int alternatives,
                              const engine::CancelToken& cancel) const {
    auto prompt = readPrompt(model, request);
    if (!prompt)
        return prompt.error();
    engine::ScoreOptions options;
    options.windows = prompt->windows;
    options.topAlternatives = alternatives;
    options.cancel = cancel;
    auto scored = engine::scoreTokens(*model, prompt->ids, options);
    if (!scored)
        return scored.error();
    std::vector<engine::TokenScore> out = std::move(scored->perToken);
    if (engine::startOfTextToken(model->info().config) < 0 && !prompt->ids.empty() &&
        !request.prompt.empty()) {
        engine::TokenScore first;
        first.id = prompt->ids.front();
        first.logprob = std::numeric_limits<float>::quiet_NaN();
        out.insert(out.begin(), first);
    }
    return out;
}

engine::Result<CompletionResult>
CompletionEngine::complete(const std::shared_ptr<const engine::Model>& model,
                           const CompletionRequest& request,
                           const std::function<bool(const engine::GenerationEvent&)>& onToken,
                           const engine::CancelToken& cancel) {
    if (auto r = engine::validateSampling(request.sampling); !r)
        return r.error();
    auto prompt = readPrompt(model, request);
    if (!prompt)
        return prompt.error();
    const engine::ModelInfo& info = model->info();
    const engine::WindowSettings w = prompt->windows;
    const std::string owner =
        info.identity + "/" + std::to_string(w.window) + "/" + std::to_string(w.overlap);
    if (owner != m_cacheOwner) {
        m_cache.clear();
        m_live.reset();
        m_recent.clear();
        m_cacheOwner = owner;
        // The streams a server before this one read (a restart): the trimmed-prompt
        // matcher finds them, and their states, in the database.
        if (m_saved) {
            auto saved = m_saved->recentStreams(owner, int(kRecentStreams));
            for (auto it = saved.rbegin(); it != saved.rend(); ++it)
                remember(std::move(*it), false);
        }
    }
    CompletionResult out;
    out.truncated = prompt->truncated;
    // What is read: the prompt, or the stream it continues and its new part.
    const std::vector<int32_t> ids = continueTrimmed(model, *prompt, out);
    const std::vector<PrefixHasher::Key> keys = prefixKeys(ids);

    const auto readStart = std::chrono::steady_clock::now();
    int64_t start = 0, reread = 0;
    auto started = startFrom(model, w, ids, keys, start, reread, cancel);
    if (!started)
        return started.error();
    std::unique_ptr<engine::Generator> gen = std::move(*started);
    if (gen->streamLength() != start)
        return makeError(ErrorCode::Internal, "a kept generator does not match its tokens");
    out.promptTokens = int64_t(prompt->ids.size());
    if (out.continuedTrimmed) // what was read of the stream beyond the boundary, or not
        out.reusedTokens = std::max<int64_t>(0, out.reusedTokens + start - out.continuedFrom);
    else
        out.reusedTokens = start;
    out.encodedTokens = reread;

    // Read the rest of the prompt a window at a time, saving the state of every full
    // window, and the state at the end of the prompt (a retry of the same prompt).
    auto save = [&](const PrefixHasher::Key& key) {
        if (auto blob = gen->exportState()) {
            if (m_saved)
                m_saved->put(m_cacheOwner, key, *blob);
            m_cache.put(key, std::move(*blob));
        }
    };
    size_t pos = size_t(start);
    while (pos < ids.size()) {
        const int fill = gen->windowFill();
        const int room = fill == w.window ? w.stride() : w.window - fill;
        const size_t n = std::min(size_t(room), ids.size() - pos);
        if (auto r = gen->append({ids.begin() + long(pos), ids.begin() + long(pos + n)}, cancel);
            !r)
            return r.error();
        pos += n;
        out.encodedTokens += int64_t(n);
        if (gen->windowFill() == w.window || pos == ids.size())
            save(keys[pos]);
    }

    out.readSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - readStart).count();
    gen->mark(); // a client that does not send the generated text back comes back here
    std::vector<int32_t> stream = ids;
    PrefixHasher hasher(keys.back());
    auto perToken = [&](const engine::GenerationEvent& e) {
        const bool go = !onToken || onToken(e); // streamed before the model reads it
        if (e.token >= 0) {
            stream.push_back(e.token);
            hasher.push(e.token);
            if (e.windowFill == w.window)
                save(hasher.key());
        }
        return go;
    };
    auto generated = gen->generate(request.sampling, perToken, cancel);
    if (!generated)
        return generated.error();
    out.generation = std::move(*generated);
    remember(ReadStream{stream, prompt->ids,
                        out.continuedTrimmed
                            ? out.continuedFrom - (int64_t(prompt->ids.size()) -
                                                   int64_t(ids.size() - out.continuedFrom))
                            : 0},
             true);
    m_live = std::make_unique<Live>(Live{std::move(gen), std::move(stream), ids.size()});
    {
        std::lock_guard lock(m_statsMutex);
        m_stats.completions += 1;
        m_stats.trimmedMatches += out.continuedTrimmed ? 1 : 0;
        m_stats.promptTokens += out.promptTokens;
        m_stats.reusedTokens += out.reusedTokens;
        m_stats.encodedTokens += out.encodedTokens;
        m_stats.generatedTokens += int64_t(out.generation.tokens.size());
    }
    return out;
}

} // namespace baton::server
