// The memory probe in the app (engine/probe.h), on the Topics page beside what the
// state carries: does the writing model remember a fact from an earlier window? A
// fact is stated in ordinary text of a book and asked for d windows later; the chart
// shows, by distance, how often the right answer is the likeliest of eight (chance
// 1/8), with the state on, off, the mean state and another episode's state (a
// baseline model: one bar). The text is a book stored on the Fine-tune page (one
// the model was not trained on) or the open story. Runs on the writing engine with
// progress and Cancel.
#pragma once

#include "error_text.h"

#include <baton/engine/probe.h>
#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/records.h>

#include <QWidget>

#include <functional>
#include <optional>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace baton::ui {

class BarChart;

class ProbePanel : public QWidget {
    Q_OBJECT
public:
    ProbePanel(storage::StorageController& storage, engine::ModelJobs& engine,
               QWidget* parent = nullptr);

    // The open story's text (nullopt: none open).
    void setStoryProvider(std::function<std::optional<std::string>()> provider);
    // Reads the list of stored books (also done whenever the panel is shown).
    void refreshBooks();
    // The texts offered: the books (by id), then the open story.
    int sourceCount() const;
    void selectBook(int64_t id);
    void selectStory();
    void setEpisodes(int episodes);

    // False, with the reason in the status line, when nothing starts.
    bool run();
    void cancel();
    bool running() const { return m_job != 0 || m_reading; }
    const std::optional<engine::ProbeResult>& result() const { return m_result; }

Q_SIGNALS:
    void probed();
    void failed(QString what, baton::ui::ErrorText error);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void start(std::vector<std::string> texts, const QString& label);
    void onFinished(const std::optional<engine::Error>& failure);
    void showResult(const engine::ProbeResult& result);
    void updateButtons();

    storage::StorageController& m_storage;
    engine::ModelJobs& m_engine;
    std::function<std::optional<std::string>()> m_story;

    QComboBox* m_source = nullptr;
    QSpinBox* m_episodes = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    BarChart* m_chart = nullptr;
    QLabel* m_status = nullptr;

    engine::JobId m_job = 0;
    bool m_reading = false; // the books' texts are being read
    bool m_cancelRequested = false;
    QString m_label; // what is probed, for the status line
    std::optional<engine::ProbeResult> m_result;
};

} // namespace baton::ui
