#include "prefix_cache.h"

namespace baton::server {

namespace {

uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

} // namespace

PrefixHasher::PrefixHasher() {
    m_key.a = 0xCBF29CE484222325ULL; // FNV-1a offset basis
    m_key.b = 0x9E3779B97F4A7C15ULL;
}

void PrefixHasher::push(int32_t id) {
    // Two independent 64-bit lanes: FNV-1a over the id's bytes, and a multiply-xorshift
    // chain; a wrong state would need both to collide at the same length.
    const auto u = static_cast<uint32_t>(id);
    for (int i = 0; i < 4; ++i) {
        m_key.a ^= (u >> (8 * i)) & 0xFF;
        m_key.a *= 0x100000001B3ULL;
    }
    m_key.b = mix(m_key.b ^ (uint64_t(u) + 0x632BE59BD9B4E019ULL + (m_key.b << 6)));
    m_key.length += 1;
}

std::vector<PrefixHasher::Key> prefixKeys(const std::vector<int32_t>& ids) {
    std::vector<PrefixHasher::Key> keys;
    keys.reserve(ids.size() + 1);
    PrefixHasher h;
    keys.push_back(h.key());
    for (int32_t id : ids) {
        h.push(id);
        keys.push_back(h.key());
    }
    return keys;
}

PrefixStateCache::PrefixStateCache(size_t capacityBytes)
    : m_capacity(capacityBytes) {}

void PrefixStateCache::put(const PrefixHasher::Key& key, std::vector<uint8_t> blob) {
    std::lock_guard lock(m_mutex);
    if (auto it = m_index.find(key); it != m_index.end())
        eraseLocked(it->second);
    if (blob.size() > m_capacity)
        return;
    m_bytes += blob.size();
    m_lru.push_front(Entry{key, std::move(blob)});
    m_index[key] = m_lru.begin();
    m_lengths[key.length] += 1;
    while (m_bytes > m_capacity && !m_lru.empty())
        eraseLocked(std::prev(m_lru.end()));
}

std::optional<PrefixStateCache::Hit>
PrefixStateCache::longest(const std::vector<PrefixHasher::Key>& keys) {
    std::lock_guard lock(m_mutex);
    for (auto l = m_lengths.rbegin(); l != m_lengths.rend(); ++l) {
        if (l->first >= int64_t(keys.size()))
            continue;
        auto it = m_index.find(keys[size_t(l->first)]);
        if (it == m_index.end())
            continue;
        m_lru.splice(m_lru.begin(), m_lru, it->second); // now the most recently used
        return Hit{l->first, it->second->blob};
    }
    return std::nullopt;
}

int64_t PrefixStateCache::longestLength(const std::vector<PrefixHasher::Key>& keys) const {
    std::lock_guard lock(m_mutex);
    for (auto l = m_lengths.rbegin(); l != m_lengths.rend(); ++l)
        if (l->first < int64_t(keys.size()) && m_index.count(keys[size_t(l->first)]))
            return l->first;
    return 0;
}

bool PrefixStateCache::contains(const PrefixHasher::Key& key) const {
    std::lock_guard lock(m_mutex);
    return m_index.count(key) > 0;
}

void PrefixStateCache::erase(const PrefixHasher::Key& key) {
    std::lock_guard lock(m_mutex);
    if (auto it = m_index.find(key); it != m_index.end())
        eraseLocked(it->second);
}

void PrefixStateCache::clear() {
    std::lock_guard lock(m_mutex);
    m_lru.clear();
    m_index.clear();
    m_lengths.clear();
    m_bytes = 0;
}

void PrefixStateCache::eraseLocked(std::list<Entry>::iterator it) {
    m_bytes -= it->blob.size();
    if (auto l = m_lengths.find(it->key.length); l != m_lengths.end() && --l->second == 0)
        m_lengths.erase(l);
    m_index.erase(it->key);
    m_lru.erase(it);
}

size_t PrefixStateCache::bytes() const {
    std::lock_guard lock(m_mutex);
    return m_bytes;
}

size_t PrefixStateCache::entries() const {
    std::lock_guard lock(m_mutex);
    return m_index.size();
}

} // namespace baton::server
