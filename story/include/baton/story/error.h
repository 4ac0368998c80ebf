// Errors at the story module's boundary: a story operation fails because of the
// engine, the storage, or the story's own data (settings that do not parse, nothing
// to retry). The engine's or storage's error travels along unchanged, so each client
// can put it into words the way it already does.
#pragma once

#include "baton/common/result.h"

#include <baton/engine/error.h>
#include <baton/storage/error.h>

#include <optional>
#include <string>

namespace baton::story {

enum class ErrorKind {
    Engine,          // see engine
    Storage,         // see storage
    InvalidSettings, // a story's settings JSON, or a setting, is wrong
    InvalidRequest,  // what was asked cannot be done (no such story, nothing to retry)
};

struct Error {
    ErrorKind kind = ErrorKind::InvalidRequest;
    std::string message; // one sentence for a person
    std::optional<engine::Error> engine;
    std::optional<storage::StorageError> storage;
};

template <typename T>
using Result = baton::Result<T, Error>;

Error engineError(const engine::Error& error);
Error storageError(const storage::StorageError& error);
Error settingsError(std::string message);
Error requestError(std::string message);

// "message [kind or code: detail]" for logs and command-line tools.
std::string describe(const Error& error);

} // namespace baton::story
