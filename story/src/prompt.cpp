#include "baton/story/prompt.h"

#include "text_util.h"

#include <algorithm>

namespace baton::story {

std::string trimmed(const std::string& s) {
    const char* space = " \t\r\n";
    const size_t begin = s.find_first_not_of(space);
    if (begin == std::string::npos)
        return {};
    const size_t end = s.find_last_not_of(space);
    return s.substr(begin, end - begin + 1);
}

std::string bracketLine(const std::string& text) {
    return "\n[" + text + "]\n";
}

std::string recentText(std::string_view text, int depth, const engine::Tokenizer& tokenizer) {
    // 5 bytes a token first (English prose takes about 4), twice as many while that
    // holds no more than `depth` tokens, up to 16 bytes a token.
    const size_t most = std::min(text.size(), static_cast<size_t>(depth) * 16);
    size_t span = std::min(most, static_cast<size_t>(depth) * 5);
    std::string_view tail = text.substr(text.size() - span);
    auto ids = tokenizer.encode(tail);
    while (ids.size() <= static_cast<size_t>(depth) && span < most) {
        span = std::min(most, span * 2);
        tail = text.substr(text.size() - span);
        ids = tokenizer.encode(tail);
    }
    if (ids.size() <= static_cast<size_t>(depth))
        return std::string(tail);
    return tokenizer.decode(std::vector<int32_t>(ids.end() - depth, ids.end()));
}

const char* segmentKindName(SegmentKind kind) {
    switch (kind) {
    case SegmentKind::Memory:
        return "memory";
    case SegmentKind::Passage:
        return "passage";
    case SegmentKind::WorldInfo:
        return "world-info";
    case SegmentKind::AuthorsNote:
        return "authors-note";
    case SegmentKind::Recalled:
        return "recalled";
    }
    return "?";
}

std::string Prompt::text() const {
    std::string out;
    for (const auto& s : segments)
        out += s.text;
    return out;
}

std::string memoryPrefix(const storage::Story& story) {
    const std::string memory = trimmed(story.memory);
    return memory.empty() ? std::string() : memory + "\n\n";
}

std::string authorsNoteText(const storage::Story& story) {
    const std::string note = trimmed(story.authorsNote);
    return note.empty() ? std::string() : bracketLine("Author's note: " + note);
}

std::string pinnedText(const storage::Story& story, MemoryLayout layout) {
    return layout == MemoryLayout::EveryWindow ? memoryPrefix(story) : std::string();
}

int stateLayout(const storage::Story& story, MemoryLayout layout) {
    return pinnedText(story, layout).empty() ? 0 : 1;
}

Prompt continuationPrompt(const storage::Story& story, const std::vector<storage::Passage>& path,
                          int64_t afterPassage, MemoryLayout layout, const LoreSelection& lore,
                          const std::string& pending, const RecallSelection& recall) {
    Prompt p;
    size_t first = 0;
    if (afterPassage != 0) {
        while (first < path.size() && path[first].id != afterPassage)
            ++first;
        ++first; // the state covers its own passage
    } else if (layout == MemoryLayout::Once) {
        if (auto memory = memoryPrefix(story); !memory.empty())
            p.segments.push_back({SegmentKind::Memory, std::move(memory), 0, 0});
    }
    for (size_t i = first; i < path.size(); ++i)
        p.segments.push_back({SegmentKind::Passage, path[i].text, path[i].id, 0});
    if (!pending.empty())
        p.segments.push_back({SegmentKind::Passage, pending, 0, 0});
    for (const auto& m : lore.matches)
        if (m.placed)
            p.guide.push_back({SegmentKind::WorldInfo, m.text, 0, m.entry.id});
    for (const RecalledChunk* c : recall.placedInOrder())
        p.guide.push_back({SegmentKind::Recalled, recallText(*c), c->passageId, 0});
    if (auto note = authorsNoteText(story); !note.empty())
        p.guide.push_back({SegmentKind::AuthorsNote, std::move(note), 0, 0});
    return p;
}

namespace {

bool sentenceEnd(char c) {
    return c == '.' || c == '!' || c == '?';
}

// Closing quotes and brackets after a sentence end: ' " ) ] and the UTF-8 of ’ ” »
// (their last bytes; the lead bytes are checked by the caller).
size_t closerBefore(std::string_view text, size_t end) {
    if (end >= 1 && (text[end - 1] == '"' || text[end - 1] == '\'' || text[end - 1] == ')' ||
                     text[end - 1] == ']'))
        return 1;
    if (end >= 3 && text.substr(end - 3, 3) == "\xe2\x80\x99")
        return 3; // ’
    if (end >= 3 && text.substr(end - 3, 3) == "\xe2\x80\x9d")
        return 3; // ”
    if (end >= 2 && text.substr(end - 2, 2) == "\xc2\xbb")
        return 2; // »
    return 0;
}

bool space(char c) {
    return c == ' ' || c == '\t';
}

} // namespace

bool endsSentence(std::string_view text, size_t end) {
    for (size_t n; (n = closerBefore(text, end)) > 0;)
        end -= n;
    return end >= 1 && sentenceEnd(text[end - 1]);
}

size_t unfinishedTail(std::string_view text) {
    size_t end = text.size();
    if (end == 0 || text[end - 1] == '\n' || text[end - 1] == '\r')
        return 0;
    size_t trimmed = end;
    while (trimmed > 0 && space(text[trimmed - 1]))
        --trimmed;
    if (trimmed == 0 || text[trimmed - 1] == '\n' || endsSentence(text, trimmed))
        return 0;
    // Back to the start of the last sentence: after a line break, or after a sentence
    // end and the spaces that follow it.
    size_t i = trimmed;
    while (i > 0) {
        const char c = text[i - 1];
        if (c == '\n' || c == '\r')
            break;
        if (space(c)) {
            size_t j = i - 1;
            while (j > 0 && space(text[j - 1]))
                --j;
            if (endsSentence(text, j))
                break;
            i = j;
            continue;
        }
        --i;
    }
    return end - i;
}

} // namespace baton::story
