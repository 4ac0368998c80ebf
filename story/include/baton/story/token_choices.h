// Token alternatives: for every token a generation wrote, the tokens the model found
// likeliest there, with their probabilities under the model (before the samplers), as
// mikupad and Loom-style editors show them. They are recorded as the text is generated,
// stored with the passage (storage/token_choice_store.h keeps the blob this file
// encodes: about 1-2 KB for a 16-token chunk), and a writer picks one to branch there:
// a new passage beside the old one holds the text up to that token and the picked
// alternative, and the story continues from it.
//
// A passage's text may change after it was recorded (an edit, a cut to a whole
// sentence): the choices shown are always the leading ones whose texts still begin the
// passage's text (alignChoices).
#pragma once

#include "baton/story/error.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace baton::storage {
class Database;
}

namespace baton::story {

// How many alternatives a continuation records per token (ContinueRequest::alternatives).
constexpr int kRecordedAlternatives = 8;

struct Alternative {
    std::string text; // valid, non-empty UTF-8
    float logprob = 0;
};

struct TokenChoice {
    std::string text; // the bytes the token added to the passage (empty mid-character)
    float logprob = std::numeric_limits<float>::quiet_NaN(); // of the token written
    std::vector<Alternative> alternatives; // likeliest first (the one written among them
                                           // when it was one of the likeliest)
};

// A versioned blob, and its reader: a damaged blob (truncated, lengths that run past
// its end, texts that are not UTF-8, probabilities above 1) is refused as a whole. The
// blob holds the leading tokens that fit kMaxChoicesBlob bytes (the storage's limit).
constexpr size_t kMaxChoicesBlob = 1 << 20;
std::vector<uint8_t> encodeChoices(const std::vector<TokenChoice>& choices);
Result<std::vector<TokenChoice>> decodeChoices(const std::vector<uint8_t>& blob);

// The leading choices whose texts, in order, begin `text` (the rest no longer describe it).
std::vector<TokenChoice> alignChoices(std::vector<TokenChoice> choices, std::string_view text);

// A passage's stored blob read and laid over its text as it is now (an empty blob:
// none were recorded).
Result<std::vector<TokenChoice>> readChoices(const std::vector<uint8_t>& blob,
                                             std::string_view text);

// The choices recorded with a passage that still describe its text (empty: none).
Result<std::vector<TokenChoice>> passageChoices(storage::Database& db, int64_t passageId);

// Where a writer branches: token `token` of the passage, replaced by its alternative
// number `alternative` (TokenChoice::alternatives).
struct TokenBranch {
    int64_t passageId = 0;
    int token = 0;
    int alternative = 0;
};

// Adds the branch as a new passage beside the old one (same parent) and makes it the
// current leaf: the passage's text before the token, then the alternative; it keeps the
// choices of those tokens (the picked one's list gains the token it replaces). It is
// recorded as a one-token generation (settingsJson: the settings it belongs to), so a
// retry right after it picks another token there, and a retry after its continuation
// rewrites only the continuation. Refused: a passage of another story, a token or
// alternative that is not there, the alternative already written. Returns the new id.
Result<int64_t> branchAtToken(storage::Database& db, int64_t storyId, const TokenBranch& at,
                              const std::string& settingsJson = "{}");

} // namespace baton::story
