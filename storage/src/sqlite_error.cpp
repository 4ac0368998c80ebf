#include "sqlite_error.h"

#include <sqlite3.h>

namespace baton::storage {

StorageErrorCode codeForSqlite(int rc) {
    switch (rc & 0xFF) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return StorageErrorCode::Corrupt;
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return StorageErrorCode::ReadOnly;
    case SQLITE_FULL:
        return StorageErrorCode::DiskFull;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return StorageErrorCode::Busy;
    case SQLITE_CONSTRAINT:
        return StorageErrorCode::Constraint;
    case SQLITE_CANTOPEN:
        return StorageErrorCode::CannotOpen;
    case SQLITE_IOERR:
        return StorageErrorCode::Io;
    case SQLITE_NOMEM:
    case SQLITE_MISUSE:
    case SQLITE_ERROR:
    case SQLITE_RANGE:
    default:
        return StorageErrorCode::Internal;
    }
}

namespace {

std::string messageFor(StorageErrorCode code) {
    switch (code) {
    case StorageErrorCode::Corrupt:
        return "the database file is damaged";
    case StorageErrorCode::ReadOnly:
        return "the database cannot be written: the file or its folder is read-only";
    case StorageErrorCode::DiskFull:
        return "the disk is full: nothing was saved by this change";
    case StorageErrorCode::Busy:
        return "the database is busy in another program";
    case StorageErrorCode::Constraint:
        return "the change breaks a rule of the database (a missing or duplicate entry)";
    case StorageErrorCode::CannotOpen:
        return "the database file cannot be opened";
    case StorageErrorCode::Io:
        return "reading or writing the database failed";
    default:
        return "an internal storage error";
    }
}

} // namespace

StorageError sqliteError(sqlite3* db, int rc, const std::string& what) {
    const StorageErrorCode code = codeForSqlite(rc);
    std::string detail = "sqlite " + std::to_string(rc) + " (" + sqlite3_errstr(rc) + ")";
    if (db) {
        detail += ": ";
        detail += sqlite3_errmsg(db);
        if (const char* file = sqlite3_db_filename(db, "main"); file && *file)
            detail += std::string(" [") + file + "]";
    }
    if (!what.empty())
        detail += " in: " + what;
    return makeStorageError(code, messageFor(code), detail);
}

void throwSqlite(sqlite3* db, int rc, const std::string& what) {
    throw SqliteException(sqliteError(db, rc, what), rc);
}

} // namespace baton::storage
