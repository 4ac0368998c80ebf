// RAII over sqlite3_stmt*: bind by index (1-based) or name (":name"), step, typed
// column reads (0-based), reset for reuse.
#pragma once

#include "sqlite_error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace baton::storage {

class Statement {
public:
    Statement(sqlite3* db, const std::string& sql); // throws SqliteException
    ~Statement();
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int index, int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view text);
    Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Statement& bind(int index, const std::string& text) {
        return bind(index, std::string_view(text));
    }
    Statement& bindBlob(int index, const void* data, size_t size);
    Statement& bindNull(int index);
    // 0 binds NULL (for optional foreign keys).
    Statement& bindId(int index, int64_t id);
    template <typename V>
    Statement& bind(const char* name, V&& value) {
        return bind(parameterIndex(name), std::forward<V>(value));
    }
    int parameterIndex(const char* name) const; // throws when the SQL has no such name

    // Returns true for a row, false when done. Throws on error.
    bool step();
    // step() that must finish without a row (INSERT, UPDATE, DELETE).
    void run();
    void reset(); // ready to run again; bindings are kept

    bool isNull(int column) const;
    int64_t columnInt(int column) const;
    double columnDouble(int column) const;
    std::string columnText(int column) const;
    std::vector<uint8_t> columnBlob(int column) const;
    int64_t columnBytes(int column) const;

private:
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_stmt = nullptr;
    std::string m_sql;
};

} // namespace baton::storage
