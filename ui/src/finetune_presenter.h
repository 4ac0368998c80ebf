// Fine-tuning without widgets: the books (imported from text files into the database),
// a run started from a base model and the form's settings (the books cut near 90% for
// held-out validation), its live loss and validation curves, the metrics stored as it
// goes, Cancel that keeps a checkpoint, Resume of the newest unfinished run (also after
// a restart), and the finished model registered in the model list. FineTunePanel shows
// what it reports; its tests drive it with a fake LabBackend.
//
// Before and after: the held-out part of the books (the end cut off for validation,
// never trained on) is scored with the base model before training and with the
// fine-tuned model after it, with the run's windows, as evaluation jobs on the lab
// engine queued around the training job (progress and Cancel as for the run): the
// writer sees whether training helped. The base model's figure is stored with the
// run's metrics, so a resumed run compares with it.
#pragma once

#include "error_text.h"
#include "lab_backend.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointF>
#include <QStringList>

#include <string>
#include <utility>
#include <vector>

namespace baton::ui {

class ModelCatalog;
struct CatalogModel;
struct ModelSource;

// "Add recurrence…": the settings a recurrence adapter on `base` starts from (scope
// "adapter": the module alone, four state slots, the base frozen). Windows of 128 (256
// for a model with 1,024 positions or more, which leaves room for the story's memory
// and world info), disjoint; sequences of 20 windows for a model of baton-mini's size,
// 8 for larger ones (shorter steps, more of them on a writer's few books); batch 2,
// learning rate 3e-4 (baton-mini's measured recipe), two passes over the books.
QJsonObject recurrencePreset(const CatalogModel& base);
// The state slots of an adapter made in the app.
constexpr int kAdapterSlots = 4;

// A book cut at a paragraph break near 90% of its length: the start to train on, the
// rest to validate on.
std::pair<std::string, std::string> splitForValidation(const std::string& text);

// The texts the before/after perplexity is measured on: each book's held-out part
// (splitForValidation), unwrapped as the trainer reads its documents, at most
// maxBytes in all (shared equally between the books, cut at a character boundary);
// books whose held-out part is blank are left out.
constexpr size_t kHeldOutBytes = 100000;
std::vector<std::string> heldOutTexts(const std::vector<storage::Book>& books,
                                      size_t maxBytes = kHeldOutBytes);

// A perplexity measured on the held-out texts: nats over scored tokens.
struct HeldOutScore {
    double nll = 0;
    int64_t tokens = 0;
    bool valid() const { return tokens > 0; }
    double perplexity() const;
};

class FineTunePresenter : public QObject {
    Q_OBJECT
public:
    FineTunePresenter(LabBackend& backend, ModelCatalog& catalog, QObject* parent = nullptr);

    // Where runs and their models are written (a folder beside the database).
    void setRunsFolder(const QString& folder) { m_runsFolder = folder; }
    // Reads the books and the runs (for Resume).
    void refresh();
    // Text or Markdown files, EPUBs and library shards as books, read off the GUI thread
    // with progress (progress(), status()); the ones that cannot be read are reported.
    // cancel() stops the reading and adds none of it.
    void importBooks(const QStringList& files);
    bool importing() const { return m_importing; }
    void removeBooks(const std::vector<int64_t>& ids);
    const std::vector<storage::Book>& books() const { return m_books; }

    // Settings: the form's fields as stored with a run ("base", "mode", "scope",
    // "window", "overlap", "bptt_windows", "batch_size", "lr", "epochs", "name"). Scope
    // "adapter" (recurrent mode, a baseline base) trains a recurrence adapter: the
    // finished folder is registered as an adapter on the base.
    bool start(const QJsonObject& settings);
    // Stops the training (a checkpoint is kept) or the reading of books.
    void cancel();
    bool resume();
    // Training or measuring the held-out text before or after it.
    bool running() const { return m_job != 0 || !m_measureJobs.isEmpty(); }
    bool canResume() const { return m_resumable.id != 0; }
    qint64 resumableRun() const { return m_resumable.id; }
    QString finishedModel() const { return m_finished; }

    const std::vector<QPointF>& loss() const { return m_loss; }
    const std::vector<QPointF>& validation() const { return m_valPpl; }
    const std::vector<QPointF>& validationNoState() const { return m_valPplNoState; }
    // The held-out perplexity with the base model and with the fine-tuned one (not
    // valid until measured), and the sentence that shows them ("" before any).
    const HeldOutScore& heldOutBefore() const { return m_before; }
    const HeldOutScore& heldOutAfter() const { return m_after; }
    QString heldOutSummary() const;

Q_SIGNALS:
    void booksChanged();
    void stateChanged(); // running, resumable, finished model
    void status(QString text);
    void progress(double fraction);
    void logLine(QString line);
    void logCleared();
    void chartsChanged();
    void heldOutChanged();
    // Resume puts the run's settings back in the form.
    void settingsRestored(QJsonObject settings);
    void runFinished(bool ok);
    void failed(QString what, baton::ui::ErrorText error);

private:
    void launch(const QJsonObject& settings, const QString& outDir, bool resume, qint64 runId,
                const std::vector<storage::Book>& books);
    void onEvent(const engine::TrainEvent& event);
    void onBooksRead(const BookFiles& read);

    void onTrainFinished(bool ok, const engine::Error& error);
    void clearCharts();
    // Queues the load of `model` and an evaluation of each held-out text.
    void measure(const ModelSource& model, bool after);
    void onMeasureFinished(engine::JobId job, bool ok, const engine::Error& error);
    // The run ends (after the measurement that follows training, if any).
    void endRun(bool ok);
    LabBackend::Failed reportAs(const QString& what);

    LabBackend& m_backend;
    ModelCatalog& m_catalog;
    QString m_runsFolder;
    std::vector<storage::Book> m_books;
    engine::JobId m_job = 0;
    engine::JobId m_importJob = 0; // reading books
    bool m_importing = false;
    qint64 m_runId = 0;
    QString m_runName;
    QString m_runBase; // the run's base model folder
    bool m_runAdapter = false;
    storage::TrainingRun m_resumable;
    QString m_finished;
    std::vector<QPointF> m_loss, m_valPpl, m_valPplNoState;
    std::vector<storage::MetricPoint> m_unsaved;
    bool m_stepped = false;       // a training step was seen since the launch
    bool m_resumed = false;       // this launch resumes a run
    int64_t m_checkpointStep = 0; // the step of the last checkpoint this launch wrote
    bool m_cancelling = false;    // Cancel was pressed during this launch
    int64_t m_lastStep = 0;

    // Before and after.
    enum class MeasureJob { Load, Evaluate };
    std::vector<std::string> m_heldOut;
    engine::WindowSettings m_heldOutWindows;
    QHash<engine::JobId, MeasureJob> m_measureJobs;
    bool m_measuringAfter = false;
    int m_measureEvals = 0, m_measureDone = 0;
    bool m_measureFailed = false;
    QString m_measureError;
    HeldOutScore m_measuring, m_before, m_after;
};

} // namespace baton::ui
