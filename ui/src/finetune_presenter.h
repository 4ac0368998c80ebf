// Fine-tuning without widgets: the books (imported from text files into the database),
// a run started from a base model and the form's settings (the books cut near 90% for
// held-out validation), its live loss and validation curves, the metrics stored as it
// goes, Cancel that keeps a checkpoint, Resume of the newest unfinished run (also after
// a restart), and the finished model registered in the model list. FineTunePanel shows
// what it reports; its tests drive it with a fake LabBackend.
#pragma once

#include "error_text.h"
#include "lab_backend.h"

#include <QJsonObject>
#include <QObject>
#include <QPointF>
#include <QStringList>

#include <string>
#include <utility>
#include <vector>

namespace baton::ui {

class ModelCatalog;

// A book cut at a paragraph break near 90% of its length: the start to train on, the
// rest to validate on.
std::pair<std::string, std::string> splitForValidation(const std::string& text);

class FineTunePresenter : public QObject {
    Q_OBJECT
public:
    FineTunePresenter(LabBackend& backend, ModelCatalog& catalog, QObject* parent = nullptr);

    // Where runs and their models are written (a folder beside the database).
    void setRunsFolder(const QString& folder) { m_runsFolder = folder; }
    // Reads the books and the runs (for Resume).
    void refresh();
    // Text or Markdown files as books; the ones that cannot be read are reported.
    void importBooks(const QStringList& files);
    void removeBooks(const std::vector<int64_t>& ids);
    const std::vector<storage::Book>& books() const { return m_books; }

    // Settings: the form's fields as stored with a run ("base", "mode", "scope",
    // "window", "overlap", "bptt_windows", "batch_size", "lr", "epochs", "name").
    bool start(const QJsonObject& settings);
    void cancel();
    bool resume();
    bool running() const { return m_job != 0; }
    bool canResume() const { return m_resumable.id != 0; }
    qint64 resumableRun() const { return m_resumable.id; }
    QString finishedModel() const { return m_finished; }

    const std::vector<QPointF>& loss() const { return m_loss; }
    const std::vector<QPointF>& validation() const { return m_valPpl; }
    const std::vector<QPointF>& validationNoState() const { return m_valPplNoState; }

Q_SIGNALS:
    void booksChanged();
    void stateChanged(); // running, resumable, finished model
    void status(QString text);
    void progress(double fraction);
    void logLine(QString line);
    void logCleared();
    void chartsChanged();
    // Resume puts the run's settings back in the form.
    void settingsRestored(QJsonObject settings);
    void runFinished(bool ok);
    void failed(QString what, baton::ui::ErrorText error);

private:
    void launch(const QJsonObject& settings, const QString& outDir, bool resume, qint64 runId,
                const std::vector<storage::Book>& books);
    void onEvent(engine::JobId job, const engine::TrainEvent& event);
    void onFinished(engine::JobId job, bool ok, const engine::Error& error);
    void clearCharts();
    LabBackend::Failed reportAs(const QString& what);

    LabBackend& m_backend;
    ModelCatalog& m_catalog;
    QString m_runsFolder;
    std::vector<storage::Book> m_books;
    engine::JobId m_job = 0;
    qint64 m_runId = 0;
    QString m_runName;
    storage::TrainingRun m_resumable;
    QString m_finished;
    std::vector<QPointF> m_loss, m_valPpl, m_valPplNoState;
    std::vector<storage::MetricPoint> m_unsaved;
};

} // namespace baton::ui
