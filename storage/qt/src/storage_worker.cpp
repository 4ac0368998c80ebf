#include "storage_worker.h"

#include "connection.h"
#include "transaction.h"

#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

namespace baton::storage {

StorageWorker::StorageWorker(std::shared_ptr<JobQueue> queue)
    : m_queue(std::move(queue)) {}

StorageWorker::~StorageWorker() = default;

void StorageWorker::drain() {
    std::deque<Job> jobs;
    {
        std::lock_guard<std::mutex> lock(m_queue->mutex);
        jobs.swap(m_queue->jobs);
    }
    size_t i = 0;
    while (i < jobs.size()) {
        if (!jobs[i].write || !m_db) {
            // Reads, and everything before the database is open, run alone.
            Result<Answer> r = jobs[i].body(m_db.get());
            if (r)
                (*r)();
            else
                Q_EMIT failed(jobs[i].id, r.error());
            ++i;
            continue;
        }
        size_t end = i;
        while (end < jobs.size() && jobs[end].write)
            ++end;
        std::vector<Result<Answer>> results;
        std::optional<StorageError> commitError;
        try {
            Transaction group(connectionOf(*m_db));
            for (size_t k = i; k < end; ++k) {
                // Each job in its own savepoint: a failure undoes only that job.
                Transaction one(connectionOf(*m_db));
                Result<Answer> r = jobs[k].body(m_db.get());
                if (r) {
                    one.commit();
                } else if (!connectionOf(*m_db).inTransaction()) {
                    // SQLite rolled back the whole group (it may on SQLITE_FULL):
                    // none of the group's writes is on disk.
                    commitError = r.error();
                    break;
                }
                results.push_back(std::move(r));
            }
            if (!commitError)
                group.commit();
        } catch (const SqliteException& e) {
            commitError = e.error();
        }
        for (size_t k = i; k < end; ++k) {
            if (commitError)
                Q_EMIT failed(jobs[k].id, *commitError);
            else if (results[k - i])
                (*results[k - i])();
            else
                Q_EMIT failed(jobs[k].id, results[k - i].error());
        }
        if (!commitError)
            Q_EMIT writesCommitted(static_cast<int>(end - i));
        i = end;
    }
}

void StorageWorker::shutdown() {
    drain();
    m_db.reset();
}

} // namespace baton::storage
