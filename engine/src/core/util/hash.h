// A fast streaming 64-bit content hash for identities (models, tokenizers, states).
// It detects accidental change; it is not a defence against a deliberate collision.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton::engine {

class ContentHash {
public:
    ContentHash();
    void update(const void* data, size_t size);
    void update(std::string_view s) { update(s.data(), s.size()); }
    uint64_t digest() const;
    std::string hex() const; // 16 lower-case hex digits

private:
    void consumeBlock(const unsigned char* block);

    uint64_t m_lanes[4];
    unsigned char m_buffer[32];
    size_t m_buffered = 0;
    uint64_t m_total = 0;
};

std::string hashHex(std::string_view data);
// Two seeds mixed into one (SplitMix64's finaliser over a * golden ratio + b): a seed per
// (run, step, sequence) that neighbouring inputs do not correlate.
uint64_t mixSeeds(uint64_t a, uint64_t b);
// Whether s reads as a digest hex() writes: 16 lower-case hexadecimal digits.
bool isHashHex(std::string_view s);

} // namespace baton::engine
