// The recall index (schema v7): every passage's text cut into chunks
// (`passage_chunks`: the passage, byte offsets, the text) under an SQLite FTS5 index
// (`recall_index`: porter stemming over unicode61 words, diacritics folded), so a story
// can find its own past by words. The index is written in the passage's own
// transaction by every write of this build (insert, edit, undo of an edit, duplicate);
// triggers in the schema delete a passage's chunks whenever its text changes and queue
// it (`recall_pending`), so a passage written by an older build, or by a pass that was
// cancelled, is never found by stale words: it waits, unsearchable, until
// indexPending() (run when a database is opened writable) indexes it.
#pragma once

#include "baton/storage/error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::storage {

class Connection;

// A chunk is a run of whole sentences of one paragraph of one passage, at most this
// many bytes (a longer sentence is cut at its last space before it, or at a character
// boundary); a passage shorter than that, such as a generated chunk of about 16 tokens,
// is one chunk. Spaces and line breaks between sentences stay with the sentence before.
constexpr size_t kRecallChunkBytes = 400;
// A search uses its terms rarest first (in chunks of the story) while the chunks they
// match add up to at most this many; a term found in more chunks than that alone is too
// common to find anything by, and left out. BM25 scores every chunk a term matches, so
// this bounds a search's cost however long the story grows.
constexpr int64_t kRecallMaxMatches = 1000;

struct ChunkSpan {
    size_t start = 0; // byte offsets into the passage's text
    size_t end = 0;
};
// The chunks of a passage's text, in order; chunks of only white space are left out.
std::vector<ChunkSpan> recallChunks(std::string_view text);

struct RecallHit {
    int64_t chunkId = 0;
    int64_t passageId = 0;
    int64_t start = 0; // bytes into the passage's text
    int64_t end = 0;
    double score = 0;                 // BM25 (larger is better)
    std::vector<std::string> matched; // the chunk's words that matched, as written, once each
};

class RecallStore {
public:
    explicit RecallStore(Connection& connection)
        : m_db(connection) {}

    // The best `limit` chunks of storyId's passages (every branch) that hold any of
    // `terms` (within kRecallMaxMatches), best first. Each term is matched as words
    // (stemmed, case and diacritics folded; several words as a phrase); FTS5's syntax
    // inside a term is only text. Terms without a letter or digit are ignored. A damaged index is
    // rebuilt from the chunks and the search run again.
    Result<std::vector<RecallHit>> search(int64_t storyId, const std::vector<std::string>& terms,
                                          int limit);
    // Passages waiting to be indexed.
    Result<int64_t> pending();
    // Indexes the waiting passages, a batch per transaction; progress(done, total)
    // returning false stops after the batch (the rest keeps waiting). Returns how many
    // were indexed.
    Result<int64_t> indexPending(const std::function<bool(int64_t, int64_t)>& progress = {});
    // FTS5's integrity-check of the index against the chunks: false when they disagree.
    Result<bool> check();
    // Rebuilds the index from the chunks.
    Result<void> rebuild();

private:
    Connection& m_db;
};

} // namespace baton::storage
