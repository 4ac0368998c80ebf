// The StorageController requests that answer through callbacks: each runs one
// store operation (or a few, in one request) on the storage thread.
#include <baton/storage/qt/storage_controller.h>

#include "storage_worker.h"

#include <baton/storage/book_store.h>
#include <baton/storage/database.h>
#include <baton/storage/eval_store.h>
#include <baton/storage/lore_store.h>
#include <baton/storage/model_store.h>
#include <baton/storage/run_store.h>
#include <baton/storage/story_store.h>
#include <baton/storage/token_choice_store.h>
#include <baton/storage/topic_store.h>

namespace baton::storage {

template <typename T>
quint64 StorageController::request(bool write, std::function<Result<T>(Database&)> body,
                                   QObject* context, Done<T> done, Failed failedWith) {
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
                         if (guard && done)
                             done(std::move(v));
                     });
                 });
             });
    Q_ASSERT(posted == id);
    return posted;
}

namespace {

// Result<void> -> Result<bool> for the requests that answer only "done".
Result<bool> done(const Result<void>& r) {
    if (!r)
        return r.error();
    return true;
}

} // namespace

quint64 StorageController::currentPath(qint64 storyId, QObject* context,
                                       Done<std::vector<Passage>> d, Failed f) {
    return request<std::vector<Passage>>(
        false, [storyId](Database& db) { return db.stories().currentPath(storyId); }, context,
        std::move(d), std::move(f));
}

quint64 StorageController::allPassages(qint64 storyId, QObject* context,
                                       Done<std::vector<Passage>> d, Failed f) {
    return request<std::vector<Passage>>(
        false, [storyId](Database& db) { return db.stories().allPassages(storyId); }, context,
        std::move(d), std::move(f));
}

