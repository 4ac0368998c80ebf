#include <baton/storage/qt/storage_controller.h>

#include "storage_worker.h"

#include <baton/storage/story_store.h>

namespace baton::storage {

StorageController::StorageController(QObject* parent)
    : QObject(parent)
    , m_queue(std::make_shared<JobQueue>()) {
    qRegisterMetaType<Story>();
    qRegisterMetaType<Passage>();
    qRegisterMetaType<StorageError>();
    qRegisterMetaType<std::vector<Story>>();
    qRegisterMetaType<std::vector<Passage>>();
    m_thread.setObjectName(QStringLiteral("storage"));
    m_worker = new StorageWorker(m_queue);
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connectWorker();
    m_thread.start();
}

StorageController::~StorageController() {
    // Queued jobs are answered (their signals may no longer reach anyone), then the
    // database is closed on its own thread. An open that is indexing stops at its batch.
    m_queue->closing = true;
    QMetaObject::invokeMethod(m_worker, "shutdown", Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

void StorageController::connectWorker() {
    const auto q = Qt::QueuedConnection;
    connect(m_worker, &StorageWorker::opened, this, &StorageController::opened, q);
    connect(m_worker, &StorageWorker::indexing, this, &StorageController::indexing, q);
    connect(m_worker, &StorageWorker::storiesListed, this, &StorageController::storiesListed, q);
    connect(m_worker, &StorageWorker::storyCreated, this, &StorageController::storyCreated, q);
    connect(m_worker, &StorageWorker::storyLoaded, this, &StorageController::storyLoaded, q);
    connect(m_worker, &StorageWorker::passageAppended, this, &StorageController::passageAppended,
            q);
    connect(m_worker, &StorageWorker::passageEdited, this, &StorageController::passageEdited, q);
    connect(m_worker, &StorageWorker::storyUpdated, this, &StorageController::storyUpdated, q);
    connect(m_worker, &StorageWorker::storyDeleted, this, &StorageController::storyDeleted, q);
    connect(m_worker, &StorageWorker::currentPassageSet, this,
            &StorageController::currentPassageSet, q);
    connect(m_worker, &StorageWorker::flushed, this, &StorageController::flushed, q);
    connect(m_worker, &StorageWorker::failed, this, &StorageController::failed, q);
    // call()'s error callbacks, on this thread after failed() has been emitted.
    connect(this, &StorageController::failed, this,
            [this](quint64 request, const StorageError& error) {
                const auto it = m_errorHandlers.find(request);
                if (it == m_errorHandlers.end())
                    return;
                const ErrorHandler handler = it.value();
                m_errorHandlers.erase(it);
                if (handler.context)
                    handler.handle(error);
            });
    connect(m_worker, &StorageWorker::writesCommitted, this, &StorageController::writesCommitted,
            q);
}

quint64
StorageController::post(bool write,
                        std::function<Result<std::function<void()>>(Database*, quint64)> body) {
    const quint64 id = m_nextId++;
    bool wake = false;
    {
        std::lock_guard<std::mutex> lock(m_queue->mutex);
        wake = m_queue->jobs.empty();
        m_queue->jobs.push_back(
            Job{id, write, [body = std::move(body), id](Database* db) { return body(db, id); }});
    }
    if (wake)
        QMetaObject::invokeMethod(m_worker, "drain", Qt::QueuedConnection);
    return id;
}

namespace {
StorageError notOpen() {
    return makeStorageError(StorageErrorCode::InvalidArgument, "no database is open");
}
} // namespace

StorageError StorageController::notOpenError() {
    return notOpen();
}

void StorageController::deliver(std::function<void()> f) {
    QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection);
}

std::string StorageController::sqliteVersion() {
    return storage::sqliteVersion();
}

int StorageController::schemaVersion() {
    return currentSchemaVersion();
}

quint64 StorageController::open(const QString& path) {
    StorageWorker* w = m_worker;
    const std::string p = path.toStdString();
    return post(
        false, [w, p, queue = m_queue](Database*, quint64 id) -> Result<std::function<void()>> {
            OpenOptions options;
            options.indexProgress = [w, id, queue](int64_t done, int64_t total) {
                Q_EMIT w->indexing(id, done, total);
                return !queue->closing;
            };
            auto db = Database::open(p, options);
            if (!db)
                return db.error();
            const int version = (*db)->schemaVersion();
            w->database() = std::move(*db);
            return std::function<void()>([w, id, version] { Q_EMIT w->opened(id, version); });
        });
}

quint64 StorageController::listStories() {
    StorageWorker* w = m_worker;
    return post(false, [w](Database* db, quint64 id) -> Result<std::function<void()>> {
        if (!db)
            return notOpen();
        auto list = db->stories().list();
        if (!list)
            return list.error();
        return std::function<void()>(
            [w, id, v = std::move(*list)] { Q_EMIT w->storiesListed(id, v); });
    });
}

quint64 StorageController::createStory(const Story& story, const std::string& text) {
    StorageWorker* w = m_worker;
    return post(true, [w, story, text](Database* db, quint64 id) -> Result<std::function<void()>> {
        if (!db)
            return notOpen();
        int64_t created = 0;
        auto r = db->transaction([&]() -> Result<void> {
            auto s = db->stories().create(story);
            if (!s)
                return s.error();
            created = *s;
            if (!text.empty())
                if (auto p = db->stories().append(created, text, PassageAuthor::User); !p)
                    return p.error();
            return {};
        });
        if (!r)
            return r.error();
        return std::function<void()>([w, id, created] { Q_EMIT w->storyCreated(id, created); });
    });
}

quint64 StorageController::loadStory(qint64 storyId) {
    StorageWorker* w = m_worker;
    return post(false, [w, storyId](Database* db, quint64 id) -> Result<std::function<void()>> {
        if (!db)
            return notOpen();
        auto story = db->stories().get(storyId);
        if (!story)
            return story.error();
        auto path = db->stories().currentPath(storyId);
        if (!path)
            return path.error();
        return std::function<void()>([w, id, s = std::move(*story), p = std::move(*path)] {
            Q_EMIT w->storyLoaded(id, s, p);
        });
    });
}

namespace {
// Reads the story, changes it and saves it, all on the storage thread (so that two
// requests changing different fields never undo each other).
Result<std::function<void()>> changeStory(Database* db, StorageWorker* w, quint64 id,
                                          qint64 storyId,
                                          const std::function<void(Story&)>& change) {
    if (!db)
        return notOpen();
    auto story = db->stories().get(storyId);
    if (!story)
        return story.error();
    change(*story);
    auto r = db->stories().update(*story);
    if (!r)
        return r.error();
    return std::function<void()>([w, id, storyId] { Q_EMIT w->storyUpdated(id, storyId); });
}
} // namespace

quint64 StorageController::updateStory(qint64 storyId, const StoryChange& change) {
    StorageWorker* w = m_worker;
    return post(true, [w, storyId, change](Database* db, quint64 id) {
        return changeStory(db, w, id, storyId, [&](Story& s) {
            if (change.title)
                s.title = *change.title;
            if (change.mode)
                s.mode = *change.mode;
            if (change.modelPath)
                s.modelPath = *change.modelPath;
            if (change.settingsJson)
                s.settingsJson = *change.settingsJson;
            if (change.memory)
                s.memory = *change.memory;
            if (change.authorsNote)
                s.authorsNote = *change.authorsNote;
        });
    });
}

quint64 StorageController::deleteStory(qint64 storyId) {
    StorageWorker* w = m_worker;
    return post(true, [w, storyId](Database* db, quint64 id) -> Result<std::function<void()>> {
        if (!db)
            return notOpen();
        auto r = db->stories().remove(storyId);
        if (!r)
            return r.error();
        return std::function<void()>([w, id, storyId] { Q_EMIT w->storyDeleted(id, storyId); });
    });
}

quint64 StorageController::appendPassage(qint64 storyId, const std::string& text,
                                         PassageAuthor author) {
    StorageWorker* w = m_worker;
    return post(
        true,
        [w, storyId, text, author](Database* db, quint64 id) -> Result<std::function<void()>> {
            if (!db)
                return notOpen();
            auto passage = db->stories().append(storyId, text, author);
            if (!passage)
                return passage.error();
            return std::function<void()>(
                [w, id, p = *passage] { Q_EMIT w->passageAppended(id, p); });
        });
}

quint64 StorageController::setCurrentPassage(qint64 storyId, qint64 passageId) {
    StorageWorker* w = m_worker;
    return post(true,
                [w, storyId, passageId](Database* db, quint64 id) -> Result<std::function<void()>> {
                    if (!db)
                        return notOpen();
                    auto r = db->stories().setCurrent(storyId, passageId);
                    if (!r)
                        return r.error();
                    return std::function<void()>([w, id, storyId, passageId] {
                        Q_EMIT w->currentPassageSet(id, storyId, passageId);
                    });
                });
}

quint64 StorageController::editPassage(qint64 passageId, const std::string& text,
                                       std::shared_ptr<ReplacedPassage> replaced) {
    StorageWorker* w = m_worker;
    return post(
        true,
        [w, passageId, text, replaced](Database* db, quint64 id) -> Result<std::function<void()>> {
            if (!db)
                return notOpen();
            auto r = db->stories().editPassage(passageId, text, false, replaced.get());
            if (!r)
                return r.error();
            return std::function<void()>([w, id, n = *r] { Q_EMIT w->passageEdited(id, n); });
        });
}

quint64 StorageController::undoEdit(std::shared_ptr<const ReplacedPassage> replaced) {
    StorageWorker* w = m_worker;
    return post(true, [w, replaced](Database* db, quint64 id) -> Result<std::function<void()>> {
        if (!db)
            return notOpen();
        if (replaced->passageId == 0) // the edit failed: nothing was replaced
            return std::function<void()>([w, id] { Q_EMIT w->passageEdited(id, 0); });
        auto r = db->stories().undoEdit(*replaced);
        if (!r)
            return r.error();
        return std::function<void()>([w, id] { Q_EMIT w->passageEdited(id, 0); });
    });
}

quint64 StorageController::flush() {
    StorageWorker* w = m_worker;
    return post(false, [w](Database*, quint64 id) -> Result<std::function<void()>> {
        return std::function<void()>([w, id] { Q_EMIT w->flushed(id); });
    });
}

} // namespace baton::storage
