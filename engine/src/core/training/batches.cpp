#include "training/batches.h"

#include "baton/engine/sampling.h"
#include "probe/episodes.h"
#include "training/held_out.h"
#include "training/token_store.h"
#include "util/files.h"
#include "util/hash.h"

#include <torch/torch.h>

#include <cmath>
#include <numeric>

namespace baton::engine {

namespace {

std::vector<int64_t> epochOrder(size_t count, uint64_t seed, int64_t epoch) {
    std::vector<int64_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    Rng rng(seed * 1000003ULL + static_cast<uint64_t>(epoch));
    for (size_t i = count; i > 1; --i)
        std::swap(order[i - 1], order[rng.next() % i]);
    return order;
}

} // namespace

Result<void> BatchSource::prepare(const TrainConfig& c, std::shared_ptr<const Tokenizer> tokenizer,
                                  std::string& summary, const JobProgress& progress,
                                  const CancelToken& cancel) {
    m_config = c;
    m_tokenizer = std::move(tokenizer);
    auto trainSources = listTokenSources(c.corpus);
    if (!trainSources)
        return trainSources.error();
    std::vector<TokenSource> valSources;
    if (!c.validation.empty()) {
        auto v = listTokenSources(c.validation);
        if (!v)
            return makeError(v.error().code, "validation: " + v.error().message);
        valSources = std::move(*v);
    }
    // One store for both: pieces are found by their identity.
    TokenStoreOptions store;
    store.folder = files::join(c.outDir, "data");
    store.unwrap = c.unwrap;
    auto train = buildTokenStore(*trainSources, *m_tokenizer, store, progress, cancel);
    if (!train)
        return train.error();
    m_train = std::move(*train);
    if (!valSources.empty()) {
        auto val = buildTokenStore(valSources, *m_tokenizer, store, {}, cancel);
        if (!val)
            return val.error();
        m_validation = std::move(*val);
    }
    if (!c.validationWorks.empty()) {
        if (auto r = takeWorks(m_train, m_validation, c.validationWorks); !r)
            return r;
    } else if (valSources.empty() && m_train.docs.size() >= 2 && c.validationFraction > 0) {
        // Whole documents held out: the last ones, in source order.
        const size_t n = m_train.docs.size();
        const size_t k =
            std::max<size_t>(1, static_cast<size_t>(std::lround(c.validationFraction * double(n))));
        const size_t back = std::min(k, n - 1);
        m_validation = m_train.slice(n - back, n);
        m_train = m_train.slice(0, n - back);
    }
    // No validation or held-out text in the training stream, nor a long stretch of it.
    TokenizedCorpus held;
    if (!c.heldOut.empty()) {
        auto sources = listTokenSources(c.heldOut);
        if (!sources)
            return makeError(sources.error().code, "--held-out: " + sources.error().message);
        auto h = buildTokenStore(*sources, *m_tokenizer, store, {}, cancel);
        if (!h)
            return h.error();
        held = std::move(*h);
    }
    const Overlap shared = longestOverlap(m_train, {&m_validation, &held});
    if (shared.tokens >= kMostSharedTokens)
        return makeError(
            ErrorCode::InvalidArgument,
            "the training corpus holds held-out text: " + std::to_string(shared.tokens) +
                " tokens of " + shared.heldOut + " in a row in " + shared.training +
                " (from its token " + std::to_string(shared.trainingOffset) +
                "); take that document out of the corpus");
    m_sequences = planSequences(m_train, {c.window, c.overlap}, c.bpttWindows, m_spans);
    if (c.episodesPerSequence > 0)
        m_sentenceEnd = sentenceEndTokens(*m_tokenizer);
    if (m_sequences.empty())
        return makeError(
            ErrorCode::InvalidArgument,
            "the training documents are too short: a sequence needs " +
                std::to_string(c.bpttWindows) + " full windows of " + std::to_string(c.window) +
                " tokens (at least " +
                std::to_string(int64_t(c.bpttWindows) * (c.window - c.overlap) + c.overlap + 1) +
                " tokens in one document)");
    std::string valNames;
    for (const auto& n : m_validation.names)
        valNames += (valNames.empty() ? "" : ", ") + n;
    const auto count = [](size_t n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    summary =
        "training on " + count(m_train.docs.size(), "document", "documents") + " (" +
        count(size_t(m_train.tokenCount()), "token", "tokens") + ", " +
        count(m_sequences.size(), "sequence", "sequences") + " of " +
        count(size_t(c.bpttWindows), "window", "windows") +
        "); validation: " + (valNames.empty() ? std::string("none") : valNames) +
        (m_validation.docs.empty() && held.docs.empty() ? std::string()
         : shared.tokens == 0
             ? "; held-out check: no " + std::to_string(kOverlapGram) +
                   " tokens of validation or held-out text in a row in the training "
                   "documents"
             : "; held-out check: at most " + std::to_string(shared.tokens) +
                   " tokens of validation or held-out text in a row in the training "
                   "documents (" +
                   shared.training + "; a run stops at " + std::to_string(kMostSharedTokens) + ")");
    return {};
}

std::string BatchSource::fingerprint() const {
    ContentHash h;
    for (const auto* corpus : {&m_train, &m_validation}) {
        h.update(std::to_string(corpus->docs.size()) + ";");
        for (const auto& doc : corpus->docs) {
            h.update(std::to_string(doc.size()) + ";");
            h.update(doc.data(), doc.size() * sizeof(int32_t));
        }
    }
    return h.hex();
}

void BatchSource::startEpoch(int64_t epoch) {
    m_order = epochOrder(m_sequences.size(), m_config.seed, epoch);
}

WindowBatch BatchSource::next(int64_t& epoch, int64_t& position, const std::vector<int>& windows) {
    const TrainConfig& c = m_config;
    const int64_t B = c.batchSize, T = c.window;
    const auto scoredWindows = [&](int64_t b) {
        return windows.empty() ? int64_t(c.bpttWindows)
                               : std::min<int64_t>(c.bpttWindows, windows[size_t(b)]);
    };
    int64_t W = 0;
    for (int64_t b = 0; b < B; ++b)
        W = std::max(W, scoredWindows(b));
    std::vector<int64_t> inputs(size_t(W * B * T)), targets(size_t(W * B * T), -1);
    int64_t scored = 0;
    for (int64_t b = 0; b < B; ++b) {
        if (position >= int64_t(m_order.size())) {
            ++epoch;
            position = 0;
            startEpoch(epoch);
        }
        const int64_t picked = m_order[size_t(position++)];
        const Sequence& s = m_sequences[size_t(picked)];
        const auto& ids = m_train.docs[size_t(s.doc)];
        const auto& spans = m_spans[size_t(s.doc)];
        // The sequence's tokens, with memory episodes mixed in when asked for (the same
        // ones for every run of this seed: they depend on the seed, epoch and sequence).
        const int64_t origin = spans[size_t(s.firstSpan)].start;
        // Up to the target of the last window's last position.
        const int64_t end = spans[size_t(s.firstSpan + W - 1)].lastScored + 1;
        std::vector<int32_t> stream(ids.begin() + origin, ids.begin() + end);
        if (c.episodesPerSequence > 0) {
            Rng rng(c.seed * 1000003ULL + uint64_t(epoch) * 7919ULL + uint64_t(picked));
            mixEpisodes(stream, int(std::min<int64_t>(c.episodesPerSequence, W)), int(W),
                        {c.window, c.overlap}, *m_tokenizer, m_sentenceEnd, rng);
        }
        for (int64_t n = 0; n < W; ++n) {
            const WindowSpan& span = spans[size_t(s.firstSpan + n)];
            const size_t base = size_t((n * B + b) * T);
            for (int64_t p = 0; p < T; ++p) {
                inputs[base + size_t(p)] = stream[size_t(span.start - origin + p)];
                const int64_t target = span.start + p + 1;
                if (n < scoredWindows(b) && target >= span.firstScored &&
                    target <= span.lastScored) {
                    targets[base + size_t(p)] = stream[size_t(target - origin)];
                    ++scored;
                }
            }
        }
    }
    WindowBatch batch;
    batch.inputs = torch::tensor(inputs).view({W, B, T});
    batch.targets = torch::tensor(targets).view({W, B, T});
    batch.scored = scored;
    return batch;
}

} // namespace baton::engine
