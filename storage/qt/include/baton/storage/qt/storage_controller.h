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
#include <utility>
#include <vector>

Q_DECLARE_METATYPE(baton::storage::Story)
Q_DECLARE_METATYPE(baton::storage::Passage)
Q_DECLARE_METATYPE(baton::storage::StorageError)
Q_DECLARE_METATYPE(std::vector<baton::storage::Story>)
Q_DECLARE_METATYPE(std::vector<baton::storage::Passage>)

namespace baton::storage {

// The fields of a story to change (the others stay as they are).
struct StoryChange {
    std::optional<std::string> title;
    std::optional<StoryMode> mode;
    std::optional<std::string> modelPath;
    std::optional<std::string> settingsJson;
    std::optional<std::string> memory;
    std::optional<std::string> authorsNote;
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

    // For the About box: the SQLite library's version, and the schema this build writes.
    static std::string sqliteVersion();
    static int schemaVersion();

    quint64 open(const QString& path);
    quint64 listStories();
    // With text: the story's first passage (the user's), in the same transaction.
    quint64 createStory(const Story& story, const std::string& text = {});
    // The story and its current path.
    quint64 loadStory(qint64 storyId);
    // Changes the fields the change sets, leaving the rest as the database has them
    // (answered by storyUpdated).
    quint64 updateStory(qint64 storyId, const StoryChange& change);
    // Deletes the story with its passages and states.
    quint64 deleteStory(qint64 storyId);
    // Appends the user's text under the current leaf, made current.
    quint64 appendPassage(qint64 storyId, const std::string& text, PassageAuthor author);
    // Replaces a passage's text (its states and its descendants' are deleted). With
    // `replaced`, what the edit replaced is kept there, on the storage thread, for
    // undoEdit (which, queued after it, always finds it filled).
    quint64 editPassage(qint64 passageId, const std::string& text,
                        std::shared_ptr<ReplacedPassage> replaced = {});
    // Takes an edit back, states included (StoryStore::undoEdit; answered by
    // passageEdited).
    quint64 undoEdit(std::shared_ptr<const ReplacedPassage> replaced);
    // Makes passageId (0 = none: the next append adds a new root) the current leaf.
    quint64 setCurrentPassage(qint64 storyId, qint64 passageId);
    // Answered (flushed) once every earlier request has been answered (and its writes
    // committed).
    quint64 flush();

    // The requests below answer through callbacks on this controller's thread, in
    // request order with the signals; neither is called when `context` is gone by then.
    // An error also emits failed().
    template <typename T>
    using Done = std::function<void(T)>;
    using Failed = std::function<void(const StorageError&)>;

    // Stories
    quint64 currentPath(qint64 storyId, QObject* context, Done<std::vector<Passage>> done,
                        Failed failedWith = {});
    quint64 allPassages(qint64 storyId, QObject* context, Done<std::vector<Passage>> done,
                        Failed failedWith = {});
    // A passage as saved and the token alternatives recorded with it (TokenChoiceStore:
    // an empty blob when none were).
    quint64 tokenChoices(qint64 passageId, QObject* context,
                         Done<std::pair<Passage, std::vector<uint8_t>>> done,
                         Failed failedWith = {});
    // Ids of the stories whose title or any passage contains `text` (StoryStore::search).
    quint64 searchStories(const std::string& text, QObject* context,
                          Done<std::vector<int64_t>> done, Failed failedWith = {});
    quint64 duplicateStory(qint64 storyId, const std::string& title, QObject* context,
                           Done<int64_t> done, Failed failedWith = {});
    // Models: registers the bundled folders that are missing (the first becomes the
    // default when there is none), then lists every registered model.
    quint64 listModels(const std::vector<std::string>& bundledPaths, QObject* context,
                       Done<std::vector<RegisteredModel>> done, Failed failedWith = {});
    // Registers a folder (model.path), or updates its name, checksum and configJson
    // when it is registered already (its default mark stays); its id.
    quint64 registerModel(const RegisteredModel& model, QObject* context, Done<int64_t> done,
                          Failed failedWith = {});
    quint64 setDefaultModel(qint64 modelId, QObject* context, Done<bool> done,
                            Failed failedWith = {});
    quint64 removeModel(qint64 modelId, QObject* context, Done<bool> done, Failed failedWith = {});
    // Evaluation results
    quint64 addEvalResult(const EvalResult& result, QObject* context, Done<int64_t> done,
                          Failed failedWith = {});
    quint64 listEvalResults(QObject* context, Done<std::vector<EvalResult>> done,
                            Failed failedWith = {});
    // Books: listed without their texts; bookTexts gives them with their texts (every
    // book when ids is empty).
    quint64 listBooks(QObject* context, Done<std::vector<Book>> done, Failed failedWith = {});
    quint64 bookTexts(const std::vector<int64_t>& ids, QObject* context,
                      Done<std::vector<Book>> done, Failed failedWith = {});
    quint64 addBooks(const std::vector<Book>& books, QObject* context, Done<bool> done,
                     Failed failedWith = {});
    quint64 removeBooks(const std::vector<int64_t>& ids, QObject* context, Done<bool> done,
                        Failed failedWith = {});
    // Training runs
    quint64 listRuns(QObject* context, Done<std::vector<TrainingRun>> done, Failed failedWith = {});
    quint64 createRun(const TrainingRun& run, QObject* context, Done<int64_t> done,
                      Failed failedWith = {});
    // Marks the run running again and gives its metrics so far (a resumed run).
    quint64 resumeRun(qint64 runId, QObject* context, Done<std::vector<MetricPoint>> done,
                      Failed failedWith = {});
    quint64 addMetrics(const std::vector<MetricPoint>& points, QObject* context, Done<bool> done,
                       Failed failedWith = {});
    // The last metrics, the finished model's folder (when there is one) and the status.
    quint64 finishRun(qint64 runId, const std::vector<MetricPoint>& points,
                      const std::string& checkpoint, RunStatus status, const std::string& message,
                      QObject* context, Done<bool> done, Failed failedWith = {});
    // World info (lore_store.h): a story's entries in the order they are placed; an
    // entry saved (added when its id is 0, else rewritten), answered with its id.
    quint64 listLore(qint64 storyId, QObject* context, Done<std::vector<LoreEntry>> done,
                     Failed failedWith = {});
    quint64 saveLore(const LoreEntry& entry, QObject* context, Done<int64_t> done,
                     Failed failedWith = {});
    quint64 removeLore(qint64 entryId, QObject* context, Done<bool> done, Failed failedWith = {});
    // Topic models
    quint64 listTopicModels(QObject* context, Done<std::vector<TopicModelRecord>> done,
                            Failed failedWith = {});
    quint64 registerTopicModel(const TopicModelRecord& record, QObject* context, Done<int64_t> done,
                               Failed failedWith = {});

Q_SIGNALS:
    void opened(quint64 request, int schemaVersion);
    // While open() indexes passages for recall (after the migration that adds the index,
    // or after an older build wrote): passages done of total. Closing stops the pass;
    // the rest is indexed at the next open.
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
    // A request answered through callbacks (storage_requests.cpp).
    template <typename T>
    quint64 request(bool write, std::function<Result<T>(Database&)> body, QObject* context,
                    Done<T> done, Failed failedWith);

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
