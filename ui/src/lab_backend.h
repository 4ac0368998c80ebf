// What the lab pages' presenters (Compare overlaps, Fine-tune) ask of the engine and
// the storage. The app passes FacadeLabBackend, over the lab EngineController and the
// StorageController; the presenters' tests pass fakes. Answers and signals arrive on
// the caller's thread.
#pragma once

#include <baton/engine/engine_controller.h>
#include <baton/storage/records.h>
#include <baton/storage/storage_controller.h>

#include <QObject>

#include <functional>
#include <vector>

namespace baton::ui {

class LabBackend : public QObject {
    Q_OBJECT
public:
    template <typename T>
    using Done = std::function<void(T)>;
    using Failed = std::function<void(const storage::StorageError&)>;

    using QObject::QObject;

    // The lab engine.
    virtual engine::JobId loadModel(const QString& folder) = 0;
    virtual engine::JobId evaluate(const engine::EvaluateRequest& request) = 0;
    virtual engine::JobId generate(const engine::GenerateRequest& request) = 0;
    virtual engine::JobId train(const engine::TrainConfig& config) = 0;
    virtual void cancel(engine::JobId job) = 0;

    // The storage.
    virtual void storeEvalResult(const storage::EvalResult& result, Failed failed) = 0;
    virtual void evalResults(Done<std::vector<storage::EvalResult>> done, Failed failed) = 0;
    virtual void books(Done<std::vector<storage::Book>> done, Failed failed) = 0;
    virtual void bookTexts(const std::vector<int64_t>& ids, Done<std::vector<storage::Book>> done,
                           Failed failed) = 0;
    virtual void addBooks(const std::vector<storage::Book>& books, Done<bool> done,
                          Failed failed) = 0;
    virtual void removeBooks(const std::vector<int64_t>& ids, Done<bool> done, Failed failed) = 0;
    virtual void runs(Done<std::vector<storage::TrainingRun>> done, Failed failed) = 0;
    virtual void createRun(const storage::TrainingRun& run, Done<int64_t> done, Failed failed) = 0;
    virtual void resumeRun(qint64 runId, Done<std::vector<storage::MetricPoint>> done,
                           Failed failed) = 0;
    virtual void addMetrics(const std::vector<storage::MetricPoint>& points, Failed failed) = 0;
    virtual void finishRun(qint64 runId, const std::vector<storage::MetricPoint>& points,
                           const std::string& checkpoint, storage::RunStatus status,
                           const std::string& message, Done<bool> done, Failed failed) = 0;

Q_SIGNALS:
    void modelLoaded(baton::engine::JobId job, baton::engine::ModelInfo info);
    void jobProgress(baton::engine::JobId job, double fraction, QString message);
    void evaluationRow(baton::engine::JobId job, baton::engine::ScoreResult row, bool withState);
    void generationProgress(baton::engine::JobId job, baton::engine::GenerationProgress progress);
    void trainingEvent(baton::engine::JobId job, baton::engine::TrainEvent event);
    void jobFinished(baton::engine::JobId job, bool ok, baton::engine::Error error);
};

class FacadeLabBackend : public LabBackend {
    Q_OBJECT
public:
    FacadeLabBackend(engine::EngineController& lab, storage::StorageController& storage,
                     QObject* parent = nullptr);

    engine::JobId loadModel(const QString& folder) override;
    engine::JobId evaluate(const engine::EvaluateRequest& request) override;
    engine::JobId generate(const engine::GenerateRequest& request) override;
    engine::JobId train(const engine::TrainConfig& config) override;
    void cancel(engine::JobId job) override;
    void storeEvalResult(const storage::EvalResult& result, Failed failed) override;
    void evalResults(Done<std::vector<storage::EvalResult>> done, Failed failed) override;
    void books(Done<std::vector<storage::Book>> done, Failed failed) override;
    void bookTexts(const std::vector<int64_t>& ids, Done<std::vector<storage::Book>> done,
                   Failed failed) override;
    void addBooks(const std::vector<storage::Book>& books, Done<bool> done, Failed failed) override;
    void removeBooks(const std::vector<int64_t>& ids, Done<bool> done, Failed failed) override;
    void runs(Done<std::vector<storage::TrainingRun>> done, Failed failed) override;
    void createRun(const storage::TrainingRun& run, Done<int64_t> done, Failed failed) override;
    void resumeRun(qint64 runId, Done<std::vector<storage::MetricPoint>> done,
                   Failed failed) override;
    void addMetrics(const std::vector<storage::MetricPoint>& points, Failed failed) override;
    void finishRun(qint64 runId, const std::vector<storage::MetricPoint>& points,
                   const std::string& checkpoint, storage::RunStatus status,
                   const std::string& message, Done<bool> done, Failed failed) override;

private:
    engine::EngineController& m_lab;
    storage::StorageController& m_storage;
};

} // namespace baton::ui
