// An XML element's local name, lower-cased ("h:P" -> "p"): EPUB files use namespace
// prefixes, and chapters written as HTML upper-case tags.
#pragma once

#include <string>

namespace baton::engine::books {

inline std::string localName(const char* qualified) {
    std::string name = qualified;
    if (const size_t colon = name.find(':'); colon != std::string::npos)
        name.erase(0, colon + 1);
    for (char& c : name)
        if (c >= 'A' && c <= 'Z')
            c = char(c + 32);
    return name;
}

} // namespace baton::engine::books
