// Errors and results at the engine's public boundary. Exceptions never cross it:
// every public call returns a Result<T>, and the UI turns codes into words.
#pragma once

#include "baton/common/result.h"

#include <string>

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
    // books
    BookInvalid = 60,
    BookDrm = 61,
    // distributed training
    PeerFailed = 70, // another rank died, hung past the timeout or could not be reached
};

// A short stable name for a code, e.g. "truncated-file".
const char* errorCodeName(ErrorCode code);

struct Error {
    ErrorCode code = ErrorCode::Internal;
    std::string message; // one sentence for a person, with the technical detail
};

// Result<T>: a value or an Error (baton/common/result.h).
template <typename T>
using Result = baton::Result<T, Error>;

inline Error makeError(ErrorCode code, std::string message) {
    return Error{code, std::move(message)};
}

} // namespace baton::engine
