#include "saved_states.h"

#include <baton/storage/database.h>
#include <baton/storage/prompt_state_store.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <functional>

namespace baton::server {

std::string prefixHashText(const PrefixHasher::Key& key) {
    char text[33];
    std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(key.a),
                  static_cast<unsigned long long>(key.b));
    return text;
}

namespace {

// A stream as saved: "BRS1", its offset, its tokens and the client's prompt, each count
// and value as a little-endian 32- or 64-bit number.
constexpr char kStreamMagic[4] = {'B', 'R', 'S', '1'};

void putNumber(std::vector<uint8_t>& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out.push_back(uint8_t(v >> (8 * i)));
}

std::vector<uint8_t> encodeStream(const ReadStream& s) {
    std::vector<uint8_t> out(kStreamMagic, kStreamMagic + 4);
    putNumber(out, uint64_t(s.offset), 8);
    for (const auto* ids : {&s.tokens, &s.clientPrompt}) {
        putNumber(out, ids->size(), 4);
        for (int32_t id : *ids)
            putNumber(out, uint32_t(id), 4);
    }
    return out;
}

std::optional<ReadStream> decodeStream(const std::vector<uint8_t>& in) {
    size_t at = 4;
    auto take = [&](int bytes, uint64_t& v) {
        if (in.size() - at < size_t(bytes))
            return false;
        v = 0;
        for (int i = 0; i < bytes; ++i)
            v |= uint64_t(in[at++]) << (8 * i);
        return true;
    };
    if (in.size() < 4 || !std::equal(kStreamMagic, kStreamMagic + 4, in.begin()))
        return std::nullopt;
    ReadStream s;
    uint64_t v = 0;
    if (!take(8, v))
        return std::nullopt;
    s.offset = int64_t(v);
    for (auto* ids : {&s.tokens, &s.clientPrompt}) {
        if (!take(4, v) || v > (in.size() - at) / 4)
            return std::nullopt;
        ids->resize(size_t(v));
        for (int32_t& id : *ids) {
            take(4, v);
            id = int32_t(uint32_t(v));
        }
    }
    if (at != in.size() || s.tokens.empty())
        return std::nullopt;
    return s;
}

std::string streamsOwner(const std::string& owner) {
    return owner + "#streams";
}

} // namespace

SavedStates::SavedStates(std::string databasePath, int64_t maxBytes)
    : m_path(std::move(databasePath))
    , m_maxBytes(maxBytes) {}

SavedStates::~SavedStates() = default;

void SavedStates::fail(const std::string& why) {
    if (m_problem.empty())
        spdlog::warn("saved prompt states: {}; going on with the states in memory", why);
    m_problem = why;
    m_db.reset();
}

storage::Database* SavedStates::database() {
    if (!m_db && m_problem.empty()) {
        storage::OpenOptions options;
        options.quickCheck = false;
        auto db = storage::Database::open(m_path, options);
        if (!db)
            fail(storage::describe(db.error()));
        else
            m_db = std::move(*db);
    }
    return m_db.get();
}

const std::vector<int64_t>& SavedStates::lengths(const std::string& owner) {
    auto it = m_lengths.find(owner);
    if (it == m_lengths.end()) {
        std::vector<int64_t> found;
        if (auto* db = database()) {
            auto r = db->promptStates().lengths(owner);
            if (r)
                found = std::move(*r);
            else
                fail(storage::describe(r.error()));
        }
        it = m_lengths.emplace(owner, std::move(found)).first;
    }
    return it->second;
}

std::optional<PrefixStateCache::Hit>
SavedStates::longest(const std::string& owner, const std::vector<PrefixHasher::Key>& keys,
                     int64_t minLength) {
    for (int64_t length : lengths(owner)) { // longest first
        if (length < minLength)
            break;
        if (length >= int64_t(keys.size()))
            continue;
        auto* db = database();
        if (!db)
            return std::nullopt;
        auto blob = db->promptStates().find(owner, prefixHashText(keys[size_t(length)]), length);
        if (!blob) {
            fail(storage::describe(blob.error()));
            return std::nullopt;
        }
        if (*blob)
            return PrefixStateCache::Hit{length, std::move(**blob)};
    }
    return std::nullopt;
}

void SavedStates::put(const std::string& owner, const PrefixHasher::Key& key,
                      const std::vector<uint8_t>& blob) {
    auto* db = database();
    if (!db)
        return;
    if (auto r = db->promptStates().save(owner, prefixHashText(key), key.length, blob, m_maxBytes);
        !r) {
        fail(storage::describe(r.error()));
        return;
    }
    m_lengths.clear(); // older states of any owner may have gone to make room
}

bool SavedStates::has(const std::string& owner, const PrefixHasher::Key& key) {
    const auto& known = lengths(owner);
    if (std::find(known.begin(), known.end(), key.length) == known.end())
        return false;
    auto* db = database();
    if (!db)
        return false;
    auto r = db->promptStates().exists(owner, prefixHashText(key), key.length);
    if (!r) {
        fail(storage::describe(r.error()));
        return false;
    }
    return *r;
}

int64_t SavedStates::longestLength(const std::string& owner,
                                   const std::vector<PrefixHasher::Key>& keys) {
    for (int64_t length : lengths(owner)) // longest first
        if (length < int64_t(keys.size()) && has(owner, keys[size_t(length)]))
            return length;
    return 0;
}

void SavedStates::putStream(const std::string& owner, const ReadStream& stream) {
    if (!stream.tokens.empty())
        put(streamsOwner(owner), prefixKeys(stream.tokens).back(), encodeStream(stream));
}

std::vector<ReadStream> SavedStates::recentStreams(const std::string& owner, int limit) {
    std::vector<ReadStream> out;
    auto* db = database();
    if (!db)
        return out;
    auto blobs = db->promptStates().recent(streamsOwner(owner), limit);
    if (!blobs) {
        fail(storage::describe(blobs.error()));
        return out;
    }
    for (const auto& blob : *blobs)
        if (auto s = decodeStream(blob))
            out.push_back(std::move(*s));
    return out;
}

void SavedStates::erase(const std::string& owner, const PrefixHasher::Key& key) {
    if (auto* db = database())
        if (auto r = db->promptStates().remove(owner, prefixHashText(key), key.length); !r)
            fail(storage::describe(r.error()));
    m_lengths.erase(owner);
}

} // namespace baton::server
