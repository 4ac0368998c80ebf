// The fine-tune panel (the view; FineTunePresenter does the work): books imported into
// the database (file dialog or drag and drop; UTF-8 text or Markdown), a base model, the
// mode (baseline or recurrent), T, o, windows per sequence, learning rate, epochs and
// what to train. Start, cancel and resume run on the lab engine; the loss and validation
// perplexity are charted live with tokens/s and the ETA; every run and its metrics are
// stored, and the finished model registers itself in the catalog. While there is no
// book the list's place says how to add one and which files can be; the progress bar
// shows only while a run goes; the held-out perplexity before and after training is
// shown under the run's figures.
#pragma once

#include "error_text.h"
#include "finetune_presenter.h"

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
class QScrollArea;
class QSpinBox;
class QStackedWidget;

namespace baton::ui {

class LineChart;
class ModelCatalog;

class FineTunePanel : public QWidget {
    Q_OBJECT
public:
    FineTunePanel(ModelCatalog& catalog, LabBackend& backend, QWidget* parent = nullptr);

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
    // "Add recurrence…" on the Models page: the form set for a recurrence adapter on this
    // base model (recurrencePreset); the books and Start stay the writer's.
    void prepareRecurrence(const QString& base);

    bool start();
    void cancel();
    // Continues the latest cancelled or failed run from its last checkpoint.
    bool resume();
    bool running() const;
    bool canResume() const;
    // The finished model's folder ("" until a run finishes).
    QString finishedModel() const;
    int lossPoints() const;
    int validationPoints() const;
    // The presenter (the held-out figures, for tests).
    const FineTunePresenter& presenter() const { return *m_presenter; }

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
    void showBooks();
    void updateButtons();
    void redrawCharts();

    ModelCatalog& m_catalog;
    FineTunePresenter* m_presenter;

    QListWidget* m_books = nullptr;
    QLabel* m_bookHint = nullptr; // in the list's place while there is no book
    QStackedWidget* m_bookStack = nullptr;
    QLabel* m_bookTitle = nullptr;
    QPushButton* m_addBooks = nullptr;
    QPushButton* m_removeBook = nullptr;
    QComboBox* m_base = nullptr;
    QScrollArea* m_form = nullptr; // the left column: as wide as the form needs
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
    QLabel* m_heldOut = nullptr;
    QPlainTextEdit* m_log = nullptr;
    LineChart* m_lossChart = nullptr;
    LineChart* m_valChart = nullptr;
};

} // namespace baton::ui
