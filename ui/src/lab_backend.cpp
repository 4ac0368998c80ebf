#include "lab_backend.h"

namespace baton::ui {

FacadeLabBackend::FacadeLabBackend(engine::EngineController& lab,
                                   storage::StorageController& storage, QObject* parent)
    : LabBackend(parent)
    , m_lab(lab)
    , m_storage(storage) {
    using EC = engine::EngineController;
    connect(&m_lab, &EC::modelLoaded, this, &LabBackend::modelLoaded);
    connect(&m_lab, &EC::jobProgress, this, &LabBackend::jobProgress);
    connect(&m_lab, &EC::evaluationRow, this, &LabBackend::evaluationRow);
    connect(&m_lab, &EC::generationProgress, this, &LabBackend::generationProgress);
    connect(&m_lab, &EC::trainingEvent, this, &LabBackend::trainingEvent);
    connect(&m_lab, &EC::jobFinished, this, &LabBackend::jobFinished);
}

engine::JobId FacadeLabBackend::loadModel(const QString& folder) {
    return m_lab.loadModel(folder);
}
engine::JobId FacadeLabBackend::evaluate(const engine::EvaluateRequest& request) {
    return m_lab.evaluate(request);
}
engine::JobId FacadeLabBackend::generate(const engine::GenerateRequest& request) {
    return m_lab.generate(request);
}
engine::JobId FacadeLabBackend::train(const engine::TrainConfig& config) {
    return m_lab.train(config);
}
void FacadeLabBackend::cancel(engine::JobId job) {
    m_lab.cancel(job);
}

void FacadeLabBackend::storeEvalResult(const storage::EvalResult& result, Failed failed) {
    m_storage.addEvalResult(result, this, {}, std::move(failed));
}
void FacadeLabBackend::evalResults(Done<std::vector<storage::EvalResult>> done, Failed failed) {
    m_storage.listEvalResults(this, std::move(done), std::move(failed));
}
void FacadeLabBackend::books(Done<std::vector<storage::Book>> done, Failed failed) {
    m_storage.listBooks(this, std::move(done), std::move(failed));
}
void FacadeLabBackend::bookTexts(const std::vector<int64_t>& ids,
                                 Done<std::vector<storage::Book>> done, Failed failed) {
    m_storage.bookTexts(ids, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::addBooks(const std::vector<storage::Book>& books, Done<bool> done,
                                Failed failed) {
    m_storage.addBooks(books, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::removeBooks(const std::vector<int64_t>& ids, Done<bool> done,
                                   Failed failed) {
    m_storage.removeBooks(ids, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::runs(Done<std::vector<storage::TrainingRun>> done, Failed failed) {
    m_storage.listRuns(this, std::move(done), std::move(failed));
}
void FacadeLabBackend::createRun(const storage::TrainingRun& run, Done<int64_t> done,
                                 Failed failed) {
    m_storage.createRun(run, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::resumeRun(qint64 runId, Done<std::vector<storage::MetricPoint>> done,
                                 Failed failed) {
    m_storage.resumeRun(runId, this, std::move(done), std::move(failed));
}
void FacadeLabBackend::addMetrics(const std::vector<storage::MetricPoint>& points, Failed failed) {
    m_storage.addMetrics(points, this, {}, std::move(failed));
}
void FacadeLabBackend::finishRun(qint64 runId, const std::vector<storage::MetricPoint>& points,
                                 const std::string& checkpoint, storage::RunStatus status,
                                 const std::string& message, Done<bool> done, Failed failed) {
    m_storage.finishRun(runId, points, checkpoint, status, message, this, std::move(done),
                        std::move(failed));
}

} // namespace baton::ui
