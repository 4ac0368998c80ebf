#include "baton/engine/topics.h"

#include "util/files.h"
#include "util/json.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <thread>
#include <unordered_map>

namespace baton::engine {

extern const char* const kStopWordsText; // generated from resources/stopwords-en.txt

namespace {

using Clock = std::chrono::steady_clock;

bool isLetterByte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

// A small, fast, seedable generator (xoshiro-style splitmix64 stream): the sampler
// draws hundreds of millions of numbers.
class FastRng {
public:
    explicit FastRng(uint64_t seed)
        : m_s(seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL) {}
    uint64_t next() {
        uint64_t z = (m_s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
    int below(int n) { return static_cast<int>(next() % uint64_t(n)); }

private:
    uint64_t m_s;
};

// Draws an index from unnormalised cumulative weights.
int drawFromCumulative(const std::vector<double>& cum, FastRng& rng) {
    const double u = rng.uniform() * cum.back();
    return static_cast<int>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin());
}

struct Corpus {
    std::vector<std::vector<int32_t>> docs; // word ids
    std::vector<std::string> vocabulary;
    int64_t tokens = 0;
};

Corpus buildCorpus(const std::vector<std::string>& texts, const LdaOptions& o) {
    // Chunks of about chunkWords words (counted before filtering).
    std::vector<std::vector<std::string>> chunks;
    for (const auto& t : texts) {
        auto words = wordTokens(t);
        const size_t per = size_t(std::max(1, o.chunkWords));
        for (size_t i = 0; i < words.size(); i += per) {
            const size_t end = std::min(words.size(), i + per);
            // A short tail joins the previous chunk of the same text.
            if (end - i < per / 2 && !chunks.empty() && i > 0) {
                chunks.back().insert(chunks.back().end(), words.begin() + long(i),
                                     words.begin() + long(end));
                continue;
            }
            chunks.emplace_back(words.begin() + long(i), words.begin() + long(end));
        }
    }
    std::unordered_map<std::string, int> docFreq;
    std::vector<std::string> stop = o.stopWords;
    std::sort(stop.begin(), stop.end());
    auto isStop = [&](const std::string& w) {
        return std::binary_search(stop.begin(), stop.end(), w) || int(w.size()) < o.minWordLength;
    };
    for (const auto& c : chunks) {
        std::vector<std::string> seen(c);
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        for (const auto& w : seen)
            if (!isStop(w))
                ++docFreq[w];
    }
    Corpus out;
    const double maxDf = o.maxDocFrequency * double(chunks.size());
    for (const auto& [w, df] : docFreq)
        if (df >= o.minDocFrequency && double(df) <= maxDf)
            out.vocabulary.push_back(w);
    std::sort(out.vocabulary.begin(), out.vocabulary.end());
    std::unordered_map<std::string, int> id;
    for (size_t i = 0; i < out.vocabulary.size(); ++i)
        id[out.vocabulary[i]] = int(i);
    for (const auto& c : chunks) {
        std::vector<int32_t> doc;
        for (const auto& w : c)
            if (auto it = id.find(w); it != id.end())
                doc.push_back(it->second);
        if (!doc.empty()) {
            out.tokens += int64_t(doc.size());
            out.docs.push_back(std::move(doc));
        }
    }
    return out;
}

// The collapsed Gibbs sampler's state.
struct Sampler {
    int K = 0, V = 0;
    double alpha = 0, beta = 0;
    const std::vector<std::vector<int32_t>>* docs = nullptr;
    std::vector<std::vector<uint16_t>> z;  // topic of every token
    std::vector<std::vector<int32_t>> ndk; // per document, K counts
    std::vector<int32_t> nkw;              // K x V
    std::vector<int64_t> nk;               // K

    void initialise(uint64_t seed) {
        FastRng rng(seed);
        nkw.assign(size_t(K) * size_t(V), 0);
        nk.assign(size_t(K), 0);
        z.resize(docs->size());
        ndk.assign(docs->size(), std::vector<int32_t>(size_t(K), 0));
        for (size_t d = 0; d < docs->size(); ++d) {
            const auto& doc = (*docs)[d];
            z[d].resize(doc.size());
            for (size_t i = 0; i < doc.size(); ++i) {
                const int k = rng.below(K);
                z[d][i] = uint16_t(k);
                ++ndk[d][size_t(k)];
                ++nkw[size_t(k) * size_t(V) + size_t(doc[i])];
                ++nk[size_t(k)];
            }
        }
    }

