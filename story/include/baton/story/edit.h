// Edits of a story's saved text: which passages an edit changes, and saving them.
//
// An edit is known by the path's old text and its new text as a whole (what the app's
// editor holds, or a find-and-replace). A diff of the two, word by word, gives the
// stretches that changed; each passage takes the new text of its own stretch, so only
// the passages whose text changed are rewritten (a paragraph break that moved between
// passages is no change of theirs). Text inserted exactly between two passages joins
// the later one, so the earlier one, and the state saved after it, stay as they were.
// Saving an edit rewrites those passages and deletes the saved states of the first of
// them and of everything after it (storage's StoryStore::editPassage): a continuation
// then resumes from the last state before the edit and reads only the text after it.
#pragma once

#include "baton/story/error.h"

#include <baton/storage/records.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton::storage {
class Database;
}

namespace baton::story {

struct PassageEdit {
    int64_t passageId = 0;
    std::string before, after; // `after` empty: all of its text was deleted
};

// The passages of `path` (their texts in `before`, in order) whose text changes when
// their concatenation becomes `now`, with their new texts; in story order.
std::vector<PassageEdit> diffPassages(const std::vector<storage::Passage>& path,
                                      std::string_view now);
// The same over plain texts (the app's editor counts its own line breaks): entry i of
// the result has passageId = ids[i].
std::vector<PassageEdit> diffTexts(const std::vector<int64_t>& ids,
                                   const std::vector<std::string>& before, std::string_view now);

struct EditResult {
    std::vector<PassageEdit> edits;
    int64_t statesDeleted = 0;
};

// Saves edits in one transaction; returns how many saved states were deleted.
Result<int64_t> saveEdits(storage::Database& db, const std::vector<PassageEdit>& edits);

// Cuts the generation `generationId` at the end of the story's current path back to the
// end of its last whole sentence (settings.h: trimSentences): the chunk the cut falls
// in is edited, those after it removed; the states before the cut stay. Nothing
// changes when the generation ends a sentence or a line, or holds no sentence end.
// Returns the bytes cut.
Result<size_t> trimToSentence(storage::Database& db, int64_t storyId, int64_t generationId);

// Replaces the last occurrence of `find` in the text of the story's current path with
// `replace` and saves the edit. An error when `find` is empty or does not occur.
Result<EditResult> findAndReplace(storage::Database& db, int64_t storyId, std::string_view find,
                                  std::string_view replace);

} // namespace baton::story
