#include <baton/storage/run_store.h>

#include "connection.h"
#include "statement.h"
#include "store_util.h"
#include "transaction.h"

namespace baton::storage {

namespace {

bool validStatus(RunStatus s) {
    return static_cast<int>(s) >= 1 && static_cast<int>(s) <= 5;
}

} // namespace

Result<int64_t> RunStore::create(const TrainingRun& run) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        if (!validStatus(run.status))
            return makeStorageError(StorageErrorCode::InvalidArgument, "unknown run status");
        Transaction t(m_db);
        const int64_t now = nowMs();
        m_db.prepare("INSERT INTO training_runs (model_id, config_json, status, message, "
                     "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)")
            .bindId(1, run.modelId)
            .bind(2, run.configJson.empty() ? std::string("{}") : run.configJson)
            .bind(3, static_cast<int64_t>(run.status))
            .bind(4, run.message)
            .bind(5, now)
            .run();
        const int64_t id = m_db.lastInsertId();
        Statement cp = m_db.prepare(
            "INSERT INTO run_checkpoints (run_id, path, created_at) VALUES (?1, ?2, ?3)");
        for (const auto& path : run.checkpointPaths) {
            cp.bind(1, id).bind(2, path).bind(3, now);
            cp.run();
        }
        t.commit();
        return id;
    });
}

Result<TrainingRun> RunStore::get(int64_t id) {
    return guard<TrainingRun>([&]() -> Result<TrainingRun> {
        Statement s = m_db.prepare("SELECT id, model_id, config_json, status, message, "
                                   "created_at, updated_at FROM training_runs WHERE id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("training run", id);
        TrainingRun r;
        r.id = s.columnInt(0);
        r.modelId = s.isNull(1) ? 0 : s.columnInt(1);
        r.configJson = s.columnText(2);
        r.status = static_cast<RunStatus>(s.columnInt(3));
        r.message = s.columnText(4);
        r.createdAt = s.columnInt(5);
        r.updatedAt = s.columnInt(6);
        Statement cp =
            m_db.prepare("SELECT path FROM run_checkpoints WHERE run_id = ?1 ORDER BY id");
        cp.bind(1, id);
        while (cp.step())
            r.checkpointPaths.push_back(cp.columnText(0));
        return r;
    });
}

Result<std::vector<TrainingRun>> RunStore::list() {
    return guard<std::vector<TrainingRun>>([&]() -> Result<std::vector<TrainingRun>> {
        std::vector<int64_t> ids;
        Statement s =
            m_db.prepare("SELECT id FROM training_runs ORDER BY created_at DESC, id DESC");
        while (s.step())
            ids.push_back(s.columnInt(0));
        std::vector<TrainingRun> out;
        for (int64_t id : ids) {
            auto r = get(id);
            if (!r)
                return r.error();
            out.push_back(std::move(*r));
        }
        return out;
    });
}

Result<void> RunStore::setStatus(int64_t id, RunStatus status, const std::string& message) {
    return guard<void>([&]() -> Result<void> {
        if (!validStatus(status))
            return makeStorageError(StorageErrorCode::InvalidArgument, "unknown run status");
        m_db.prepare("UPDATE training_runs SET status = ?1, message = ?2, updated_at = ?3 "
                     "WHERE id = ?4")
            .bind(1, static_cast<int64_t>(status))
            .bind(2, message)
            .bind(3, nowMs())
            .bind(4, id)
            .run();
        if (m_db.changes() == 0)
            throwNotFound("training run", id);
        return {};
    });
}

Result<void> RunStore::addCheckpoint(int64_t id, const std::string& path) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("INSERT INTO run_checkpoints (run_id, path, created_at) VALUES (?1, ?2, ?3)")
            .bind(1, id)
            .bind(2, path)
            .bind(3, nowMs())
            .run();
        return {};
    });
}

Result<void> RunStore::addMetrics(const std::vector<MetricPoint>& points) {
    return guard<void>([&]() -> Result<void> {
        Transaction t(m_db);
        Statement s = m_db.prepare(
            "INSERT INTO metric_points (run_id, name, step, value) VALUES (?1, ?2, ?3, ?4) "
            "ON CONFLICT (run_id, name, step) DO UPDATE SET value = excluded.value");
        for (const auto& p : points) {
            s.bind(1, p.runId).bind(2, p.name).bind(3, p.step).bind(4, p.value);
            s.run();
        }
        t.commit();
        return {};
    });
}

Result<std::vector<MetricPoint>> RunStore::metrics(int64_t runId, const std::string& name) {
    return guard<std::vector<MetricPoint>>([&]() -> Result<std::vector<MetricPoint>> {
        Statement s = m_db.prepare(
            name.empty() ? "SELECT run_id, step, name, value FROM metric_points WHERE run_id = ?1 "
                           "ORDER BY name, step"
                         : "SELECT run_id, step, name, value FROM metric_points WHERE run_id = ?1 "
                           "AND name = ?2 ORDER BY step");
        s.bind(1, runId);
        if (!name.empty())
            s.bind(2, name);
        std::vector<MetricPoint> out;
        while (s.step())
            out.push_back(
                MetricPoint{s.columnInt(0), s.columnInt(1), s.columnText(2), s.columnDouble(3)});
        return out;
    });
}

Result<void> RunStore::remove(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        m_db.prepare("DELETE FROM training_runs WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("training run", id);
        return {};
    });
}

} // namespace baton::storage
