// Errors and results at the engine's public boundary. Exceptions never cross it:
// every public call returns a Result<T>, and the UI turns codes into words.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace baton::engine {

// Stable error codes. Stored in the database and logs: never renumber.
enum class ErrorCode : int {
    Cancelled = 1,
    InvalidArgument = 2,
    Internal = 3,
    OutOfMemory = 4,
    Unsupported = 5,
    // files
    FileNotFound = 10,
    FileUnreadable = 11,
    FileWriteFailed = 12,
    InvalidUtf8 = 13,
    // checkpoints
    PickleRefused = 20,
    HeaderTooLarge = 21,
    TruncatedFile = 22,
    InvalidJson = 23,
    BadHeader = 24,
    UnknownDtype = 25,
    BadOffsets = 26,
    OverlappingOffsets = 27,
    OffsetOutOfRange = 28,
    MissingTensor = 29,
    UnexpectedTensor = 30,
    TensorShapeMismatch = 31,
    BadConfig = 32,
    ConfigMismatch = 33,
    // tokenizers
    TokenizerInvalid = 40,
    TokenizerMismatch = 41,
    // state blobs
    StateCorrupt = 50,
    StateMismatch = 51,
    StateVersion = 52,
};

// A short stable name for a code, e.g. "truncated-file".
const char* errorCodeName(ErrorCode code);

struct Error {
    ErrorCode code = ErrorCode::Internal;
    std::string message; // one sentence for a person, with the technical detail
};

// Result<T>: a value or an Error. Result<void> carries only success or an Error.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value)
        : m_v(std::move(value)) {}
    Result(Error error)
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

    const Error& error() const {
        assert(!ok());
        return std::get<1>(m_v);
    }

private:
    std::variant<T, Error> m_v;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error)
        : m_error(std::move(error)) {}

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error& error() const {
        assert(!ok());
        return *m_error;
    }

private:
    std::optional<Error> m_error;
};

inline Error makeError(ErrorCode code, std::string message) {
    return Error{code, std::move(message)};
}

} // namespace baton::engine
