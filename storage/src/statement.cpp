#include "statement.h"

#include <sqlite3.h>

#include <cstring>

namespace baton::storage {

Statement::Statement(sqlite3* db, const std::string& sql)
    : m_db(db)
    , m_sql(sql) {
    const int rc =
        sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &m_stmt, nullptr);
    if (rc != SQLITE_OK)
        throwSqlite(db, rc, "prepare " + sql.substr(0, 200));
}

Statement::~Statement() {
    sqlite3_finalize(m_stmt);
}

Statement::Statement(Statement&& other) noexcept
    : m_db(other.m_db)
    , m_stmt(other.m_stmt)
    , m_sql(std::move(other.m_sql)) {
    other.m_stmt = nullptr;
}

namespace {
void checkBind(sqlite3* db, int rc, const std::string& sql) {
    if (rc != SQLITE_OK)
        throwSqlite(db, rc, "bind " + sql.substr(0, 200));
}
} // namespace

Statement& Statement::bind(int index, int64_t value) {
    checkBind(m_db, sqlite3_bind_int64(m_stmt, index, value), m_sql);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    checkBind(m_db, sqlite3_bind_double(m_stmt, index, value), m_sql);
    return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
    checkBind(
        m_db,
        sqlite3_bind_text64(m_stmt, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
        m_sql);
    return *this;
}

Statement& Statement::bindBlob(int index, const void* data, size_t size) {
    // A zero-length blob is still a blob, not NULL.
    checkBind(m_db,
              size == 0 ? sqlite3_bind_zeroblob(m_stmt, index, 0)
                        : sqlite3_bind_blob64(m_stmt, index, data, size, SQLITE_TRANSIENT),
              m_sql);
    return *this;
}

Statement& Statement::bindNull(int index) {
    checkBind(m_db, sqlite3_bind_null(m_stmt, index), m_sql);
    return *this;
}

Statement& Statement::bindId(int index, int64_t id) {
    return id == 0 ? bindNull(index) : bind(index, id);
}

int Statement::parameterIndex(const char* name) const {
    const int i = sqlite3_bind_parameter_index(m_stmt, name);
    if (i == 0)
        throw SqliteException(
            makeStorageError(StorageErrorCode::Internal, "an internal storage error",
                             std::string("no parameter ") + name + " in " + m_sql.substr(0, 200)));
    return i;
}

bool Statement::step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    StorageError e = sqliteError(m_db, rc, m_sql.substr(0, 200));
    sqlite3_reset(m_stmt);
    throw SqliteException(std::move(e), rc);
}

void Statement::run() {
    if (step()) {
        sqlite3_reset(m_stmt);
        throw SqliteException(makeStorageError(StorageErrorCode::Internal,
                                               "an internal storage error",
                                               "statement returned a row: " + m_sql));
    }
    sqlite3_reset(m_stmt);
}

void Statement::reset() {
    sqlite3_reset(m_stmt);
}

bool Statement::isNull(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

int64_t Statement::columnInt(int column) const {
    return sqlite3_column_int64(m_stmt, column);
}

double Statement::columnDouble(int column) const {
    return sqlite3_column_double(m_stmt, column);
}

std::string Statement::columnText(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    const int n = sqlite3_column_bytes(m_stmt, column);
    return p ? std::string(p, static_cast<size_t>(n)) : std::string();
}

std::vector<uint8_t> Statement::columnBlob(int column) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(m_stmt, column));
    const int n = sqlite3_column_bytes(m_stmt, column);
    return p ? std::vector<uint8_t>(p, p + n) : std::vector<uint8_t>();
}

int64_t Statement::columnBytes(int column) const {
    return sqlite3_column_bytes(m_stmt, column);
}

} // namespace baton::storage
