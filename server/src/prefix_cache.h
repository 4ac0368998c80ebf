// Saved generator states of recent prompts, so that a client that resends its whole
// story with every request (as every KoboldAI and OpenAI front end does) costs only
// what changed. A state is stored under the token ids before it (a 128-bit hash of
// them and their count); a lookup finds the longest stored prefix of a new prompt.
// Least recently used states go first when the cache would pass its size in bytes.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace baton::server {

// A hash of every prefix of a token sequence, extended one token at a time.
class PrefixHasher {
public:
    struct Key {
        uint64_t a = 0, b = 0;
        int64_t length = 0;
        bool operator==(const Key& o) const { return a == o.a && b == o.b && length == o.length; }
    };
    PrefixHasher();
    explicit PrefixHasher(const Key& from) // continues a prefix
        : m_key(from) {}
    void push(int32_t id);
    const Key& key() const { return m_key; }

private:
    Key m_key;
};

// The keys of ids[0, n) for n = 0 .. ids.size().
std::vector<PrefixHasher::Key> prefixKeys(const std::vector<int32_t>& ids);

class PrefixStateCache {
public:
    explicit PrefixStateCache(size_t capacityBytes);

    void put(const PrefixHasher::Key& key, std::vector<uint8_t> blob);
    // The longest stored prefix among `keys` (prefixKeys of a prompt): its length and
    // state; nullopt when none is stored.
    struct Hit {
        int64_t length = 0;
        std::vector<uint8_t> blob;
    };
    std::optional<Hit> longest(const std::vector<PrefixHasher::Key>& keys);
    // The length longest() would find (0 when none), without using or copying it.
    int64_t longestLength(const std::vector<PrefixHasher::Key>& keys) const;
    bool contains(const PrefixHasher::Key& key) const;
    // Drops the entry (a state that could not be imported).
    void erase(const PrefixHasher::Key& key);
    void clear();

    size_t bytes() const;
    size_t entries() const;
    size_t capacity() const { return m_capacity; }

private:
    struct KeyHash {
        size_t operator()(const PrefixHasher::Key& k) const { return size_t(k.a ^ (k.b << 1)); }
    };
    struct Entry {
        PrefixHasher::Key key;
        std::vector<uint8_t> blob;
    };
    void eraseLocked(std::list<Entry>::iterator it);

    size_t m_capacity;
    mutable std::mutex m_mutex;
    std::list<Entry> m_lru; // most recently used first
    std::unordered_map<PrefixHasher::Key, std::list<Entry>::iterator, KeyHash> m_index;
    std::map<int64_t, int> m_lengths; // stored prefix lengths and how many of each
    size_t m_bytes = 0;
};

} // namespace baton::server
