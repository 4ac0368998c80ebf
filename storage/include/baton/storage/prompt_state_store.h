// Saved generator states of raw prompts (schema v5), for the HTTP server's prefix
// cache: clients resend their whole story with every request, and a state saved at a
// window boundary of an earlier request lets a restarted server read only what
// follows it. A state is found by its owner (the model identity and windows it
// belongs to), the hash of the token ids before it and their count. The least
// recently used go first when the states would pass a size in bytes.
#pragma once

#include "baton/storage/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton::storage {

class Connection;

class PromptStateStore {
public:
    explicit PromptStateStore(Connection& connection)
        : m_db(connection) {}

    // Saves (or replaces) a state, then deletes the least recently used states of any
    // owner while all of them together hold more than maxBytes.
    Result<void> save(const std::string& owner, const std::string& prefixHash, int64_t tokens,
                      const std::vector<uint8_t>& blob, int64_t maxBytes);
    // The state, marked as used now; nullopt when there is none.
    Result<std::optional<std::vector<uint8_t>>> find(const std::string& owner,
                                                     const std::string& prefixHash, int64_t tokens);
    // Whether there is one (not marked as used).
    Result<bool> exists(const std::string& owner, const std::string& prefixHash, int64_t tokens);
    Result<void> remove(const std::string& owner, const std::string& prefixHash, int64_t tokens);
    // An owner's most recently used states (at most `limit`), the most recent first.
    Result<std::vector<std::vector<uint8_t>>> recent(const std::string& owner, int limit);
    // The prefix lengths an owner has states for, longest first.
    Result<std::vector<int64_t>> lengths(const std::string& owner);
    // Every state's bytes together.
    Result<int64_t> totalBytes();

private:
    Connection& m_db;
};

} // namespace baton::storage
