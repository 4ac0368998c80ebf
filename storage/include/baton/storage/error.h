// Errors and results at the storage's public boundary. SQLite failures are
// translated into these stable codes where they happen; exceptions never cross
// the boundary and the UI turns the codes into words.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

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

// Result<T>: a value or a StorageError. Result<void> carries success or an error.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value)
        : m_v(std::move(value)) {}
    Result(StorageError error)
        : m_v(std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(m_v);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(m_v);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(m_v));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const StorageError& error() const {
        assert(!ok());
        return std::get<1>(m_v);
    }

private:
    std::variant<T, StorageError> m_v;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(StorageError error)
        : m_error(std::move(error)) {}

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const StorageError& error() const {
        assert(!ok());
        return *m_error;
    }

private:
    std::optional<StorageError> m_error;
};

inline StorageError makeStorageError(StorageErrorCode code, std::string message,
                                     std::string detail = {}) {
    return StorageError{code, std::move(message), std::move(detail)};
}

// "message [code-name: detail]" for logs and command-line tools.
std::string describe(const StorageError& error);

} // namespace baton::storage
