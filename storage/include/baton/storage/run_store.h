// Training runs (configuration, status, checkpoints) and their metric series.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <string>
#include <vector>

namespace baton::storage {

class Connection;

class RunStore {
public:
    explicit RunStore(Connection& connection)
        : m_db(connection) {}

    Result<int64_t> create(const TrainingRun& run);
    Result<TrainingRun> get(int64_t id);
    Result<std::vector<TrainingRun>> list(); // newest first, without metrics
    Result<void> setStatus(int64_t id, RunStatus status, const std::string& message = {});
    Result<void> addCheckpoint(int64_t id, const std::string& path);
    // Adds points (one transaction); a (run, name, step) written again is replaced.
    Result<void> addMetrics(const std::vector<MetricPoint>& points);
    // One series by step, or every series (name empty) by name then step.
    Result<std::vector<MetricPoint>> metrics(int64_t runId, const std::string& name = {});
    Result<void> remove(int64_t id);

private:
    Connection& m_db;
};

} // namespace baton::storage
