#include "error_text.h"

#include <QObject>

namespace baton::ui {

ErrorText describeStorageError(const storage::StorageError& error) {
    using storage::StorageErrorCode;
    QString words;
    switch (error.code) {
    case StorageErrorCode::Corrupt:
        words = QObject::tr("The database file is damaged or is not a Baton database. It was "
                            "left untouched.");
        break;
    case StorageErrorCode::TooNew:
        words = QObject::tr("The database was written by a newer version of Baton. Update Baton "
                            "to open it; this version leaves it untouched.");
        break;
    case StorageErrorCode::ReadOnly:
        words = QObject::tr("The database file or its folder cannot be written. Check the "
                            "permissions, or open another file with --db.");
        break;
    case StorageErrorCode::DiskFull:
        words = QObject::tr("The disk is full. Free some space and try again.");
        break;
    case StorageErrorCode::Busy:
        words = QObject::tr("Another program is writing to the database. Close it and try "
                            "again.");
        break;
    case StorageErrorCode::NotFound:
        words = QObject::tr("It no longer exists in the database.");
        break;
    case StorageErrorCode::CannotOpen:
        words = QObject::tr("The database file cannot be opened: a missing folder, or no "
                            "permission.");
        break;
    default:
        break;
    }
    const QString message = QString::fromStdString(error.message);
    ErrorText t;
    t.message = words.isEmpty() ? message : words;
    t.detail = QStringLiteral("%1 [%2]").arg(
        message, QString::fromUtf8(storage::storageErrorCodeName(error.code)));
    if (!error.detail.empty())
        t.detail += QStringLiteral("\n") + QString::fromStdString(error.detail);
    return t;
}

ErrorText describeEngineError(const engine::Error& error) {
    using engine::ErrorCode;
    QString words;
    switch (error.code) {
    case ErrorCode::FileNotFound:
        words = QObject::tr("A file the model needs is missing. A model folder holds "
                            "config.json, model.safetensors, and vocab.json with merges.txt "
                            "(or tokenizer.model).");
        break;
    case ErrorCode::PickleRefused:
        words = QObject::tr("The model is saved as a pickled .bin file, which Baton refuses "
                            "(unpickling can run code). Convert it to model.safetensors.");
        break;
    case ErrorCode::OutOfMemory:
        words = QObject::tr("There is not enough memory for this model.");
        break;
    case ErrorCode::TokenizerInvalid:
    case ErrorCode::TokenizerMismatch:
        words = QObject::tr("The model's tokenizer is missing, damaged or does not match the "
                            "model.");
        break;
    case ErrorCode::StateCorrupt:
    case ErrorCode::StateMismatch:
    case ErrorCode::StateVersion:
        words = QObject::tr("A saved state of this story cannot be used with this model or "
                            "these window settings.");
        break;
    case ErrorCode::InvalidArgument:
        words =
            QObject::tr("A setting is out of range: %1").arg(QString::fromStdString(error.message));
        break;
    default:
        if (error.code >= ErrorCode::PickleRefused && error.code <= ErrorCode::ConfigMismatch)
            words = QObject::tr("The model's files are damaged or are not a GPT-2 checkpoint "
                                "Baton can read.");
        break;
    }
    const QString message = QString::fromStdString(error.message);
    ErrorText t;
    t.message = words.isEmpty() ? message : words;
    t.detail = QStringLiteral("%1 [%2]").arg(message,
                                             QString::fromUtf8(engine::errorCodeName(error.code)));
    return t;
}

} // namespace baton::ui
