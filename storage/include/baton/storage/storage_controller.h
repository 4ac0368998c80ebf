// The storage's QtCore facade for the GUI: a storage thread with its own
// connection. Every request returns an id at once; its answer arrives later as a
// queued signal (on the controller's thread) carrying value types. Writes that are
// queued together run in one transaction, each inside its own savepoint, so one
// failing write does not undo the others; answers are sent only after the commit.
// Requests run in the order they were made.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <QObject>
#include <QString>
#include <QThread>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

Q_DECLARE_METATYPE(baton::storage::Story)
Q_DECLARE_METATYPE(baton::storage::Passage)
Q_DECLARE_METATYPE(baton::storage::StorageError)
Q_DECLARE_METATYPE(std::vector<baton::storage::Story>)
Q_DECLARE_METATYPE(std::vector<baton::storage::Passage>)

namespace baton::storage {

class Database;
class StorageWorker;
struct JobQueue;

class StorageController : public QObject {
    Q_OBJECT
public:
    explicit StorageController(QObject* parent = nullptr);
    // Answers every queued request, closes the database and stops the thread.
    ~StorageController() override;

    quint64 open(const QString& path);
    quint64 listStories();
    quint64 createStory(const Story& story);
    // The story and its current path.
    quint64 loadStory(qint64 storyId);
    // Appends text under the current leaf (made current) and, when given, saves
    // the state for the new passage: both in the same transaction.
    quint64 appendPassage(qint64 storyId, const std::string& text, PassageAuthor author,
                          const std::optional<StoredState>& state = std::nullopt);
    quint64 editPassage(qint64 passageId, const std::string& text);
    // Answered (flushed) once every earlier request has been answered.
    quint64 flush();

Q_SIGNALS:
    void opened(quint64 request, int schemaVersion);
    void storiesListed(quint64 request, std::vector<baton::storage::Story> stories);
    void storyCreated(quint64 request, qint64 storyId);
    void storyLoaded(quint64 request, baton::storage::Story story,
                     std::vector<baton::storage::Passage> path);
    void passageAppended(quint64 request, qint64 passageId);
    void passageEdited(quint64 request, qint64 statesInvalidated);
    void flushed(quint64 request);
    // A request failed: nothing of it was written. The caller still holds its data.
    void failed(quint64 request, baton::storage::StorageError error);
    // Diagnostics: a group of `writes` write requests was committed in one transaction.
    void writesCommitted(int writes);

private:
    void connectWorker();
    // body runs on the storage thread and returns the closure that emits the answer.
    quint64 post(bool write, std::function<Result<std::function<void()>>(Database*, quint64)> body);

    QThread m_thread;
    StorageWorker* m_worker = nullptr; // lives on m_thread
    std::shared_ptr<JobQueue> m_queue;
    quint64 m_nextId = 1;
};

} // namespace baton::storage
