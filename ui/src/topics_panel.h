// The Topics page (method.md section 6 in the app). For the open story, with the
// writing engine's model and a fitted topic model: each window's topic distribution
// along the story (stacked bars), the top words of each topic, the latest
// generation's context against its continuation (bars and their Jensen-Shannon
// divergence), and what the state carries: for each window, the tokens the state
// handed to it points to through the final layer norm and the LM head. Below, a
// topic model is fitted on the books stored for fine-tuning (on the lab engine),
// saved beside the database and registered (topics_panel_fit.cpp). Both run with
// progress and Cancel. A fit is checked (topic_fit_check.h, on a worker thread) before
// it is registered: a model whose topics repeat each other's top words is not kept,
// and a vocabulary small for the number of topics is warned about; both say how many
// topics the books support.
// The memory probe (ProbePanel) and the synthetic task's curve for the loaded model
// (SyntheticPanel) sit in tabs beside the latest generation's topics.
#pragma once

#include "error_text.h"
#include "topic_fit_check.h"

#include <baton/engine/qt/model_jobs.h>
#include <baton/engine/topics.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/records.h>

#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace baton::ui {

class BarChart;
class ProbePanel;
class SyntheticPanel;

class TopicsPanel : public QWidget {
    Q_OBJECT
public:
    TopicsPanel(storage::StorageController& storage, engine::ModelJobs& engine,
                engine::ModelJobs& lab, QWidget* parent = nullptr);

    // What the page analyses: the open story's text, where its latest generation
    // begins (a byte offset, -1: none) and the windows it is written with; nullopt
    // when no story with text is open.
    struct StoryText {
        std::string text;
        int64_t continuationByte = -1;
        engine::WindowSettings windows;
        std::vector<int64_t> windowStarts; // the ruler's windows (bytes); empty: T and o
    };
    void setStoryProvider(std::function<std::optional<StoryText>()> provider);
    // Where fitted topic models are saved.
    void setTopicsFolder(const QString& folder);
    // Reads the registered topic models (after the database opened).
    void refresh();

    void analyze();
    void fit();
    void cancel();
    bool analyzing() const { return m_inspectJob != 0; }
    // From Fit until its model is registered or refused (fitFinished).
    bool fitting() const { return m_fitJob != 0 || m_fitBusy; }
    int topicModelCount() const;
    void selectTopicModel(const QString& path);
    const std::optional<engine::TopicsInspection>& inspection() const { return m_inspection; }
    // The fitting form (tests and the fine-tune page's shortcut).
    void setFitOptions(int topics, int sweeps, const QString& name);
    void focusFit();
    ProbePanel* probePanel() const { return m_probe; }
    SyntheticPanel* syntheticPanel() const { return m_synthetic; }

Q_SIGNALS:
    void analyzed();
    void fitted(QString path);
    // Every fit ends with it: kept (registered), or not (refused, cancelled, failed).
    void fitFinished(bool kept);
    void failed(QString what, baton::ui::ErrorText error);

private:
    void onInspected(const std::optional<engine::Error>& error);
    void onFitFailed(const engine::Error& error);
    void show(const engine::TopicsInspection& view);
    void updateButtons();
    // The fitted model (checked in the fit's job): registered, or refused.
    void onFitChecked(const TopicFitCheck& check);
    void registerFit(const TopicFitCheck& check, const QString& warning);
    void endFit(bool kept);
    // Cancels the fit: its job, or, while the books are read, the fit before it starts.
    void cancelFit();
    enum class Tone { Normal, Warning };
    void setFitStatus(const QString& text, Tone tone = Tone::Normal);
    static QString fitFirstHint();

    storage::StorageController& m_storage;
    engine::ModelJobs& m_engine;
    engine::ModelJobs& m_lab;
    std::function<std::optional<StoryText>()> m_provider;
    QString m_folder;
    std::vector<storage::TopicModelRecord> m_models;

    QComboBox* m_model = nullptr;
    QPushButton* m_analyze = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    BarChart* m_windows = nullptr;
    BarChart* m_compare = nullptr;
    ProbePanel* m_probe = nullptr;
    SyntheticPanel* m_synthetic = nullptr;
    QTableWidget* m_words = nullptr;
    QTableWidget* m_states = nullptr;

    QSpinBox* m_fitTopics = nullptr;
    QSpinBox* m_fitSweeps = nullptr;
    QLineEdit* m_fitName = nullptr;
    QPushButton* m_fit = nullptr;
    QPushButton* m_fitCancel = nullptr;
    QProgressBar* m_fitProgress = nullptr;
    QLabel* m_fitStatus = nullptr;

    engine::JobId m_inspectJob = 0;
    engine::JobId m_fitJob = 0;
    bool m_fitBusy = false;      // from Fit until registered or refused
    bool m_fitReading = false;   // the books are being read for it
    bool m_fitCancelled = false; // Cancel while they were
    QString m_fitPath, m_fitLabel;
    QString m_pendingSelect; // the topic model to select when the list is read
    int m_fitBooks = 0;

    std::optional<engine::TopicsInspection> m_inspection;
};

} // namespace baton::ui
