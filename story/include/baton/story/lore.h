// World info: which of a story's lore entries the next generation reads.
//
// An enabled entry fires when one of its keys occurs in the recent text (the last
// scanDepth tokens of the story, the text being sent included) and, when it has
// secondary keys, one of those occurs there too. Keys match whole words, ignoring ASCII
// case ("elinor" matches "Elinor," but not "Elinorish"). Entries that fired are placed
// in ascending order, as long as they fit the budget together (an entry that does not
// fit is left out and the next one tried); each reads as its content in brackets on a
// line of its own, just before the author's note and the model's continuation.
#pragma once

#include <baton/engine/tokenizer.h>
#include <baton/storage/records.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace baton::story {

struct LoreMatch {
    storage::LoreEntry entry;
    std::string key;     // the key that fired it (and the secondary key, after " + ")
    std::string text;    // what the model reads for it
    int tokens = 0;      // of text
    bool placed = false; // false: it did not fit the budget
};

struct LoreSelection {
    std::vector<LoreMatch> matches; // every entry that fired, in order
    int budget = 0;                 // tokens for all placed entries together
    int tokens = 0;                 // the placed entries' tokens
    // Entries a key fired but none of whose secondary keys is there: the key, by id.
    std::map<int64_t, std::string> withoutSecondKey;
    // The placed entries as the generation records them: [{"id":..,"key":..,"tokens":..}].
    std::string recordJson() const;
};

// Keys as people type them, comma-separated ("Elinor, Miss Dashwood"): trimmed, empty
// ones dropped; and back.
std::vector<std::string> splitKeys(std::string_view list);
std::string joinKeys(const std::vector<std::string>& keys);

// What the model reads for an entry: its content in brackets on a line of its own.
std::string loreText(const storage::LoreEntry& entry);

// Whether `key` occurs in `text` as a whole word, ignoring ASCII case.
bool keyOccurs(std::string_view text, std::string_view key);

// Selects the entries the recent end of `storyText` triggers, within `budget` tokens.
LoreSelection selectLore(const std::vector<storage::LoreEntry>& entries, std::string_view storyText,
                         const engine::Tokenizer& tokenizer, int budget);

} // namespace baton::story
