// What the lab pages' presenters (Compare overlaps, Fine-tune) ask of the engine and
// the storage. The app passes FacadeLabBackend, over the lab's model queue
// (engine::ModelJobs), a queue for reading files and the StorageController; the
// presenters' tests pass fakes. Answers arrive on the caller's thread, each to the
// request that asked.
#pragma once

#include "book_files.h"
#include "model_catalog.h"

#include <baton/engine/generation_stream.h>
#include <baton/engine/generator.h>
#include <baton/engine/qt/model_jobs.h>
#include <baton/engine/scoring.h>
#include <baton/engine/training.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/records.h>

#include <QObject>

#include <functional>
#include <optional>
#include <vector>

namespace baton::ui {

// What a lab job answers, on the caller's thread: the reports its kind makes as it goes
// (a load's model, an evaluation's rows, a generation's text, a training's events,
// progress), then `finished` once, last (no error: it succeeded).
struct LabAnswers {
    std::function<void(const engine::ModelInfo&)> loaded;
    std::function<void(const engine::EvaluationRow&)> row;
    std::function<void(const engine::GenerationProgress&)> text;
    std::function<void(const engine::TrainEvent&)> event;
    std::function<void(double fraction, const QString& message)> progress;
    std::function<void(const std::optional<engine::Error>& error)> finished;
};

class LabBackend : public QObject {
    Q_OBJECT
public:
    template <typename T>
    using Done = std::function<void(T)>;
    using Failed = std::function<void(const storage::StorageError&)>;

    using QObject::QObject;

    // The lab engine: its jobs run one at a time in the order they were asked for, so an
    // evaluation asked for after a load scores the model it loaded.
    // A model folder, or an adapter's base with the adapter (ModelCatalog::source).
    virtual engine::JobId loadModel(const ModelSource& source, LabAnswers answers) = 0;
    virtual engine::JobId evaluate(const engine::EvaluateRequest& request, LabAnswers answers) = 0;
    virtual engine::JobId generate(const engine::GenerateRequest& request, LabAnswers answers) = 0;
    virtual engine::JobId train(const engine::TrainConfig& config, LabAnswers answers) = 0;
    virtual void cancel(engine::JobId job) = 0;

    // Book files read off the GUI thread (readBookFiles), then `done`.
    // Reads book files off the GUI thread (progress by bytes read); cancelBooks stops it
    // (done then gets BookFiles::cancelled).
    virtual engine::JobId readBooks(const QStringList& paths, Done<const BookFiles&> done,
                                    BookProgress progress = {}) = 0;
    virtual void cancelBooks(engine::JobId job) = 0;

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
};

class FacadeLabBackend : public LabBackend {
    Q_OBJECT
public:
    // files: the queue book files are read on; not `lab`, where a fine-tune holds the
    // queue for hours (the app passes the writing model's queue, idle between
    // continuations).
    FacadeLabBackend(engine::ModelJobs& lab, engine::ModelJobs& files,
                     storage::StorageController& storage, QObject* parent = nullptr);

    engine::JobId loadModel(const ModelSource& source, LabAnswers answers) override;
    engine::JobId evaluate(const engine::EvaluateRequest& request, LabAnswers answers) override;
    engine::JobId generate(const engine::GenerateRequest& request, LabAnswers answers) override;
    engine::JobId train(const engine::TrainConfig& config, LabAnswers answers) override;
    void cancel(engine::JobId job) override;
    engine::JobId readBooks(const QStringList& paths, Done<const BookFiles&> done,
                            BookProgress progress = {}) override;
    void cancelBooks(engine::JobId job) override;
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
    engine::ModelJobs& m_lab;
    engine::ModelJobs& m_files;
    storage::StorageController& m_storage;
};

} // namespace baton::ui
