// Turns the engine's and the storage's error codes into words for a person: a short
// explanation of what it means and what to do, with the technical detail apart.
#pragma once

#include <baton/engine/error.h>
#include <baton/storage/error.h>

#include <QMetaType>
#include <QString>

namespace baton::ui {

struct ErrorText {
    QString message; // what happened and what to do, for a person
    QString detail;  // the technical detail (code name, SQLite's or the engine's message)
};

ErrorText describeStorageError(const storage::StorageError& error);
ErrorText describeEngineError(const engine::Error& error);

} // namespace baton::ui
Q_DECLARE_METATYPE(baton::ui::ErrorText)
