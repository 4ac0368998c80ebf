#include "baton/story/error.h"

namespace baton::story {

Error engineError(const engine::Error& error) {
    Error e;
    e.kind = ErrorKind::Engine;
    e.message = error.message;
    e.engine = error;
    return e;
}

Error storageError(const storage::StorageError& error) {
    Error e;
    e.kind = ErrorKind::Storage;
    e.message = error.message;
    e.storage = error;
    return e;
}

Error settingsError(std::string message) {
    Error e;
    e.kind = ErrorKind::InvalidSettings;
    e.message = std::move(message);
    return e;
}

Error requestError(std::string message) {
    Error e;
    e.kind = ErrorKind::InvalidRequest;
    e.message = std::move(message);
    return e;
}

std::string describe(const Error& error) {
    if (error.storage)
        return storage::describe(*error.storage);
    if (error.engine)
        return error.engine->message + " [" + engine::errorCodeName(error.engine->code) + "]";
    return error.message + (error.kind == ErrorKind::InvalidSettings ? " [invalid-settings]"
                                                                     : " [invalid-request]");
}

} // namespace baton::story
