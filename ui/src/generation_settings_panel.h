// The generation settings (a dock): sampler (temperature, top-k, top-p, repetition
// penalty, max tokens, seed) with presets; the window T and overlap o, which default
// to the loaded model's; where the memory is read and the world-info budget. A story keeps its
// settings as JSON through the story module's codec (story/settings.h), the same that baton-cli
// story generate reads.
#pragma once

#include <baton/engine/model_info.h>
#include <baton/story/settings.h>

#include <QWidget>

#include <optional>
#include <string>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace baton::ui {

class GenerationSettingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit GenerationSettingsPanel(QWidget* parent = nullptr);

    // What the controls show (and the loaded settings' stop strings); with a random
    // seed, sampling.seed is a fresh one.
    story::StorySettings settings() const;
    // The loaded model (none: T and o disabled): sets the windows' ranges and
    // defaults.
    void setModel(const std::optional<engine::ModelInfo>& model);
    // A story's saved settings (story::defaultSettings(): the Balanced preset, the
    // model's windows).
    void load(const story::StorySettings& settings);
    // The settings to save with the story: the windows only when not the model's.
    std::string toJson() const;

    static QStringList presetNames();
    void applyPreset(int index);

Q_SIGNALS:
    void changed();

private:
    void onEdited();
    void resetWindows();

    QComboBox* m_preset;
    QDoubleSpinBox* m_temperature;
    QSpinBox* m_topK;
    QDoubleSpinBox* m_topP;
    QDoubleSpinBox* m_repetition;
    QSpinBox* m_maxTokens;
    QCheckBox* m_fixedSeed;
    QCheckBox* m_trimSentences;
    QSpinBox* m_seed;
    QSpinBox* m_window;
    QSpinBox* m_overlap;
    QComboBox* m_memoryLayout;
    QSpinBox* m_loreBudget;
    QLabel* m_windowHint;
    QPushButton* m_resetWindows;
    engine::WindowSettings m_modelWindows;
    story::StorySettings m_loaded; // what the controls do not show (stop strings, ...)
    bool m_applying = false;
};

} // namespace baton::ui
