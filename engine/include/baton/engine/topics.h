// Topic diagnostics (../shared/docs/method.md section 6): LDA fitted by collapsed
// Gibbs sampling, fold-in inference of a text's topic distribution with the
// topic-word counts fixed, and the Jensen-Shannon divergence in bits.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/windows.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::engine {

// Lower-cased word tokens: maximal runs of letters (ASCII letters and any non-ASCII
// UTF-8 character) with inner apostrophes kept ("don't"); digits and punctuation
// separate words.
std::vector<std::string> wordTokens(std::string_view text);

// Baton's English stop-word list (resources/stopwords-en.txt, built in).
const std::vector<std::string>& defaultStopWords();

struct LdaOptions {
    int topics = 20;
    double alpha = 0;     // document-topic prior; 0 means 50 / topics
    double beta = 0.01;   // topic-word prior
    int iterations = 300; // Gibbs sweeps over the corpus
    uint64_t seed = 1;
    int chunkWords = 1000;        // documents are chunks of about this many words
    int minDocFrequency = 5;      // rarer words (in chunks) are dropped
    double maxDocFrequency = 0.5; // words in a larger share of chunks are dropped
    int minWordLength = 2;
    std::vector<std::string> stopWords = defaultStopWords();
    // Threads for the sweeps (0: all cores). Documents are split between threads
    // that sample against a copy of the topic-word counts and merge after every
    // sweep (approximate distributed LDA); the result depends on the seed and the
    // thread count only. Small corpora use one thread.
    int threads = 0;
};

struct LdaProgress {
    int iteration = 0, iterations = 0;
    int64_t tokens = 0;         // tokens sampled per sweep
    double tokensPerSecond = 0; // of the last sweep
    double logLikelihood = 0;   // log p(words | topics) per token, every 10th sweep (else 0)
};

// A fitted topic model: vocabulary and topic-word counts.
class TopicModel {
public:
    int topics() const { return m_topics; }
    int vocabularySize() const { return static_cast<int>(m_vocabulary.size()); }
    double alpha() const { return m_alpha; }
    double beta() const { return m_beta; }
    const std::vector<std::string>& vocabulary() const { return m_vocabulary; }
    // The word id, or -1 for a word outside the vocabulary.
    int wordId(const std::string& word) const;
    // p(word | topic) for every word of the vocabulary.
    std::vector<double> topicWordDistribution(int topic) const;
    // The n most probable words of a topic, most probable first.
    std::vector<std::pair<std::string, double>> topWords(int topic, int n) const;
    // Tokens assigned to each topic over the training corpus, as shares.
    std::vector<double> topicShares() const;

    struct Inference {
        std::vector<double> theta; // the topic distribution (sums to 1)
        int knownWords = 0;        // words of the text in the vocabulary
    };
    // Fold-in: Gibbs sampling of the text's topic assignments with the topic-word
    // counts fixed; theta is averaged over the sweeps after burn-in. A text with no
    // known word gets the prior (uniform). Deterministic for a given seed.
    Inference infer(std::string_view text, int iterations = 100, uint64_t seed = 1) const;

    // A JSON file (format "baton-topics", version 1), written atomically.
    Result<void> save(const std::string& path) const;
    // Validates everything (format, version, sizes, counts) before use.
    static Result<TopicModel> load(const std::string& path);

    // Everything fitLda knows; for fitLda and load.
    TopicModel(int topics, double alpha, double beta, std::vector<std::string> vocabulary,
               std::vector<int32_t> topicWordCounts);
    TopicModel() = default;

    const std::vector<int32_t>& topicWordCounts() const { return m_counts; } // [topics][vocab]
    std::string summary; // free text saved with the model (corpus, options)

private:
    int m_topics = 0;
    double m_alpha = 0, m_beta = 0;
    std::vector<std::string> m_vocabulary;
    std::vector<int32_t> m_counts;                    // topic-major
    std::vector<int64_t> m_totals;                    // per topic
    std::vector<std::pair<std::string, int>> m_index; // sorted word -> id
};

// Splits texts into chunks of about options.chunkWords words, builds the vocabulary
// and fits LDA. onProgress may return false to cancel (as may the token).
Result<TopicModel> fitLda(const std::vector<std::string>& texts, const LdaOptions& options,
                          const std::function<bool(const LdaProgress&)>& onProgress = {},
                          const CancelToken& cancel = {});

// Jensen-Shannon divergence in bits (log base 2): symmetric, in [0, 1]. The inputs
// are normalised; they must have the same, non-zero length.
double jensenShannonBits(const std::vector<double>& p, const std::vector<double>& q);

// The two-sided exact sign test: the probability, under p = 1/2, of a split at
// least as uneven as `wins` against `losses` (ties left out by the caller).
double signTestPValue(int64_t wins, int64_t losses);

class Model;

// The topics view of a text (the app's open story) with a model and a fitted topic
// model: per window, its topic distribution (fold-in) and, for a recurrent model, the
// tokens the state handed to it points to (scoring.h: readStates); and the latest
// generation's context against its continuation.
struct TopicsInspectRequest {
    std::string text;
    WindowSettings windows; // window 0: the model's default
    std::string topicModelPath;
    // The byte where the latest generation begins (-1: none): its context is the T
    // tokens before it, its continuation the text from it on.
    int64_t continuationByte = -1;
    // Where each window begins, as byte offsets into text (a story's windows as the
    // Write page's ruler shows them, the memory and the guidance counted); empty: windows
    // of T with overlap o over the text alone.
    std::vector<int64_t> windowStartBytes;
    int topWords = 8;
    int stateTokens = 8;
    int inferIterations = 60;
};

struct WindowTopics {
    int64_t window = 0;
    int64_t firstToken = 0;
    int64_t firstByte = 0;
    std::vector<double> theta;            // sums to 1
    std::vector<std::string> stateTokens; // empty for window 0 and baseline models
    std::vector<float> stateProbs;
};

struct TopicsInspection {
    int topics = 0;
    std::vector<std::vector<std::string>> topWords; // per topic, most probable first
    std::vector<WindowTopics> windows;
    bool recurrent = false;
    std::vector<double> context, continuation; // empty without a continuation
    double jsdBits = -1;                       // JSD(context, continuation); -1: none
};

// The topics view (in the engine core: it reads the model's states).
Result<TopicsInspection> inspectTopics(const Model& model, const TopicsInspectRequest& request,
                                       const CancelToken& cancel = {},
                                       const JobProgress& progress = {});

} // namespace baton::engine
