// Recall: the story's own past, found by words and read again when the story comes back
// to it (the exact fact from chapter 2: a name, a promise, the colour of a door).
//
// The query is made of the recent text's names and rarer words (recallTerms); the
// story's recall index (storage/recall_store.h: chunks of at most 400 bytes of every
// passage, BM25 over stemmed words, the rarest terms first within a bound on the chunks
// they match) answers with chunks of the current path only that
// end before the text the window can hold (its last T tokens), are not banned, and
// score at least half of the best such chunk's score. Each becomes an excerpt: the
// sentence of the path's text around the chunk's first matching word (at most
// kRecallExcerptBytes, never reaching into the window). The best `chunks` excerpts are
// placed, best first, each while it fits what is left of the recall budget, and read in story order
// as guidance (prompt.h): after the world info, before the author's note, each as "[Earlier: ...]"
// on a line of its own. Like world info, recalled text is not part of the story's stream, so the
// saved states of earlier windows stay valid whatever is recalled.
#pragma once

#include "baton/story/settings.h"

#include <baton/engine/tokenizer.h>
#include <baton/storage/database.h>
#include <baton/storage/records.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton::story {

// The query reads the last this many bytes of the text (the pending text included).
constexpr size_t kRecallQueryBytes = 600;
// At most this many terms, the newest first.
constexpr size_t kRecallMaxTerms = 12;
// An excerpt is at most this long.
constexpr size_t kRecallExcerptBytes = 400;
// A chunk is recalled only when it scores at least this share of the best one.
constexpr double kRecallMinShare = 0.5;

// The words of the end of `text` a recall query asks for: words (letters, digits,
// apostrophes inside; any non-ASCII character counts as a letter) of its last
// kRecallQueryBytes, kept when they are not among about 150 common English words and are
// capitalized (a name) or at least 5 bytes long; once each (ignoring ASCII case), the
// newest first, at most kRecallMaxTerms.
std::vector<std::string> recallTerms(std::string_view text);

struct RecalledChunk {
    int64_t passageId = 0;  // the passage the matching chunk is in
    int64_t chunkStart = 0; // the chunk's bytes in that passage
    int64_t pathStart = 0;  // the excerpt's bytes in the path's text
    int64_t pathEnd = 0;
    std::string text;                 // the excerpt
    std::vector<std::string> matched; // the chunk's words that matched
    double score = 0;
    int tokens = 0;      // of what the model reads for it (recallText)
    bool placed = false; // false: the budget was spent
};

struct RecallSelection {
    bool enabled = true;
    std::vector<std::string> terms;
    std::vector<RecalledChunk> chunks; // recalled, best first
    int budget = 0;                    // tokens for all placed excerpts together
    int tokens = 0;                    // the placed excerpts' tokens
    int64_t windowStart = 0;           // chunks end at or before this byte of the text
    // The placed excerpts, in story order (as the window reads them).
    std::vector<const RecalledChunk*> placedInOrder() const;
};

// What the model reads for an excerpt: "[Earlier: ...]" on a line of its own.
std::string recallText(const RecalledChunk& chunk);

// Recalls from storyId for a continuation of `path` (root first) whose text, with the
// pending text after it, is `text`; `windowTokens` is T. Budget: tokens for the placed
// excerpts together. With recall off, or nothing to ask, nothing is searched.
Result<RecallSelection> selectRecall(storage::Database& db, int64_t storyId,
                                     const std::vector<storage::Passage>& path,
                                     std::string_view text, const RecallSettings& settings,
                                     int windowTokens, int budget,
                                     const engine::Tokenizer& tokenizer);

} // namespace baton::story