    // One sweep over documents [begin, end) against the given counts.
    void sweep(size_t begin, size_t end, std::vector<int32_t>& kw, std::vector<int64_t>& kt,
               FastRng& rng) {
        std::vector<double> cum(static_cast<size_t>(K));
        const double vBeta = double(V) * beta;
        for (size_t d = begin; d < end; ++d) {
            const auto& doc = (*docs)[d];
            auto& zd = z[d];
            auto& nd = ndk[d];
            for (size_t i = 0; i < doc.size(); ++i) {
                const size_t w = size_t(doc[i]);
                int k = zd[i];
                --nd[size_t(k)];
                --kw[size_t(k) * size_t(V) + w];
                --kt[size_t(k)];
                double acc = 0;
                for (int j = 0; j < K; ++j) {
                    acc += (double(nd[size_t(j)]) + alpha) *
                           (double(kw[size_t(j) * size_t(V) + w]) + beta) /
                           (double(kt[size_t(j)]) + vBeta);
                    cum[size_t(j)] = acc;
                }
                k = drawFromCumulative(cum, rng);
                zd[i] = uint16_t(k);
                ++nd[size_t(k)];
                ++kw[size_t(k) * size_t(V) + w];
                ++kt[size_t(k)];
            }
        }
    }

    // log p(w | z) per token under the current counts (the collapsed likelihood's
    // word part), to watch convergence.
    double logLikelihoodPerToken(int64_t tokens) const {
        double ll = 0;
        const double vBeta = double(V) * beta;
        for (int k = 0; k < K; ++k) {
            ll += std::lgamma(vBeta) - std::lgamma(double(nk[size_t(k)]) + vBeta);
            for (int w = 0; w < V; ++w) {
                const int32_t c = nkw[size_t(k) * size_t(V) + size_t(w)];
                if (c > 0)
                    ll += std::lgamma(double(c) + beta) - std::lgamma(beta);
            }
        }
        return tokens ? ll / double(tokens) : 0.0;
    }
};

} // namespace

std::vector<std::string> wordTokens(std::string_view text) {
    std::vector<std::string> out;
    std::string cur;
    auto flush = [&] {
        if (!cur.empty())
            out.push_back(std::move(cur));
        cur.clear();
    };
    auto letterAt = [&](size_t i) {
        if (i >= text.size())
            return false;
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == 0xE2 && i + 1 < text.size() &&
            (static_cast<unsigned char>(text[i + 1]) & 0xFE) == 0x80)
            return false; // U+2000..U+207F: general punctuation (dashes, quotes, spaces)
        if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0xA0 &&
            static_cast<unsigned char>(text[i + 1]) <= 0xBF)
            return false; // U+00A0..U+00BF: Latin-1 punctuation
        return isLetterByte(c);
    };
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        // An apostrophe (' or U+2019) between letters stays inside the word.
        const size_t apostrophe = c == '\''
                                      ? 1
                                      : (c == 0xE2 && i + 2 < text.size() &&
                                                 static_cast<unsigned char>(text[i + 1]) == 0x80 &&
                                                 static_cast<unsigned char>(text[i + 2]) == 0x99
                                             ? 3
                                             : 0);
        if (apostrophe && !cur.empty() && letterAt(i + apostrophe)) {
            cur.push_back('\'');
            i += apostrophe;
        } else if (letterAt(i)) {
            cur.push_back(c >= 'A' && c <= 'Z' ? char(c + 32) : char(c));
            ++i;
        } else {
            flush();
            // Skip the whole UTF-8 sequence of a non-letter character.
            i += c == 0xE2 ? 3 : (c == 0xC2 ? 2 : 1);
        }
    }
    flush();
    return out;
}

const std::vector<std::string>& defaultStopWords() {
    static const std::vector<std::string> words = [] {
        std::vector<std::string> v;
        std::string_view text = kStopWordsText;
        size_t pos = 0;
        while (pos < text.size()) {
            size_t nl = text.find('\n', pos);
            if (nl == std::string_view::npos)
                nl = text.size();
            std::string line(text.substr(pos, nl - pos));
            pos = nl + 1;
            while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
                line.pop_back();
            if (!line.empty() && line[0] != '#')
                v.push_back(line);
        }
        return v;
    }();
    return words;
}

