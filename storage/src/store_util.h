// Small helpers shared by the stores' implementations.
#pragma once

#include "sqlite_error.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace baton::storage {

// A recursive CTE `sub(id)`: passage ?1 and all its descendants (on every branch).
inline constexpr const char* kSubtree = "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL "
                                        "SELECT p.id FROM passages p JOIN sub s ON "
                                        "p.parent_id = s.id) ";

inline int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

[[noreturn]] inline void throwNotFound(const std::string& what, int64_t id) {
    throw SqliteException(makeStorageError(StorageErrorCode::NotFound,
                                           "no " + what + " with id " + std::to_string(id)));
}

} // namespace baton::storage
