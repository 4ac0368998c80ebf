// A run's data: the corpus and validation text tokenized into a token store, the
// training sequences of W windows, and the batches drawn from them in a seeded order
// per epoch (with memory episodes mixed in when asked for). Baseline and recurrent runs
// of one seed get the same batches.
#pragma once

#include "baton/engine/tokenizer.h"
#include "baton/engine/training.h"
#include "training/bptt.h"
#include "training/corpus.h"

#include <cstdint>
#include <string>
#include <vector>

namespace baton::engine {

class BatchSource {
public:
    // Tokenizes the corpus into the run's token store (OUT/data; pieces already built
    // are read back) and plans; `summary` receives one line about the data, progress
    // how far the tokenizing is.
    Result<void> prepare(const TrainConfig& config, std::shared_ptr<const Tokenizer> tokenizer,
                         std::string& summary, const JobProgress& progress = {},
                         const CancelToken& cancel = {});

    size_t sequenceCount() const { return m_sequences.size(); }
    // A hash of the training and validation tokens (ranks compare theirs).
    std::string fingerprint() const;
    const TokenizedCorpus& training() const { return m_train; }
    const TokenizedCorpus& validation() const { return m_validation; }

    // The order of the sequences in this epoch (from the seed and the epoch).
    void startEpoch(int64_t epoch);
    // The next B sequences as a batch; epoch and position advance through `epoch` and
    // `position` (saved with every checkpoint, so a resumed run draws the same ones).
    // With `windows` (one per sequence, at most W: a curriculum's stage), sequence b is
    // cut to windows[b] windows: the batch is as long as the longest, and the windows
    // past a shorter sequence's end are run but not scored.
    WindowBatch next(int64_t& epoch, int64_t& position, const std::vector<int>& windows = {});

private:
    TrainConfig m_config;
    std::shared_ptr<const Tokenizer> m_tokenizer;
    TokenizedCorpus m_train, m_validation;
    std::vector<std::vector<WindowSpan>> m_spans; // per training document
    std::vector<Sequence> m_sequences;
    std::vector<int64_t> m_order;
    std::vector<bool> m_sentenceEnd; // for memory episodes
};

} // namespace baton::engine