TopicModel::TopicModel(int topics, double alpha, double beta, std::vector<std::string> vocabulary,
                       std::vector<int32_t> topicWordCounts)
    : m_topics(topics)
    , m_alpha(alpha)
    , m_beta(beta)
    , m_vocabulary(std::move(vocabulary))
    , m_counts(std::move(topicWordCounts)) {
    const size_t V = m_vocabulary.size();
    m_totals.assign(size_t(m_topics), 0);
    for (int k = 0; k < m_topics; ++k)
        for (size_t w = 0; w < V; ++w)
            m_totals[size_t(k)] += m_counts[size_t(k) * V + w];
    for (size_t i = 0; i < V; ++i)
        m_index.emplace_back(m_vocabulary[i], int(i));
    std::sort(m_index.begin(), m_index.end());
}

int TopicModel::wordId(const std::string& word) const {
    auto it = std::lower_bound(m_index.begin(), m_index.end(), std::make_pair(word, -1));
    return it != m_index.end() && it->first == word ? it->second : -1;
}

std::vector<double> TopicModel::topicWordDistribution(int topic) const {
    const size_t V = m_vocabulary.size();
    std::vector<double> p(V);
    const double denom = double(m_totals[size_t(topic)]) + double(V) * m_beta;
    for (size_t w = 0; w < V; ++w)
        p[w] = (double(m_counts[size_t(topic) * V + w]) + m_beta) / denom;
    return p;
}

