// The fine-tune panel: books imported into the database (file dialog or drag and
// drop; UTF-8 text or Markdown), a base model, the mode (baseline or recurrent), T,
// o, windows per sequence, learning rate, epochs and what to train. Start, cancel
// and resume run on the lab engine; the loss and validation perplexity are charted
// live with tokens/s and the ETA; every run and its metrics are stored, and the
// finished model registers itself in the catalog.
#pragma once

#include "error_text.h"

#include <baton/engine/engine_controller.h>
#include <baton/storage/records.h>
#include <baton/storage/storage_controller.h>

#include <QJsonObject>
#include <QWidget>

#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace baton::ui {

// A book cut at a paragraph break near 90% of its length: the start to train on, the
// rest to validate on.
std::pair<std::string, std::string> splitForValidation(const std::string& text);

class LineChart;
class ModelCatalog;

class FineTunePanel : public QWidget {
    Q_OBJECT
public:
    FineTunePanel(ModelCatalog& catalog, engine::EngineController& lab,
                  storage::StorageController& storage, QWidget* parent = nullptr);

    // Where runs and their models are written (a folder beside the database).
    void setRunsFolder(const QString& folder);
    // Reads the books and the runs from the database.
    void refresh();
    // Imports text or Markdown files as books (what the dialog and a drop do).
    void importBooks(const QStringList& files);
    int bookCount() const;

    // The form's fields, as stored with a run.
    QJsonObject settings() const;
    void setSettings(const QJsonObject& settings);

    bool start();
    void cancel();
    // Continues the latest cancelled or failed run from its last checkpoint.
    bool resume();
    bool running() const { return m_job != 0; }
    bool canResume() const { return m_resumable.id != 0; }
    // The finished model's folder ("" until a run finishes).
    QString finishedModel() const { return m_finished; }
    int lossPoints() const { return int(m_loss.size()); }
    int validationPoints() const { return int(m_valPpl.size()); }

Q_SIGNALS:
    void useRequested(QString folder);
    void runFinished(bool ok);
    void booksChanged();
    // "Fit topics on these books": the Topics page takes over.
    void topicsRequested();
    void failed(QString what, baton::ui::ErrorText error);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void onEvent(engine::JobId job, const engine::TrainEvent& event);
    void onFinished(engine::JobId job, bool ok, const engine::Error& error);
    void launch(const QJsonObject& settings, const QString& outDir, bool resume, qint64 runId,
                const std::vector<storage::Book>& books);
    void updateButtons();
    void redrawCharts();
    void log(const QString& line);
    storage::StorageController::Failed reportAs(const QString& what);

    ModelCatalog& m_catalog;
    engine::EngineController& m_lab;
    storage::StorageController& m_storage;
    QString m_runsFolder;

    QListWidget* m_books = nullptr;
    QPushButton* m_addBooks = nullptr;
    QPushButton* m_removeBook = nullptr;
    QComboBox* m_base = nullptr;
    QComboBox* m_mode = nullptr;
    QComboBox* m_scope = nullptr;
    QSpinBox* m_window = nullptr;
    QSpinBox* m_overlap = nullptr;
    QSpinBox* m_bptt = nullptr;
    QSpinBox* m_batch = nullptr;
    QDoubleSpinBox* m_lr = nullptr;
    QDoubleSpinBox* m_epochs = nullptr;
    QLineEdit* m_name = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_cancel = nullptr;
    QPushButton* m_resume = nullptr;
    QPushButton* m_use = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_stats = nullptr;
    QPlainTextEdit* m_log = nullptr;
    LineChart* m_lossChart = nullptr;
    LineChart* m_valChart = nullptr;

    engine::JobId m_job = 0;
    qint64 m_runId = 0;
    QString m_runName;
    storage::TrainingRun m_resumable;
    QString m_finished;
    std::vector<QPointF> m_loss, m_valPpl, m_valPplNoState;
    std::vector<storage::MetricPoint> m_unsaved;
};

} // namespace baton::ui
