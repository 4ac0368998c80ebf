#include "transaction.h"

#include "connection.h"

#include <atomic>

namespace baton::storage {

Transaction::Transaction(Connection& connection)
    : m_connection(connection) {
    if (m_connection.inTransaction()) {
        static std::atomic<uint64_t> counter{0};
        m_savepoint = "sp" + std::to_string(++counter);
        m_connection.exec("SAVEPOINT " + m_savepoint);
    } else {
        m_connection.exec("BEGIN IMMEDIATE");
    }
}

Transaction::~Transaction() {
    if (m_done)
        return;
    try {
        if (m_savepoint.empty()) {
            if (m_connection.inTransaction()) // SQLite may have rolled back already (SQLITE_FULL)
                m_connection.exec("ROLLBACK");
        } else if (m_connection.inTransaction()) {
            m_connection.exec("ROLLBACK TO " + m_savepoint + "; RELEASE " + m_savepoint);
        }
    } catch (const SqliteException&) {
        // Nothing more can be done in a destructor; the connection stays usable or
        // reports its error on the next statement.
    }
}

void Transaction::commit() {
    if (m_savepoint.empty())
        m_connection.exec("COMMIT");
    else
        m_connection.exec("RELEASE " + m_savepoint);
    m_done = true;
}

} // namespace baton::storage
