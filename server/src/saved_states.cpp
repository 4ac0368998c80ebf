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

void SavedStates::erase(const std::string& owner, const PrefixHasher::Key& key) {
    if (auto* db = database())
        if (auto r = db->promptStates().remove(owner, prefixHashText(key), key.length); !r)
            fail(storage::describe(r.error()));
    m_lengths.erase(owner);
}

} // namespace baton::server