quint64 StorageController::tokenChoices(qint64 passageId, QObject* context,
                                        Done<std::pair<Passage, std::vector<uint8_t>>> d,
                                        Failed f) {
    using Answer = std::pair<Passage, std::vector<uint8_t>>;
    return request<Answer>(
        false,
        [passageId](Database& db) -> Result<Answer> {
            auto passage = db.stories().passage(passageId);
            if (!passage)
                return passage.error();
            auto blob = db.tokenChoices().get(passageId);
            if (!blob)
                return blob.error();
            return Answer{std::move(*passage), std::move(*blob)};
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::searchStories(const std::string& text, QObject* context,
                                         Done<std::vector<int64_t>> d, Failed f) {
    return request<std::vector<int64_t>>(
        false, [text](Database& db) { return db.stories().search(text); }, context, std::move(d),
        std::move(f));
}

quint64 StorageController::duplicateStory(qint64 storyId, const std::string& title,
                                          QObject* context, Done<int64_t> d, Failed f) {
    return request<int64_t>(
        true, [storyId, title](Database& db) { return db.stories().duplicate(storyId, title); },
        context, std::move(d), std::move(f));
}

quint64 StorageController::listModels(const std::vector<std::string>& bundled, QObject* context,
                                      Done<std::vector<RegisteredModel>> d, Failed f) {
    return request<std::vector<RegisteredModel>>(
        true,
        [bundled](Database& db) -> Result<std::vector<RegisteredModel>> {
            auto& models = db.models();
            for (const auto& path : bundled) {
                auto have = models.byPath(path);
                if (!have)
                    return have.error();
                if (have->has_value())
                    continue;
                RegisteredModel m;
                m.path = path;
                m.name = path.substr(path.find_last_of('/') + 1);
                m.configJson = R"({"bundled":true})";
                if (auto added = models.add(m); !added)
                    return added.error();
            }
            auto def = models.defaultModel();
            if (!def)
                return def.error();
            if (!def->has_value() && !bundled.empty()) {
                auto first = models.byPath(bundled.front());
                if (!first)
                    return first.error();
                if (first->has_value())
                    if (auto set = models.setDefault((*first)->id); !set)
                        return set.error();
            }
            return models.list();
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::registerModel(const RegisteredModel& model, QObject* context,
                                         Done<int64_t> d, Failed f) {
    return request<int64_t>(
        true,
        [model](Database& db) -> Result<int64_t> {
            auto have = db.models().byPath(model.path);
            if (!have)
                return have.error();
            RegisteredModel m = have->value_or(RegisteredModel{});
            m.path = model.path;
            m.name = model.name;
            m.checksum = model.checksum;
            m.configJson = model.configJson;
            if (have->has_value()) {
                if (auto r = db.models().update(m); !r)
                    return r.error();
                return m.id;
            }
            return db.models().add(m);
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::setDefaultModel(qint64 modelId, QObject* context, Done<bool> d,
                                           Failed f) {
    return request<bool>(
        true, [modelId](Database& db) { return done(db.models().setDefault(modelId)); }, context,
        std::move(d), std::move(f));
}

quint64 StorageController::removeModel(qint64 modelId, QObject* context, Done<bool> d, Failed f) {
    return request<bool>(
        true, [modelId](Database& db) { return done(db.models().remove(modelId)); }, context,
        std::move(d), std::move(f));
}

quint64 StorageController::addEvalResult(const EvalResult& result, QObject* context,
                                         Done<int64_t> d, Failed f) {
    return request<int64_t>(
        true, [result](Database& db) { return db.evals().add(result); }, context, std::move(d),
        std::move(f));
}

quint64 StorageController::listEvalResults(QObject* context, Done<std::vector<EvalResult>> d,
                                           Failed f) {
    return request<std::vector<EvalResult>>(
        false, [](Database& db) { return db.evals().list(); }, context, std::move(d), std::move(f));
}

quint64 StorageController::listBooks(QObject* context, Done<std::vector<Book>> d, Failed f) {
    return request<std::vector<Book>>(
        false, [](Database& db) { return db.books().list(); }, context, std::move(d), std::move(f));
}

quint64 StorageController::bookTexts(const std::vector<int64_t>& ids, QObject* context,
                                     Done<std::vector<Book>> d, Failed f) {
    return request<std::vector<Book>>(
        false,
        [ids](Database& db) -> Result<std::vector<Book>> {
            std::vector<int64_t> wanted = ids;
            if (wanted.empty()) {
                auto list = db.books().list();
                if (!list)
                    return list.error();
                for (const auto& b : *list)
                    wanted.push_back(b.id);
            }
            std::vector<Book> books;
            for (int64_t id : wanted) {
                auto book = db.books().get(id);
                if (!book)
                    return book.error();
                books.push_back(std::move(*book));
            }
            return books;
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::addBooks(const std::vector<Book>& books, QObject* context, Done<bool> d,
                                    Failed f) {
    return request<bool>(
        true,
        [books](Database& db) -> Result<bool> {
            for (const auto& b : books)
                if (auto r = db.books().add(b); !r)
                    return r.error();
            return true;
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::removeBooks(const std::vector<int64_t>& ids, QObject* context,
                                       Done<bool> d, Failed f) {
    return request<bool>(
        true,
        [ids](Database& db) -> Result<bool> {
            for (int64_t id : ids)
                if (auto r = db.books().remove(id); !r)
                    return r.error();
            return true;
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::listRuns(QObject* context, Done<std::vector<TrainingRun>> d, Failed f) {
    return request<std::vector<TrainingRun>>(
        false, [](Database& db) { return db.runs().list(); }, context, std::move(d), std::move(f));
}

quint64 StorageController::createRun(const TrainingRun& run, QObject* context, Done<int64_t> d,
                                     Failed f) {
    return request<int64_t>(
        true, [run](Database& db) { return db.runs().create(run); }, context, std::move(d),
        std::move(f));
}

quint64 StorageController::resumeRun(qint64 runId, QObject* context,
                                     Done<std::vector<MetricPoint>> d, Failed f) {
    return request<std::vector<MetricPoint>>(
        true,
        [runId](Database& db) -> Result<std::vector<MetricPoint>> {
            if (auto r = db.runs().setStatus(runId, RunStatus::Running); !r)
                return r.error();
            return db.runs().metrics(runId);
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::addMetrics(const std::vector<MetricPoint>& points, QObject* context,
                                      Done<bool> d, Failed f) {
    return request<bool>(
        true, [points](Database& db) { return done(db.runs().addMetrics(points)); }, context,
        std::move(d), std::move(f));
}

quint64 StorageController::finishRun(qint64 runId, const std::vector<MetricPoint>& points,
                                     const std::string& checkpoint, RunStatus status,
                                     const std::string& message, QObject* context, Done<bool> d,
                                     Failed f) {
    return request<bool>(
        true,
        [runId, points, checkpoint, status, message](Database& db) -> Result<bool> {
            if (auto r = db.runs().addMetrics(points); !r)
                return r.error();
            if (!checkpoint.empty())
                if (auto r = db.runs().addCheckpoint(runId, checkpoint); !r)
                    return r.error();
            return done(db.runs().setStatus(runId, status, message));
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::listLore(qint64 storyId, QObject* context,
                                    Done<std::vector<LoreEntry>> d, Failed f) {
    return request<std::vector<LoreEntry>>(
        false, [storyId](Database& db) { return db.lore().list(storyId); }, context, std::move(d),
        std::move(f));
}

quint64 StorageController::saveLore(const LoreEntry& entry, QObject* context, Done<int64_t> d,
                                    Failed f) {
    return request<int64_t>(
        true,
        [entry](Database& db) -> Result<int64_t> {
            if (entry.id == 0)
                return db.lore().add(entry);
            if (auto r = db.lore().update(entry); !r)
                return r.error();
            return entry.id;
        },
        context, std::move(d), std::move(f));
}

quint64 StorageController::removeLore(qint64 entryId, QObject* context, Done<bool> d, Failed f) {
    return request<bool>(
        true, [entryId](Database& db) { return done(db.lore().remove(entryId)); }, context,
        std::move(d), std::move(f));
}

quint64 StorageController::listTopicModels(QObject* context, Done<std::vector<TopicModelRecord>> d,
                                           Failed f) {
    return request<std::vector<TopicModelRecord>>(
        false, [](Database& db) { return db.topics().list(); }, context, std::move(d),
        std::move(f));
}

quint64 StorageController::registerTopicModel(const TopicModelRecord& record, QObject* context,
                                              Done<int64_t> d, Failed f) {
    return request<int64_t>(
        true, [record](Database& db) { return db.topics().add(record); }, context, std::move(d),
        std::move(f));
}

} // namespace baton::storage
