#include "baton/story/prompt.h"

namespace baton::story {

namespace {

std::string trimmed(const std::string& s) {
    const char* space = " \t\r\n";
    const size_t begin = s.find_first_not_of(space);
    if (begin == std::string::npos)
        return {};
    const size_t end = s.find_last_not_of(space);
    return s.substr(begin, end - begin + 1);
}

} // namespace

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
    return note.empty() ? std::string() : "\n[Author's note: " + note + "]\n";
}

Prompt continuationPrompt(const storage::Story& story, const std::vector<storage::Passage>& path,
                          int64_t afterPassage) {
    Prompt p;
    size_t first = 0;
    if (afterPassage != 0) {
        while (first < path.size() && path[first].id != afterPassage)
            ++first;
        ++first; // the state covers its own passage
    } else if (auto memory = memoryPrefix(story); !memory.empty()) {
        p.segments.push_back({SegmentKind::Memory, std::move(memory), 0});
    }
    for (size_t i = first; i < path.size(); ++i)
        p.segments.push_back({SegmentKind::Passage, path[i].text, path[i].id});
    if (auto note = authorsNoteText(story); !note.empty())
        p.segments.push_back({SegmentKind::AuthorsNote, std::move(note), 0});
    return p;
}

} // namespace baton::story
