// The storage's QtCore facade for the GUI: a storage thread with its own
// connection. Every request returns an id at once; its answer arrives later as a
// queued signal (on the controller's thread) carrying value types. Writes that are
// queued together run in one transaction, each inside its own savepoint, so one
// failing write does not undo the others; answers are sent only after the commit.
// Requests run in the order they were made.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <QHash>
#include <QObject>
#include <QPointer>
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

// Where a generation continues on a story's current path: the path, and the deepest
// saved state on it for the model, T, o and state format asked for (none when
// state.passageId is 0). The text to encode after the state is that of the passages
// after state.passageId (the whole path without a state).
struct ResumePoint {
    std::vector<Passage> path;
    StoredState state;
    bool hasState() const { return state.passageId != 0; }
    // The text of the path after the state's passage (all of it without a state).
    std::string textAfterState() const;
};

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
    // Changes the title (answered by storyUpdated).
    quint64 renameStory(qint64 storyId, const std::string& title);
    // Changes the generation settings JSON (answered by storyUpdated).
    quint64 setStorySettings(qint64 storyId, const std::string& settingsJson);
    // Deletes the story with its passages and states.
    quint64 deleteStory(qint64 storyId);
    // Appends text under the current leaf (made current) and, when given, saves
    // the state for the new passage: both in the same transaction. With
    // pruneAncestorStates, the states of the ancestors in the same window are then
    // deleted (StateStore::pruneAncestors: one state per window on a path, branch
    // points keep theirs), as generated chunks are saved.
    quint64 appendPassage(qint64 storyId, const std::string& text, PassageAuthor author,
                          const std::optional<StoredState>& state = std::nullopt,
                          bool pruneAncestorStates = false);
    quint64 editPassage(qint64 passageId, const std::string& text);
    // Makes passageId (0 = none: the next append adds a new root) the current leaf.
    quint64 setCurrentPassage(qint64 storyId, qint64 passageId);
    // The current path and the latest state on it that matches the model identity,
    // T, o and state format version (StateStore::latestOnPath).
    quint64 resumePoint(qint64 storyId, const std::string& modelIdentity, int window, int overlap,
                        int formatVersion);
    // Answered (flushed) once every earlier request has been answered.
    quint64 flush();

    // Any other request: `body` runs on the storage thread with the open database (a
    // write joins the queued writes' transaction, in its own savepoint), and `done`
    // then receives its value on this controller's thread, in request order with the
    // other answers. An error (or no open database) is answered by failed() and, when
    // given, by `failedWith` on this thread. Neither callback is called when `context`
    // is gone by then. The stores are plain C++ (story_store.h, model_store.h, ...):
    // the panels use them through this.
    template <typename T>
    quint64 call(bool write, std::function<Result<T>(Database&)> body, QObject* context,
                 std::function<void(T)> done,
                 std::function<void(const StorageError&)> failedWith = {}) {
        QPointer<QObject> guard(context);
        const quint64 id = m_nextId; // the id post() gives this request
        if (failedWith)
            m_errorHandlers.insert(id, ErrorHandler{guard, std::move(failedWith)});
        const quint64 posted =
            post(write,
                 [this, id, body = std::move(body), guard,
                  done = std::move(done)](Database* db, quint64) -> Result<Answer> {
                     if (!db)
                         return notOpenError();
                     Result<T> r = body(*db);
                     if (!r)
                         return r.error();
                     return Answer([this, id, guard, done, v = std::move(*r)]() mutable {
                         deliver([this, id, guard, done, v = std::move(v)]() mutable {
                             m_errorHandlers.remove(id);
                             if (guard)
                                 done(std::move(v));
                         });
                     });
                 });
        Q_ASSERT(posted == id);
        return posted;
    }

Q_SIGNALS:
    void opened(quint64 request, int schemaVersion);
    void storiesListed(quint64 request, std::vector<baton::storage::Story> stories);
    void storyCreated(quint64 request, qint64 storyId);
    void storyLoaded(quint64 request, baton::storage::Story story,
                     std::vector<baton::storage::Passage> path);
    void passageAppended(quint64 request, qint64 passageId);
    void storyUpdated(quint64 request, qint64 storyId);
    void storyDeleted(quint64 request, qint64 storyId);
    void passageEdited(quint64 request, qint64 statesInvalidated);
    void currentPassageSet(quint64 request, qint64 storyId, qint64 passageId);
    void resumePointReady(quint64 request, qint64 storyId, baton::storage::ResumePoint point);
    void flushed(quint64 request);
    // A request failed: nothing of it was written. The caller still holds its data.
    void failed(quint64 request, baton::storage::StorageError error);
    // Diagnostics: a group of `writes` write requests was committed in one transaction.
    void writesCommitted(int writes);

private:
    using Answer = std::function<void()>;
    void connectWorker();
    // body runs on the storage thread and returns the closure that emits the answer.
    quint64 post(bool write, std::function<Result<Answer>(Database*, quint64)> body);
    // Called on the storage thread: runs f on this controller's thread (queued, so
    // after the answers emitted before it).
    void deliver(std::function<void()> f);
    static StorageError notOpenError();

    struct ErrorHandler {
        QPointer<QObject> context;
        std::function<void(const StorageError&)> handle;
    };
    QHash<quint64, ErrorHandler> m_errorHandlers; // call()s with failedWith, until answered

    QThread m_thread;
    StorageWorker* m_worker = nullptr; // lives on m_thread
    std::shared_ptr<JobQueue> m_queue;
    quint64 m_nextId = 1;
};

} // namespace baton::storage

Q_DECLARE_METATYPE(baton::storage::ResumePoint)
