// Compare overlaps (the view; ComparePresenter does the work): one or two models
// (typically a baseline and its recurrent twin), a text (a book file or the open story)
// and a grid of window sizes and overlaps, evaluated on the lab engine with progress and
// cancel. Perplexity against overlap and against FLOPs per token as charts, a results
// table, and side-by-side continuations of one prompt under two settings. Every row is
// stored in the database's evaluation results and the results of a text can be reopened.
#pragma once

#include "compare_presenter.h"
#include "error_text.h"

#include <baton/storage/records.h>

#include <QWidget>

#include <array>
#include <functional>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTextBrowser;

namespace baton::ui {

class ModelCatalog;
class LineChart;

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    ComparePanel(ModelCatalog& catalog, LabBackend& backend, QWidget* parent = nullptr);

    // Where "The open story" takes its text from (empty when no story is open).
    void setStoryTextProvider(std::function<QString()> provider);
    // The settings of a run (what the form's fields hold); false with a message in
    // the status line when one is out of range.
    void setModels(const QString& first, const QString& second);
    void setTextFile(const QString& path);
    void setGrid(const QString& windows, const QString& overlaps);
    bool run();
    void cancel();
    bool running() const;
    // Continuations of the prompt under setting A and setting B.
    bool runContinuations(const QString& prompt);
    // Rows shown (stored or just measured).
    const std::vector<storage::EvalResult>& rows() const;
    // Reads the stored results of the current text's hash (or of `textHash`).
    void reopen(const QString& textHash);

Q_SIGNALS:
    void finished(bool ok);
    void continuationsFinished();
    void failed(QString what, baton::ui::ErrorText error);

private:
    std::optional<QString> currentText(QString* label);
    void rebuildModelCombos();
    void showRows();
    void showStoredTexts(const std::vector<StoredText>& texts);
    void setBusy(bool busy);
    // What wrote a continuation pane: its setting, and its model when the two differ.
    QString settingLabel(int side) const;

    ModelCatalog& m_catalog;
    ComparePresenter* m_presenter;
    std::function<QString()> m_storyText;

    QComboBox* m_modelA = nullptr;
    QComboBox* m_modelB = nullptr;
    QComboBox* m_source = nullptr;
    QLabel* m_fileLabel = nullptr;
    QSpinBox* m_maxChars = nullptr;
    QLineEdit* m_windows = nullptr;
    QLineEdit* m_overlaps = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QComboBox* m_history = nullptr;
    LineChart* m_byOverlap = nullptr;
    LineChart* m_byFlops = nullptr;
    QTableWidget* m_table = nullptr;
    // Continuations.
    QPlainTextEdit* m_prompt = nullptr;
    QComboBox* m_contModel[2] = {nullptr, nullptr};
    QSpinBox* m_contOverlap[2] = {nullptr, nullptr};
    QSpinBox* m_contWindow[2] = {nullptr, nullptr};
    QSpinBox* m_contTokens = nullptr;
    QPushButton* m_contRun = nullptr;
    QTextBrowser* m_contOut[2] = {nullptr, nullptr};
    QLabel* m_contLabel[2] = {nullptr, nullptr};
    std::array<ContinuationSetting, 2> m_contRunning; // the settings of the latest run

    QString m_file;
};

} // namespace baton::ui
