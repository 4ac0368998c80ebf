#include "baton/storage/story_prompt.h"

namespace baton::storage {

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

std::string memoryPrefix(const Story& story) {
    const std::string memory = trimmed(story.memory);
    return memory.empty() ? std::string() : memory + "\n\n";
}

std::string authorsNoteText(const Story& story) {
    const std::string note = trimmed(story.authorsNote);
    return note.empty() ? std::string() : "\n[Author's note: " + note + "]\n";
}

} // namespace baton::storage
