#include "baton/story/prompt.h"

#include "text_util.h"

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
                          const std::string& pending) {
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
            p.segments.push_back({SegmentKind::WorldInfo, m.text, 0, m.entry.id});
    if (auto note = authorsNoteText(story); !note.empty())
        p.segments.push_back({SegmentKind::AuthorsNote, std::move(note), 0, 0});
    return p;
}

} // namespace baton::story
