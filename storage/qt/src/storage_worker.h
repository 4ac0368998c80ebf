// The storage thread's side of StorageController: owns the Database (and so its
// own SQLite connection), runs queued jobs, groups consecutive writes into one
// transaction and emits the answers after the commit.
#pragma once

#include <baton/storage/database.h>
#include <baton/storage/qt/storage_controller.h>

#include <QObject>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace baton::storage {

// A job computes its answer on the storage thread and returns the closure that
// emits it (run after the commit), or an error.
using Answer = std::function<void()>;
using JobBody = std::function<Result<Answer>(Database*)>;

struct Job {
    quint64 id = 0;
    bool write = false;
    JobBody body;
};

struct JobQueue {
    std::mutex mutex;
    std::deque<Job> jobs;
    std::atomic<bool> closing{false}; // the controller is going: long passes stop early
};

class StorageWorker : public QObject {
    Q_OBJECT
public:
    explicit StorageWorker(std::shared_ptr<JobQueue> queue);
    ~StorageWorker() override;

    std::unique_ptr<Database>& database() { return m_db; }

public Q_SLOTS:
    void drain();
    void shutdown(); // drains, then closes the database

Q_SIGNALS:
    void opened(quint64 request, int schemaVersion);
    void indexing(quint64 request, qint64 done, qint64 total);
    void storiesListed(quint64 request, std::vector<baton::storage::Story> stories);
    void storyCreated(quint64 request, qint64 storyId);
    void storyLoaded(quint64 request, baton::storage::Story story,
                     std::vector<baton::storage::Passage> path);
    void passageAppended(quint64 request, qint64 passageId);
    void storyUpdated(quint64 request, qint64 storyId);
    void storyDeleted(quint64 request, qint64 storyId);
    void passageEdited(quint64 request, qint64 statesInvalidated);
    void currentPassageSet(quint64 request, qint64 storyId, qint64 passageId);
    void flushed(quint64 request);
    void failed(quint64 request, baton::storage::StorageError error);
    void writesCommitted(int writes);

private:
    std::shared_ptr<JobQueue> m_queue;
    std::unique_ptr<Database> m_db;
};

} // namespace baton::storage
