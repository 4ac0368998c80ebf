#include "training/held_out.h"

#include "util/files.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

namespace baton::engine {

namespace {

constexpr uint64_t kBase = 0x9E3779B97F4A7C15ULL; // odd: a bijection mod 2^64

// Every kOverlapGram-token run of the held-out text by its rolling hash, the first place
// it occurs kept (open addressing, linear probing).
class GramTable {
public:
    explicit GramTable(size_t grams) {
        size_t cap = 16;
        while (cap < grams * 2)
            cap <<= 1;
        m_mask = cap - 1;
        m_keys.assign(cap, 0);
        m_refs.assign(cap, Ref{});
    }
    void insert(uint64_t hash, uint32_t doc, const int32_t* at) {
        hash = hash ? hash : 1;
        for (size_t i = hash & m_mask;; i = (i + 1) & m_mask) {
            if (m_keys[i] == 0) {
                m_keys[i] = hash;
                m_refs[i] = {doc, at};
                return;
            }
            if (m_keys[i] == hash &&
                std::memcmp(m_refs[i].at, at, sizeof(int32_t) * kOverlapGram) == 0)
                return; // already there
        }
    }
    // The held-out document holding this run, or -1.
    int64_t find(uint64_t hash, const int32_t* at) const {
        hash = hash ? hash : 1;
        for (size_t i = hash & m_mask; m_keys[i] != 0; i = (i + 1) & m_mask)
            if (m_keys[i] == hash &&
                std::memcmp(m_refs[i].at, at, sizeof(int32_t) * kOverlapGram) == 0)
                return m_refs[i].doc;
        return -1;
    }

private:
    size_t m_mask = 0;
    std::vector<uint64_t> m_keys;
    struct Ref {
        uint32_t doc = 0;
        const int32_t* at = nullptr;
    };
    std::vector<Ref> m_refs;
};

// Calls f(position, hash) for every kOverlapGram-token run of the document.
template <typename F>
void forEachGram(const TokenSpan& doc, F&& f) {
    const size_t n = kOverlapGram;
    if (doc.size() < n)
        return;
    uint64_t top = 1; // kBase^(n-1)
    for (size_t i = 1; i < n; ++i)
        top *= kBase;
    uint64_t h = 0;
    for (size_t i = 0; i < n; ++i)
        h = h * kBase + uint64_t(uint32_t(doc[i])) + 1;
    for (size_t p = 0;; ++p) {
        f(p, h);
        if (p + n >= doc.size())
            break;
        h = (h - (uint64_t(uint32_t(doc[p])) + 1) * top) * kBase + uint64_t(uint32_t(doc[p + n])) +
            1;
    }
}

} // namespace

bool namesWork(const std::string& name, const std::string& work) {
    return name == work || (name.size() > work.size() &&
                            name.compare(name.size() - work.size(), work.size(), work) == 0 &&
                            name[name.size() - work.size() - 1] == '/');
}

Result<std::vector<std::string>> readWorkList(const std::string& path) {
    auto text = files::readAll(path, size_t(16) << 20);
    if (!text)
        return text.error();
    std::vector<std::string> works;
    size_t pos = 0;
    while (pos < text->size()) {
        size_t end = text->find('\n', pos);
        if (end == std::string::npos)
            end = text->size();
        const std::string line = text->substr(pos, end - pos);
        pos = end + 1;
        const size_t a = line.find_first_not_of(" \t\r");
        if (a == std::string::npos || line[a] == '#')
            continue;
        const size_t b = line.find_last_not_of(" \t\r");
        works.push_back(line.substr(a, b - a + 1));
    }
    if (works.empty())
        return makeError(ErrorCode::InvalidArgument, path + " names no work");
    return works;
}

Result<void> takeWorks(TokenizedCorpus& corpus, TokenizedCorpus& validation,
                       const std::vector<std::string>& works) {
    std::vector<bool> taken(corpus.docs.size(), false);
    std::vector<size_t> order;
    for (const auto& work : works) {
        size_t found = corpus.docs.size(), matches = 0;
        for (size_t d = 0; d < corpus.docs.size(); ++d)
            if (namesWork(corpus.names[d], work)) {
                found = d;
                ++matches;
            }
        if (matches == 0)
            return makeError(ErrorCode::InvalidArgument,
                             "the validation work \"" + work + "\" is not in the corpus");
        if (matches > 1)
            return makeError(ErrorCode::InvalidArgument, "the validation work \"" + work +
                                                             "\" names " + std::to_string(matches) +
                                                             " documents of the corpus");
        if (!taken[found])
            order.push_back(found);
        taken[found] = true;
    }
    TokenizedCorpus kept;
    for (size_t d = 0; d < corpus.docs.size(); ++d)
        if (!taken[d]) {
            kept.names.push_back(corpus.names[d]);
            kept.docs.push_back(corpus.docs[d]);
        }
    for (size_t d : order) {
        validation.names.push_back(corpus.names[d]);
        validation.docs.push_back(corpus.docs[d]);
    }
    if (!validation.storage)
        validation.storage = corpus.storage;
    else if (validation.storage != corpus.storage)
        validation.storage =
            std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
                validation.storage, corpus.storage);
    kept.storage = corpus.storage;
    corpus = std::move(kept);
    return {};
}

Overlap longestOverlap(const TokenizedCorpus& training,
                       const std::vector<const TokenizedCorpus*>& heldOut, int threads) {
    std::vector<std::pair<const TokenSpan*, const std::string*>> docs;
    size_t grams = 0;
    for (const auto* corpus : heldOut)
        for (size_t d = 0; d < corpus->docs.size(); ++d) {
            docs.push_back({&corpus->docs[d], &corpus->names[d]});
            if (corpus->docs[d].size() >= size_t(kOverlapGram))
                grams += corpus->docs[d].size() - kOverlapGram + 1;
        }
    Overlap best;
    if (grams == 0)
        return best;
    GramTable table(grams);
    for (size_t k = 0; k < docs.size(); ++k)
        forEachGram(*docs[k].first, [&](size_t p, uint64_t h) {
            table.insert(h, uint32_t(k), docs[k].first->data() + p);
        });

    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t team = std::max<size_t>(
        1, std::min<size_t>(training.docs.size(), threads > 0 ? size_t(threads) : cores));
    std::atomic<size_t> next{0};
    std::mutex mutex;
    std::vector<std::thread> workers;
    for (size_t w = 0; w < team; ++w)
        workers.emplace_back([&] {
            Overlap mine;
            for (size_t d; (d = next.fetch_add(1)) < training.docs.size();) {
                const TokenSpan& doc = training.docs[d];
                int64_t runStart = -1, runDoc = -1;
                forEachGram(doc, [&](size_t p, uint64_t h) {
                    const int64_t hit = table.find(h, doc.data() + p);
                    if (hit < 0) {
                        runStart = -1;
                        return;
                    }
                    if (runStart < 0) {
                        runStart = int64_t(p);
                        runDoc = hit;
                    }
                    const int64_t tokens = int64_t(p) - runStart + kOverlapGram;
                    if (tokens > mine.tokens) {
                        mine.tokens = tokens;
                        mine.heldOut = *docs[size_t(runDoc)].second;
                        mine.training = training.names[d];
                        mine.trainingOffset = runStart;
                    }
                });
            }
            std::lock_guard<std::mutex> lock(mutex);
            if (mine.tokens > best.tokens)
                best = mine;
        });
    for (auto& w : workers)
        w.join();
    return best;
}

} // namespace baton::engine
