#include <baton/storage/error.h>
#include <baton/storage/records.h>

namespace baton::storage {

const char* storageErrorCodeName(StorageErrorCode code) {
    switch (code) {
    case StorageErrorCode::Io:
        return "io";
    case StorageErrorCode::Corrupt:
        return "corrupt";
    case StorageErrorCode::TooNew:
        return "too-new";
    case StorageErrorCode::ReadOnly:
        return "read-only";
    case StorageErrorCode::DiskFull:
        return "disk-full";
    case StorageErrorCode::Busy:
        return "busy";
    case StorageErrorCode::NotFound:
        return "not-found";
    case StorageErrorCode::Constraint:
        return "constraint";
    case StorageErrorCode::InvalidArgument:
        return "invalid-argument";
    case StorageErrorCode::CannotOpen:
        return "cannot-open";
    case StorageErrorCode::Internal:
        return "internal";
    }
    return "unknown";
}

std::string describe(const StorageError& error) {
    std::string s = error.message + " [" + storageErrorCodeName(error.code);
    if (!error.detail.empty())
        s += ": " + error.detail;
    return s + "]";
}

const char* storyModeName(StoryMode mode) {
    return mode == StoryMode::Adventure ? "adventure" : "story";
}

std::optional<StoryMode> storyModeFromName(const std::string& name) {
    if (name == "story")
        return StoryMode::Story;
    if (name == "adventure")
        return StoryMode::Adventure;
    return std::nullopt;
}

const char* passageAuthorName(PassageAuthor author) {
    switch (author) {
    case PassageAuthor::User:
        return "user";
    case PassageAuthor::Model:
        return "model";
    case PassageAuthor::Edit:
        return "edit";
    }
    return "unknown";
}

const char* runStatusName(RunStatus status) {
    switch (status) {
    case RunStatus::Pending:
        return "pending";
    case RunStatus::Running:
        return "running";
    case RunStatus::Completed:
        return "completed";
    case RunStatus::Failed:
        return "failed";
    case RunStatus::Cancelled:
        return "cancelled";
    }
    return "unknown";
}

} // namespace baton::storage
