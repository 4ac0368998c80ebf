#include "util/hash.h"

#include <cstring>

namespace baton::engine {

namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;

inline uint64_t rotl(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

inline uint64_t load64(const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v; // little-endian machines only; the identity is a local cache key
}

inline uint64_t round(uint64_t acc, uint64_t input) {
    acc += input * kP2;
    acc = rotl(acc, 31);
    return acc * kP1;
}

inline uint64_t avalanche(uint64_t h) {
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
}

} // namespace

ContentHash::ContentHash()
    : m_lanes{kP1 + kP2, kP2, 0, 0 - kP1} {}

void ContentHash::consumeBlock(const unsigned char* block) {
    for (int i = 0; i < 4; ++i)
        m_lanes[i] = round(m_lanes[i], load64(block + 8 * i));
}

void ContentHash::update(const void* data, size_t size) {
    if (size == 0)
        return; // data may be null (an empty vector's data()): memcpy must not see it
    auto p = static_cast<const unsigned char*>(data);
    m_total += size;
    if (m_buffered > 0) {
        const size_t take = std::min(size, sizeof(m_buffer) - m_buffered);
        std::memcpy(m_buffer + m_buffered, p, take);
        m_buffered += take;
        p += take;
        size -= take;
        if (m_buffered < sizeof(m_buffer))
            return;
        consumeBlock(m_buffer);
        m_buffered = 0;
    }
    // The lanes stay in registers over the blocks (a model's file is gigabytes).
    uint64_t l0 = m_lanes[0], l1 = m_lanes[1], l2 = m_lanes[2], l3 = m_lanes[3];
    for (; size >= 32; p += 32, size -= 32) {
        l0 = round(l0, load64(p));
        l1 = round(l1, load64(p + 8));
        l2 = round(l2, load64(p + 16));
        l3 = round(l3, load64(p + 24));
    }
    m_lanes[0] = l0;
    m_lanes[1] = l1;
    m_lanes[2] = l2;
    m_lanes[3] = l3;
    std::memcpy(m_buffer, p, size);
    m_buffered = size;
}

uint64_t ContentHash::digest() const {
    uint64_t h =
        rotl(m_lanes[0], 1) + rotl(m_lanes[1], 7) + rotl(m_lanes[2], 12) + rotl(m_lanes[3], 18);
    for (uint64_t lane : m_lanes)
        h = (h ^ round(0, lane)) * kP1 + kP4;
    h += m_total;
    size_t i = 0;
    for (; i + 8 <= m_buffered; i += 8)
        h = rotl(h ^ round(0, load64(m_buffer + i)), 27) * kP1 + kP4;
    for (; i < m_buffered; ++i)
        h = rotl(h ^ (m_buffer[i] * 0x27D4EB2F165667C5ULL), 11) * kP1;
    return avalanche(h);
}

std::string ContentHash::hex() const {
    static const char* digits = "0123456789abcdef";
    uint64_t v = digest();
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i) {
        out[static_cast<size_t>(i)] = digits[v & 0xF];
        v >>= 4;
    }
    return out;
}

uint64_t mixSeeds(uint64_t a, uint64_t b) {
    uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::string hashHex(std::string_view data) {
    ContentHash h;
    h.update(data);
    return h.hex();
}

bool isHashHex(std::string_view s) {
    if (s.size() != 16)
        return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

} // namespace baton::engine
