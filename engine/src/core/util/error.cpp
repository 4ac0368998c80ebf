#include "baton/engine/error.h"

namespace baton::engine {

const char* errorCodeName(ErrorCode code) {
    switch (code) {
    case ErrorCode::Cancelled:
        return "cancelled";
    case ErrorCode::InvalidArgument:
        return "invalid-argument";
    case ErrorCode::Internal:
        return "internal";
    case ErrorCode::OutOfMemory:
        return "out-of-memory";
    case ErrorCode::Unsupported:
        return "unsupported";
    case ErrorCode::FileNotFound:
        return "file-not-found";
    case ErrorCode::FileUnreadable:
        return "file-unreadable";
    case ErrorCode::FileWriteFailed:
        return "file-write-failed";
    case ErrorCode::InvalidUtf8:
        return "invalid-utf8";
    case ErrorCode::PickleRefused:
        return "pickle-refused";
    case ErrorCode::HeaderTooLarge:
        return "header-too-large";
    case ErrorCode::TruncatedFile:
        return "truncated-file";
    case ErrorCode::InvalidJson:
        return "invalid-json";
    case ErrorCode::BadHeader:
        return "bad-header";
    case ErrorCode::UnknownDtype:
        return "unknown-dtype";
    case ErrorCode::BadOffsets:
        return "bad-offsets";
    case ErrorCode::OverlappingOffsets:
        return "overlapping-offsets";
    case ErrorCode::OffsetOutOfRange:
        return "offset-out-of-range";
    case ErrorCode::MissingTensor:
        return "missing-tensor";
    case ErrorCode::UnexpectedTensor:
        return "unexpected-tensor";
    case ErrorCode::TensorShapeMismatch:
        return "tensor-shape-mismatch";
    case ErrorCode::BadConfig:
        return "bad-config";
    case ErrorCode::ConfigMismatch:
        return "config-mismatch";
    case ErrorCode::TokenizerInvalid:
        return "tokenizer-invalid";
    case ErrorCode::TokenizerMismatch:
        return "tokenizer-mismatch";
    case ErrorCode::PeerFailed:
        return "peer-failed";
    case ErrorCode::StateCorrupt:
        return "state-corrupt";
    case ErrorCode::StateMismatch:
        return "state-mismatch";
    case ErrorCode::StateVersion:
        return "state-version";
    case ErrorCode::BookInvalid:
        return "book-invalid";
    case ErrorCode::BookDrm:
        return "book-drm";
    }
    return "unknown";
}

} // namespace baton::engine
