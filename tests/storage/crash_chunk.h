// The chunks the kill -9 harness writes: each carries its index and a checksum of
// itself, so a half-written chunk cannot pass for a whole one; each has a state
// blob with a pattern derived from the index.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace baton::test {

inline uint32_t fnv1a(const std::string& s) {
    uint32_t h = 2166136261u;
    for (unsigned char c : s)
        h = (h ^ c) * 16777619u;
    return h;
}

inline std::string makeChunk(int64_t index) {
    char head[32];
    std::snprintf(head, sizeof(head), "chunk %08lld|", static_cast<long long>(index));
    std::string s = head;
    const size_t length = 50 + static_cast<size_t>(index * 37 % 400);
    for (size_t i = 0; i < length; ++i)
        s += static_cast<char>('a' + (index + static_cast<int64_t>(i)) % 26);
    char tail[16];
    std::snprintf(tail, sizeof(tail), "|%08x\n", fnv1a(s));
    return s + tail;
}

// The index of a well-formed chunk, or nullopt.
inline std::optional<int64_t> parseChunk(const std::string& chunk) {
    long long index = -1;
    if (chunk.size() < 25 || std::sscanf(chunk.c_str(), "chunk %08lld|", &index) != 1 || index < 0)
        return std::nullopt;
    if (makeChunk(index) != chunk)
        return std::nullopt;
    return index;
}

inline std::vector<uint8_t> chunkStateBlob(int64_t index) {
    std::vector<uint8_t> b(4096);
    for (size_t k = 0; k < b.size(); ++k)
        b[k] = static_cast<uint8_t>((static_cast<size_t>(index) * 131 + k) & 0xFF);
    return b;
}

} // namespace baton::test
