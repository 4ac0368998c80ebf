// RAII transaction: rolls back unless commit() was called. The outermost one is
// BEGIN IMMEDIATE (takes the write lock at once, so a busy database fails here and
// not half-way); nested ones are savepoints, so stores can be grouped by callers.
#pragma once

#include <string>

namespace baton::storage {

class Connection;

class Transaction {
public:
    explicit Transaction(Connection& connection); // throws SqliteException
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    void commit(); // throws SqliteException; the transaction is rolled back then

private:
    Connection& m_connection;
    std::string m_savepoint; // empty for the outermost transaction
    bool m_done = false;
};

} // namespace baton::storage
