// Errors and results at the storage's public boundary. SQLite failures are
// translated into these stable codes where they happen; exceptions never cross
// the boundary and the UI turns the codes into words.
#pragma once

#include "baton/common/result.h"

#include <string>

namespace baton::storage {

// Stable error codes. Written to logs and shown by tools: never renumber.
enum class StorageErrorCode : int {
    Io = 1,         // any other I/O failure (detail says which)
    Corrupt = 2,    // not a database, or a damaged one: the file is left untouched
    TooNew = 3,     // written by a newer Baton whose schema this build cannot read
    ReadOnly = 4,   // the file or its folder cannot be written
    DiskFull = 5,   // no space left (SQLITE_FULL)
    Busy = 6,       // another process holds the database past the busy timeout
    NotFound = 7,   // no row with that id
    Constraint = 8, // a foreign key, check or uniqueness rule was broken
    InvalidArgument = 9,
    CannotOpen = 10, // the path cannot be opened (missing folder, permissions)
    Internal = 11,   // a bug: SQL that does not prepare, misuse of the API
};

// A short stable name for a code, e.g. "too-new".
const char* storageErrorCodeName(StorageErrorCode code);

struct StorageError {
    StorageErrorCode code = StorageErrorCode::Internal;
    std::string message; // one sentence for a person
    std::string detail;  // technical: SQLite's code and message, the path, the SQL
};

// Result<T>: a value or a StorageError (baton/common/result.h).
template <typename T>
using Result = baton::Result<T, StorageError>;

inline StorageError makeStorageError(StorageErrorCode code, std::string message,
                                     std::string detail = {}) {
    return StorageError{code, std::move(message), std::move(detail)};
}

// "message [code-name: detail]" for logs and command-line tools.
std::string describe(const StorageError& error);

} // namespace baton::storage