std::vector<std::pair<std::string, double>> TopicModel::topWords(int topic, int n) const {
    const auto p = topicWordDistribution(topic);
    std::vector<int> order(p.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int(i);
    const size_t take = std::min(order.size(), size_t(std::max(0, n)));
    std::partial_sort(order.begin(), order.begin() + long(take), order.end(),
                      [&](int a, int b) { return p[size_t(a)] > p[size_t(b)]; });
    std::vector<std::pair<std::string, double>> out;
    for (size_t i = 0; i < take; ++i)
        out.emplace_back(m_vocabulary[size_t(order[i])], p[size_t(order[i])]);
    return out;
}

std::vector<double> TopicModel::topicShares() const {
    double total = 0;
    for (auto t : m_totals)
        total += double(t);
    std::vector<double> s;
    for (auto t : m_totals)
        s.push_back(total > 0 ? double(t) / total : 0.0);
    return s;
}

TopicModel::Inference TopicModel::infer(std::string_view text, int iterations,
                                        uint64_t seed) const {
    Inference out;
    const size_t K = size_t(m_topics), V = m_vocabulary.size();
    std::vector<int32_t> ids;
    for (const auto& w : wordTokens(text))
        if (int id = wordId(w); id >= 0)
            ids.push_back(id);
    out.knownWords = int(ids.size());
    out.theta.assign(K, 1.0 / double(K));
    if (ids.empty() || K == 0)
        return out;
    // phi[k][w] for the words of this text only.
    std::vector<double> phi(K * ids.size());
    for (size_t k = 0; k < K; ++k) {
        const double denom = double(m_totals[k]) + double(V) * m_beta;
        for (size_t i = 0; i < ids.size(); ++i)
            phi[k * ids.size() + i] = (double(m_counts[k * V + size_t(ids[i])]) + m_beta) / denom;
    }
    FastRng rng(seed);
    std::vector<int> z(ids.size());
    std::vector<int32_t> nd(K, 0);
    for (auto& t : z) {
        t = rng.below(int(K));
        ++nd[size_t(t)];
    }
    iterations = std::max(iterations, 2);
    const int burnIn = iterations / 4;
    std::vector<double> cum(K), sum(K, 0.0);
    int samples = 0;
    for (int it = 0; it < iterations; ++it) {
        for (size_t i = 0; i < ids.size(); ++i) {
            --nd[size_t(z[i])];
            double acc = 0;
            for (size_t k = 0; k < K; ++k) {
                acc += (double(nd[k]) + m_alpha) * phi[k * ids.size() + i];
                cum[k] = acc;
            }
            z[i] = drawFromCumulative(cum, rng);
            ++nd[size_t(z[i])];
        }
        if (it >= burnIn) {
            for (size_t k = 0; k < K; ++k)
                sum[k] += (double(nd[k]) + m_alpha) / (double(ids.size()) + double(K) * m_alpha);
            ++samples;
        }
    }
    for (size_t k = 0; k < K; ++k)
        out.theta[k] = sum[k] / double(samples);
    return out;
}

Result<void> TopicModel::save(const std::string& path) const {
    nlohmann::ordered_json j;
    j["format"] = "baton-topics";
    j["version"] = 1;
    j["topics"] = m_topics;
    j["alpha"] = m_alpha;
    j["beta"] = m_beta;
    j["summary"] = summary;
    j["vocabulary"] = m_vocabulary;
    j["topic_word_counts"] = m_counts;
    return files::writeAtomically(path, j.dump() + "\n");
}

Result<TopicModel> TopicModel::load(const std::string& path) {
    auto parsed = readJsonFile(path, size_t(1) << 30);
    if (!parsed)
        return parsed.error();
    const json::Json& j = *parsed;
    auto damaged = [&](const std::string& what) {
        return makeError(ErrorCode::BadHeader, path + ": " + what);
    };
    if (json::stringOrEmpty(j, "format") != "baton-topics")
        return makeError(ErrorCode::BadHeader, path + " is not a Baton topic model");
    json::FieldReader f(j);
    int version = 0, K = 0;
    double alpha = 0, beta = 0;
    std::vector<std::string> vocab;
    std::string summary;
    f.integer("version", 0, std::numeric_limits<int>::max(), version, f.Required);
    if (f.ok() && version != 1)
        return makeError(ErrorCode::Unsupported,
                         path +
                             " was written by another version of Baton (topic model format "
                             "version " +
                             std::to_string(version) + ")");
    f.integer("topics", 1, 65535, K, f.Required);
    f.number("alpha", 0, std::numeric_limits<double>::max(), alpha, f.Required);
    f.number("beta", 0, std::numeric_limits<double>::max(), beta, f.Required);
    f.strings("vocabulary", vocab, /*nonEmpty=*/false, f.Required);
    f.string("summary", summary);
    if (!f.ok())
        return damaged(f.error());
    const auto it = j.find("topic_word_counts");
    if (it == j.end() || !it->is_array())
        return damaged("\"topic_word_counts\" is missing");
    std::vector<int32_t> counts;
    counts.reserve(it->size());
    for (const auto& c : *it) {
        if (!c.is_number_integer() || c.get<int64_t>() < 0 ||
            c.get<int64_t>() > std::numeric_limits<int32_t>::max())
            return damaged("counts must be integers in [0, 2^31)");
        counts.push_back(int32_t(c.get<int64_t>()));
    }
    if (!(alpha > 0) || !(beta > 0) || vocab.empty() || counts.size() != size_t(K) * vocab.size())
        return damaged("the topic count, priors or sizes are inconsistent");
    std::vector<std::string> sorted = vocab;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        return damaged("repeated vocabulary words");
    TopicModel m(K, alpha, beta, std::move(vocab), std::move(counts));
    m.summary = std::move(summary);
    return m;
}

Result<TopicModel> fitLda(const std::vector<std::string>& texts, const LdaOptions& o,
                          const std::function<bool(const LdaProgress&)>& onProgress,
                          const CancelToken& cancel) {
    if (o.topics < 1 || o.topics > 65535)
        return makeError(ErrorCode::InvalidArgument, "the number of topics must be in [1, 65535]");
    if (o.alpha < 0 || !(o.beta > 0) || o.iterations < 1 || o.chunkWords < 1 ||
        !(o.maxDocFrequency > 0) || o.maxDocFrequency > 1 || o.minDocFrequency < 1)
        return makeError(ErrorCode::InvalidArgument,
                         "invalid LDA settings (alpha >= 0, beta > 0, iterations >= 1, "
                         "chunk words >= 1, min df >= 1, max df in (0, 1])");
    const Corpus corpus = buildCorpus(texts, o);
    if (corpus.vocabulary.empty() || corpus.tokens == 0)
        return makeError(ErrorCode::InvalidArgument,
                         "no words left to fit topics on: the corpus is too small for the "
                         "document-frequency limits, or only stop words");
    Sampler s;
    s.K = o.topics;
    s.V = int(corpus.vocabulary.size());
    s.alpha = o.alpha > 0 ? o.alpha : 50.0 / double(o.topics);
    s.beta = o.beta;
    s.docs = &corpus.docs;
    s.initialise(o.seed);

    int threads =
        o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    // Splitting pays only when a sweep is long enough to amortise the merge.
    if (corpus.tokens < 50000 || corpus.docs.size() < 4)
        threads = 1;
    threads = std::min<int>(threads, int(corpus.docs.size()));
    std::vector<size_t> bounds{0};
    {
        // Shards with about equal token counts.
        int64_t acc = 0;
        for (size_t d = 0; d < corpus.docs.size() && int(bounds.size()) < threads; ++d) {
            acc += int64_t(corpus.docs[d].size());
            if (acc * threads >= corpus.tokens * int64_t(bounds.size()))
                bounds.push_back(d + 1);
        }
        while (bounds.size() < size_t(threads) + 1)
            bounds.push_back(corpus.docs.size());
        bounds.back() = corpus.docs.size();
    }
    std::vector<FastRng> rngs;
    for (int t = 0; t < threads; ++t)
        rngs.emplace_back(o.seed * 7919 + uint64_t(t) + 1);

    for (int it = 1; it <= o.iterations; ++it) {
        if (cancel.cancelled())
            return makeError(ErrorCode::Cancelled, "topic fitting cancelled");
        const auto t0 = Clock::now();
        if (threads == 1) {
            s.sweep(0, corpus.docs.size(), s.nkw, s.nk, rngs[0]);
        } else {
            std::vector<std::vector<int32_t>> kw(size_t(threads), s.nkw);
            std::vector<std::vector<int64_t>> kt(size_t(threads), s.nk);
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; ++t)
                pool.emplace_back([&, t] {
                    s.sweep(bounds[size_t(t)], bounds[size_t(t) + 1], kw[size_t(t)], kt[size_t(t)],
                            rngs[size_t(t)]);
                });
            for (auto& th : pool)
                th.join();
            // global += sum over threads of (local - global)
            const std::vector<int32_t> before = s.nkw;
            for (int t = 0; t < threads; ++t)
                for (size_t i = 0; i < s.nkw.size(); ++i)
                    s.nkw[i] += kw[size_t(t)][i] - before[i];
            std::fill(s.nk.begin(), s.nk.end(), 0);
            for (int k = 0; k < s.K; ++k)
                for (int w = 0; w < s.V; ++w)
                    s.nk[size_t(k)] += s.nkw[size_t(k) * size_t(s.V) + size_t(w)];
        }
        LdaProgress p;
        p.iteration = it;
        p.iterations = o.iterations;
        p.tokens = corpus.tokens;
        const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
        p.tokensPerSecond = secs > 0 ? double(corpus.tokens) / secs : 0.0;
        if (it % 10 == 0 || it == o.iterations)
            p.logLikelihood = s.logLikelihoodPerToken(corpus.tokens);
        if (onProgress && !onProgress(p))
            return makeError(ErrorCode::Cancelled, "topic fitting cancelled");
    }
    TopicModel model(s.K, s.alpha, s.beta, corpus.vocabulary, s.nkw);
    model.summary = std::to_string(corpus.docs.size()) + " chunks of about " +
                    std::to_string(o.chunkWords) + " words, " + std::to_string(corpus.tokens) +
                    " tokens, " + std::to_string(o.iterations) + " sweeps, seed " +
                    std::to_string(o.seed);
    return model;
}

