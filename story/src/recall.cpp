#include "baton/story/recall.h"

#include "text_util.h"

#include <baton/storage/recall_store.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

namespace baton::story {

namespace {

// Words too common to find anything by (lower case).
const std::set<std::string, std::less<>>& commonWords() {
    static const std::set<std::string, std::less<>> words = {
        "a",          "about",      "above",   "after",     "again",    "against", "all",
        "also",       "am",         "an",      "and",       "any",      "are",     "as",
        "at",         "be",         "because", "been",      "before",   "being",   "below",
        "between",    "both",       "but",     "by",        "came",     "can",     "come",
        "could",      "did",        "do",      "does",      "doing",    "done",    "down",
        "during",     "each",       "even",    "ever",      "every",    "few",     "for",
        "from",       "further",    "had",     "has",       "have",     "having",  "he",
        "her",        "here",       "hers",    "herself",   "him",      "himself", "his",
        "how",        "i",          "if",      "in",        "into",     "is",      "it",
        "its",        "itself",     "just",    "know",      "like",     "little",  "made",
        "make",       "many",       "may",     "me",        "might",    "mine",    "more",
        "most",       "much",       "must",    "my",        "myself",   "never",   "no",
        "nor",        "not",        "now",     "of",        "off",      "on",      "once",
        "one",        "only",       "or",      "other",     "ought",    "our",     "ours",
        "ourselves",  "out",        "over",    "own",       "said",     "same",    "say",
        "see",        "shall",      "she",     "should",    "so",       "some",    "still",
        "such",       "than",       "that",    "the",       "their",    "theirs",  "them",
        "themselves", "then",       "there",   "these",     "they",     "thing",   "things",
        "think",      "this",       "those",   "though",    "thought",  "through", "thus",
        "till",       "time",       "to",      "too",       "two",      "under",   "until",
        "up",         "upon",       "us",      "very",      "was",      "way",     "we",
        "well",       "were",       "what",    "when",      "where",    "whether", "which",
        "while",      "who",        "whom",    "whose",     "why",      "will",    "with",
        "without",    "would",      "yes",     "yet",       "you",      "your",    "yours",
        "yourself",   "yourselves", "shall",   "went",      "into",     "looked",  "asked",
        "another",    "always",     "nothing", "something", "anything", "there's", "it's",
        "don't",      "i'm",        "i'll",    "let",       "get",      "got",     "go",
        "going",      "back",       "take",    "took",      "told",     "tell",    "first",
        "last",       "long",       "good",    "great",     "new",      "old",     "man",
        "men",        "woman",      "women",   "day",       "days",     "night",   "indeed",
        "however",    "quite",      "rather"};
    return words;
}

bool wordByte(unsigned char c) {
    return std::isalnum(c) || c >= 0x80;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool sentenceBoundary(std::string_view text, size_t at) {
    // A sentence begins at `at`: the text's start, after a line break, or after a
    // sentence's end (prompt.cpp's rule) and the spaces that follow it.
    if (at == 0 || text[at - 1] == '\n')
        return true;
    size_t j = at;
    while (j > 0 && (text[j - 1] == ' ' || text[j - 1] == '\t'))
        --j;
    return j < at && endsSentence(text, j);
}

size_t charStart(std::string_view text, size_t at) {
    while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80)
        --at;
    return at;
}

// The sentence around [start, end) of `text`: from the sentence's start and to its end,
// each at most half of what kRecallExcerptBytes leaves beside [start, end) away (else
// from and to the nearest space there), never past `limit`.
std::pair<size_t, size_t> excerptAround(std::string_view text, size_t start, size_t end,
                                        size_t limit) {
    end = std::min(end, limit);
    const size_t room = kRecallExcerptBytes > end - start ? kRecallExcerptBytes - (end - start) : 0;
    const size_t leftmost = start > room / 2 ? start - room / 2 : 0;
    size_t from = start;
    while (from > leftmost && !sentenceBoundary(text, from))
        --from;
    if (!sentenceBoundary(text, from)) { // no sentence start near: a word's start
        from = leftmost;
        while (from < start && text[from] != ' ')
            ++from;
    }
    const size_t rightmost = std::min(limit, end + room / 2);
    size_t to = end;
    while (to < rightmost && !sentenceBoundary(text, to))
        ++to;
    if (to < limit && !sentenceBoundary(text, to)) { // no sentence end near: a word's end
        while (to > end && text[to - 1] != ' ')
            --to;
    }
    return {charStart(text, from), charStart(text, to)};
}

} // namespace

std::vector<std::string> recallTerms(std::string_view text) {
    const size_t from =
        charStart(text, text.size() > kRecallQueryBytes ? text.size() - kRecallQueryBytes : 0);
    std::vector<std::string> out;
    std::set<std::string> seen;
    // Newest first: scan the words from the end.
    size_t i = text.size();
    while (i > from && out.size() < kRecallMaxTerms) {
        while (i > from && !wordByte(static_cast<unsigned char>(text[i - 1])))
            --i;
        size_t j = i;
        while (j > from && (wordByte(static_cast<unsigned char>(text[j - 1])) ||
                            (text[j - 1] == '\'' && j - 1 > from &&
                             wordByte(static_cast<unsigned char>(text[j - 2])) &&
                             wordByte(static_cast<unsigned char>(text[j])))))
            --j;
        if (j == i)
            break;
        const std::string_view word = text.substr(j, i - j);
        i = j;
        const std::string key = lower(word);
        if (commonWords().count(key) || seen.count(key))
            continue;
        const bool name = std::isupper(static_cast<unsigned char>(word[0])) && word.size() >= 2;
        if (!name && word.size() < 5)
            continue;
        seen.insert(key);
        out.emplace_back(word);
    }
    return out;
}

std::string recallText(const RecalledChunk& chunk) {
    return bracketLine("Earlier: " + trimmed(chunk.text));
}

std::vector<const RecalledChunk*> RecallSelection::placedInOrder() const {
    std::vector<const RecalledChunk*> out;
    for (const auto& c : chunks)
        if (c.placed)
            out.push_back(&c);
    std::sort(out.begin(), out.end(),
              [](const auto* a, const auto* b) { return a->pathStart < b->pathStart; });
    return out;
}

Result<RecallSelection> selectRecall(storage::Database& db, int64_t storyId,
                                     const std::vector<storage::Passage>& path,
                                     std::string_view text, const RecallSettings& settings,
                                     int windowTokens, int budget,
                                     const engine::Tokenizer& tokenizer) {
    RecallSelection out;
    out.enabled = settings.enabled;
    out.budget = std::max(0, budget);
    if (!settings.enabled || out.budget == 0 || path.empty())
        return out;
    const size_t inWindow = recentText(text, windowTokens, tokenizer).size();
    out.windowStart = static_cast<int64_t>(text.size() - std::min(inWindow, text.size()));
    if (out.windowStart == 0)
        return out; // the whole story is in the window
    out.terms = recallTerms(text);
    if (out.terms.empty())
        return out;
    // Each passage's first byte in text, found by id: a passage is written after its
    // parent, so ids grow along a path (a map when a path says otherwise).
    std::vector<int64_t> ids, starts;
    ids.reserve(path.size());
    starts.reserve(path.size());
    int64_t at = 0;
    for (const auto& p : path) {
        ids.push_back(p.id);
        starts.push_back(at);
        at += static_cast<int64_t>(p.text.size());
    }
    std::unordered_map<int64_t, int64_t> unordered;
    if (!std::is_sorted(ids.begin(), ids.end()))
        for (size_t i = 0; i < ids.size(); ++i)
            unordered[ids[i]] = starts[i];
    auto offsetOf = [&](int64_t id) -> int64_t {
        if (!unordered.empty()) {
            const auto it = unordered.find(id);
            return it == unordered.end() ? -1 : it->second;
        }
        const auto it = std::lower_bound(ids.begin(), ids.end(), id);
        return it != ids.end() && *it == id ? starts[size_t(it - ids.begin())] : -1;
    };
    // Enough candidates that other branches, the window and bans rarely crowd the
    // current path's best out.
    const int limit = 8 * std::max(1, settings.chunks) + 32;
    auto hits = db.recall().search(storyId, out.terms, limit);
    if (!hits)
        return storageError(hits.error());
    const std::set<std::pair<int64_t, int64_t>> banned(settings.banned.begin(),
                                                       settings.banned.end());
    double best = 0;
    for (const auto& h : *hits) {
        const int64_t offset = offsetOf(h.passageId);
        if (offset < 0 || banned.count({h.passageId, h.start}))
            continue;
        const int64_t start = offset + h.start, end = offset + h.end;
        if (end > out.windowStart)
            continue;
        if (best == 0)
            best = h.score;
        if (h.score < kRecallMinShare * best)
            break; // best first: the rest score less
        // The excerpt: the sentence around the first word that matched (the chunk when
        // it cannot be found), so a long chunk still reads as the sentence that matters.
        size_t anchor = static_cast<size_t>(start), anchorEnd = static_cast<size_t>(end);
        if (!h.matched.empty())
            if (const size_t at = text.substr(anchor, anchorEnd - anchor).find(h.matched.front());
                at != std::string_view::npos) {
                anchor += at;
                anchorEnd = anchor + h.matched.front().size();
            }
        const auto excerpt =
            excerptAround(text, anchor, anchorEnd, static_cast<size_t>(out.windowStart));
        const size_t from = excerpt.first, to = excerpt.second;
        const bool overlaps = std::any_of(out.chunks.begin(), out.chunks.end(), [&](const auto& c) {
            return static_cast<int64_t>(from) < c.pathEnd && c.pathStart < static_cast<int64_t>(to);
        });
        if (overlaps || to <= from)
            continue;
        RecalledChunk c;
        c.passageId = h.passageId;
        c.chunkStart = h.start;
        c.matched = h.matched;
        c.score = h.score;
        c.pathStart = static_cast<int64_t>(from);
        c.pathEnd = static_cast<int64_t>(to);
        c.text = std::string(text.substr(from, to - from));
        c.tokens = static_cast<int>(tokenizer.encode(recallText(c)).size());
        c.placed = out.tokens + c.tokens <= out.budget;
        if (c.placed)
            out.tokens += c.tokens;
        out.chunks.push_back(std::move(c));
        if (static_cast<int>(out.chunks.size()) >= settings.chunks)
            break;
    }
    return out;
}

} // namespace baton::story
