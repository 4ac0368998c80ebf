// The generation settings (a dock): the samplers with presets, made from the sampler
// settings table (engine/sampler_settings.h: each control's range and tooltip), in three
// groups: the basic ones (temperature, top-k, top-p, min-p, max tokens, seed), the
// repetition penalties, and more samplers behind a button; the window T and overlap o,
// which default to the loaded model's; where the memory is read and the world-info
// budget. A control's range is its setting's whole range, so a stored value is never
// clamped. A story keeps its settings as JSON through the story module's codec
// (story/settings.h), the same that baton-cli story generate reads.
#pragma once

#include <baton/engine/model_info.h>
#include <baton/engine/sampler_settings.h>
#include <baton/story/settings.h>

#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
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
    // Leaves a chunk (passage, its first byte) out of recall from now on (edited()).
    void banRecall(qint64 passageId, qint64 chunkStart);

Q_SIGNALS:
    // What the controls show changed (by the user, a preset, a story's or a model's
    // settings loaded): what the model reads may differ.
    void changed();
    // The user changed a setting (a control, a preset, the model's windows restored):
    // the story's saved settings are out of date. Never for settings loaded.
    void edited();

private:
    void onEdited();
    void showRecallBans();
    void resetWindows();

    // One control per setting of the table: a spin box, a check box for a 0/1 setting,
    // a combo box for Mirostat (off or v2).
    struct SamplerControl {
        const engine::SamplerSetting* setting;
        QWidget* widget;
    };
    QWidget* makeControl(const engine::SamplerSetting& setting);
    static double valueOf(const SamplerControl& c);
    static void display(const SamplerControl& c, double value);
    engine::SamplingOptions controlsSampling() const;
    // The TEXT=X lines of the logit bias box; `bad` gets the line numbers it cannot read.
    static std::vector<std::pair<std::string, float>> textBiasLines(const QString& text,
                                                                    QStringList* bad);

    QComboBox* m_preset;
    std::vector<SamplerControl> m_controls;
    // What each control showed right after the stored values were put in it: while it
    // still shows that, the stored value stands (a spin box rounds to its decimals and
    // to its minimum), so the panel never saves back a value it only displayed.
    std::vector<double> m_shown;
    void rememberShown();
    QSpinBox* m_maxTokens;
    QCheckBox* m_fixedSeed;
    QCheckBox* m_trimSentences;
    QLineEdit* m_seed;               // any 64-bit seed a story may hold
    QLineEdit* m_samplerOrder;       // comma-separated stage names; empty: Baton's chain
    QPlainTextEdit* m_bannedPhrases; // one per line
    QCheckBox* m_bannedInsideWords;  // off: each phrase matches as a whole word
    QPlainTextEdit* m_textBias;      // TEXT=X per line
    QLabel* m_textBiasError;         // the lines it cannot read
    QSpinBox* m_window;
    QSpinBox* m_overlap;
    QComboBox* m_memoryLayout;
    QSpinBox* m_loreBudget;
    QCheckBox* m_recall;
    QSpinBox* m_recallBudget;
    QSpinBox* m_recallChunks;
    QPushButton* m_recallBans;
    QLabel* m_windowHint;
    QPushButton* m_resetWindows;
    engine::WindowSettings m_modelWindows;
    story::StorySettings m_loaded; // what the controls do not show (stop strings, ...)
    bool m_applying = false;
    bool m_loading = false; // load() or setModel() fills the controls: nothing is edited
};

} // namespace baton::ui