double jensenShannonBits(const std::vector<double>& p, const std::vector<double>& q) {
    if (p.size() != q.size() || p.empty())
        return std::nan("");
    double sp = 0, sq = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        sp += p[i];
        sq += q[i];
    }
    if (!(sp > 0) || !(sq > 0))
        return std::nan("");
    double jsd = 0;
    for (size_t i = 0; i < p.size(); ++i) {
        const double a = p[i] / sp, b = q[i] / sq, m = 0.5 * (a + b);
        if (a > 0)
            jsd += 0.5 * a * std::log2(a / m);
        if (b > 0)
            jsd += 0.5 * b * std::log2(b / m);
    }
    return std::clamp(jsd, 0.0, 1.0);
}

double signTestPValue(int64_t wins, int64_t losses) {
    const int64_t n = wins + losses;
    if (n == 0)
        return 1.0;
    const int64_t k = std::min(wins, losses);
    // P(X <= k) for X ~ Binomial(n, 1/2), summed in log space; two-sided = 2x, capped at 1.
    const double logHalfN = double(n) * std::log(0.5);
    double maxTerm = -INFINITY;
    std::vector<double> terms;
    for (int64_t i = 0; i <= k; ++i) {
        const double t = std::lgamma(double(n) + 1) - std::lgamma(double(i) + 1) -
                         std::lgamma(double(n - i) + 1) + logHalfN;
        terms.push_back(t);
        maxTerm = std::max(maxTerm, t);
    }
    double sum = 0;
    for (double t : terms)
        sum += std::exp(t - maxTerm);
    const double p = 2.0 * std::exp(maxTerm + std::log(sum));
    return std::min(1.0, p);
}

} // namespace baton::engine
