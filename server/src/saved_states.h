// The prefix cache's lasting level: window states of prompts saved in Baton's database
// (storage/prompt_state_store.h), so that a restarted server, or the app's after a
// restart, reads only what follows the longest saved prefix of a long story. The
// database is opened on first use by the thread that uses it (the model host's) and
// used by one thread at a time. A database that fails (locked for long, full, damaged)
// never fails a request: the server goes on with the memory level alone and says why.
#pragma once

#include "prefix_cache.h"
#include "stream_match.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace baton::storage {
class Database;
}

namespace baton::server {

class SavedStates {
public:
    SavedStates(std::string databasePath, int64_t maxBytes);
    ~SavedStates();

    // The longest saved prefix among `keys` (prefixKeys of a prompt) for `owner` (the
    // model and windows the states belong to) that is at least minLength long.
    std::optional<PrefixStateCache::Hit> longest(const std::string& owner,
                                                 const std::vector<PrefixHasher::Key>& keys,
                                                 int64_t minLength = 0);
    void put(const std::string& owner, const PrefixHasher::Key& key,
             const std::vector<uint8_t>& blob);
    void erase(const std::string& owner, const PrefixHasher::Key& key);
    // Whether a state is saved for this prefix (not marked as used).
    bool has(const std::string& owner, const PrefixHasher::Key& key);
    // The length of the longest saved prefix among `keys` (0: none), blobs left unread.
    int64_t longestLength(const std::string& owner, const std::vector<PrefixHasher::Key>& keys);

    // The streams the trimmed-prompt matcher remembers (stream_match.h), kept beside the
    // states (under the owner's name + "#streams", sharing their size budget), so that a
    // restarted server continues a client's trimmed story as the one before it did.
    void putStream(const std::string& owner, const ReadStream& stream);
    // The most recently saved first; a damaged one is left out.
    std::vector<ReadStream> recentStreams(const std::string& owner, int limit);

    // Why the database is not used ("" while it works).
    const std::string& problem() const { return m_problem; }

private:
    storage::Database* database();
    const std::vector<int64_t>& lengths(const std::string& owner);
    void fail(const std::string& why);

    std::string m_path;
    int64_t m_maxBytes;
    std::unique_ptr<storage::Database> m_db;
    std::map<std::string, std::vector<int64_t>> m_lengths; // per owner, longest first
    std::string m_problem;
};

// A key as the database stores it: its two 64-bit halves in hex.
std::string prefixHashText(const PrefixHasher::Key& key);

} // namespace baton::server
