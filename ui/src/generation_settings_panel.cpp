#include "generation_settings_panel.h"

#include <baton/engine/sampling.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace baton::ui {

namespace {

constexpr int kBalanced = story::kBalancedPreset;

int presetCount() {
    return int(story::presets().size());
}

QDoubleSpinBox* doubleSpin(double min, double max, double step, int decimals, const QString& name) {
    auto* s = new QDoubleSpinBox;
    s->setRange(min, max);
    s->setSingleStep(step);
    s->setDecimals(decimals);
    s->setObjectName(name);
    return s;
}

QSpinBox* intSpin(int min, int max, const QString& name) {
    auto* s = new QSpinBox;
    s->setRange(min, max);
    s->setObjectName(name);
    return s;
}

} // namespace

QStringList GenerationSettingsPanel::presetNames() {
    QStringList names;
    for (const auto& p : story::presets())
        names << tr(p.name);
    return names;
}

GenerationSettingsPanel::GenerationSettingsPanel(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("generationSettings"));
    m_preset = new QComboBox;
    m_preset->setObjectName(QStringLiteral("preset"));
    m_preset->addItems(presetNames());
    m_preset->addItem(tr("Custom"));
    m_temperature = doubleSpin(0.0, 2.0, 0.05, 2, QStringLiteral("temperature"));
    m_temperature->setToolTip(tr("0 always takes the likeliest word; higher values take more "
                                 "risks."));
    m_topK = intSpin(0, 1000, QStringLiteral("topK"));
    m_topK->setSpecialValueText(tr("off"));
    m_topK->setToolTip(tr("Sample only from the k likeliest tokens (off: from all)."));
    m_topP = doubleSpin(0.05, 1.0, 0.01, 2, QStringLiteral("topP"));
    m_topP->setToolTip(tr("Sample from the smallest set of tokens holding this much "
                          "probability."));
    m_repetition = doubleSpin(1.0, 2.0, 0.01, 2, QStringLiteral("repetitionPenalty"));
    m_repetition->setToolTip(tr("Makes tokens of the open window less likely to repeat "
                                "(1: no penalty)."));
    m_maxTokens = intSpin(1, 100000, QStringLiteral("maxTokens"));
    m_maxTokens->setValue(200);
    m_maxTokens->setToolTip(tr("The most tokens one generation writes."));
    m_trimSentences = new QCheckBox(tr("End on a whole sentence"));
    m_trimSentences->setObjectName(QStringLiteral("trimSentences"));
    m_trimSentences->setToolTip(tr("A generation that stops in the middle of a sentence (at "
                                   "Max tokens) is cut back to the end of its last whole "
                                   "sentence."));
    m_fixedSeed = new QCheckBox(tr("Fixed"));
    m_fixedSeed->setObjectName(QStringLiteral("fixedSeed"));
    m_fixedSeed->setToolTip(tr("The same seed, settings and text give the same continuation. "
                               "Unchecked: a new seed every time, so Retry writes something "
                               "new."));
    m_seed = intSpin(0, 2147483647, QStringLiteral("seed"));
    m_seed->setEnabled(false);
    auto* seedRow = new QHBoxLayout;
    seedRow->setContentsMargins(0, 0, 0, 0);
    seedRow->addWidget(m_seed, 1);
    seedRow->addWidget(m_fixedSeed);

    auto* sampler = new QGroupBox(tr("Sampling"));
    auto* form = new QFormLayout(sampler);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Preset"), m_preset);
    form->addRow(tr("Temperature"), m_temperature);
    form->addRow(tr("Top-k"), m_topK);
    form->addRow(tr("Top-p"), m_topP);
    form->addRow(tr("Repetition penalty"), m_repetition);
    form->addRow(tr("Max tokens"), m_maxTokens);
    form->addRow(QString(), m_trimSentences);
    form->addRow(tr("Seed"), seedRow);

    m_window = intSpin(1, 1, QStringLiteral("window"));
    m_window->setToolTip(tr("T: the tokens the model sees at once. A recurrent model carries "
                            "a state from one window to the next."));
    m_overlap = intSpin(0, 0, QStringLiteral("overlap"));
    m_overlap->setToolTip(tr("o: tokens kept from one window to the next."));
    m_windowHint = new QLabel;
    m_windowHint->setObjectName(QStringLiteral("windowHint"));
    m_windowHint->setWordWrap(true);
    m_windowHint->setForegroundRole(QPalette::PlaceholderText);
    auto* reset = m_resetWindows = new QPushButton(tr("Model defaults"));
    reset->setObjectName(QStringLiteral("resetWindows"));
    connect(reset, &QPushButton::clicked, this, &GenerationSettingsPanel::resetWindows);
    auto* windows = new QGroupBox(tr("Windows"));
    auto* wform = new QFormLayout(windows);
    wform->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    wform->addRow(tr("Window T"), m_window);
    wform->addRow(tr("Overlap o"), m_overlap);
    wform->addRow(m_windowHint);
    wform->addRow(QString(), reset);

    m_memoryLayout = new QComboBox;
    m_memoryLayout->setObjectName(QStringLiteral("memoryLayout"));
    m_memoryLayout->addItem(tr("In every window"), int(story::MemoryLayout::EveryWindow));
    m_memoryLayout->addItem(tr("Once, at the start"), int(story::MemoryLayout::Once));
    m_memoryLayout->setToolTip(
        tr("In every window: the memory starts every window the model reads (it costs its "
           "tokens of T; the Context dock shows how many). Once: it is read before the story, "
           "and later windows know it only through the recurrent state."));
    m_loreBudget = intSpin(0, 1 << 20, QStringLiteral("loreBudget"));
    m_loreBudget->setSpecialValueText(tr("all the room left"));
    m_loreBudget->setSuffix(tr(" tokens"));
    m_loreBudget->setToolTip(tr("The most tokens all world-info entries together may take."));
    auto* context = new QGroupBox(tr("Context"));
    auto* cform = new QFormLayout(context);
    cform->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    cform->addRow(tr("Memory"), m_memoryLayout);
    cform->addRow(tr("World info"), m_loreBudget);

    // The forms' labels share one width, so their fields line up.
    const int labelWidth = QFontMetrics(font()).horizontalAdvance(tr("Repetition penalty")) + 4;
    for (QFormLayout* f : {form, wform, cform})
        for (int row = 0; row < f->rowCount(); ++row)
            if (QLayoutItem* item = f->itemAt(row, QFormLayout::LabelRole); item && item->widget())
                item->widget()->setMinimumWidth(labelWidth);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(sampler);
    layout->addWidget(windows);
    layout->addWidget(context);
    layout->addStretch(1);

    connect(m_preset, qOverload<int>(&QComboBox::activated), this,
            &GenerationSettingsPanel::applyPreset);
    for (auto* s : {m_temperature, m_topP, m_repetition})
        connect(s, &QDoubleSpinBox::valueChanged, this, &GenerationSettingsPanel::onEdited);
    for (auto* s : {m_topK, m_maxTokens, m_seed, m_overlap, m_loreBudget})
        connect(s, &QSpinBox::valueChanged, this, &GenerationSettingsPanel::onEdited);
    connect(m_memoryLayout, qOverload<int>(&QComboBox::currentIndexChanged), this,
            &GenerationSettingsPanel::onEdited);
    connect(m_window, &QSpinBox::valueChanged, this, [this](int t) {
        m_overlap->setMaximum(qMax(0, t - 1));
        onEdited();
    });
    connect(m_trimSentences, &QCheckBox::toggled, this, &GenerationSettingsPanel::onEdited);
    connect(m_fixedSeed, &QCheckBox::toggled, this, [this](bool on) {
        m_seed->setEnabled(on);
        onEdited();
    });
    applyPreset(kBalanced);
    setModel(std::nullopt);
}

void GenerationSettingsPanel::applyPreset(int index) {
    if (index < 0 || index >= presetCount())
        return;
    m_applying = true;
    const story::Preset& p = story::presets()[size_t(index)];
    m_temperature->setValue(p.temperature);
    m_topK->setValue(p.topK);
    m_topP->setValue(p.topP);
    m_repetition->setValue(p.repetitionPenalty);
    m_preset->setCurrentIndex(index);
    m_applying = false;
    Q_EMIT changed();
}

void GenerationSettingsPanel::onEdited() {
    if (m_applying)
        return;
    // The preset whose values these are, else Custom.
    int match = presetCount();
    for (int i = 0; i < presetCount(); ++i) {
        const story::Preset& p = story::presets()[size_t(i)];
        if (qFuzzyCompare(m_temperature->value(), p.temperature) && m_topK->value() == p.topK &&
            qFuzzyCompare(m_topP->value(), p.topP) &&
            qFuzzyCompare(m_repetition->value(), p.repetitionPenalty))
            match = i;
    }
    m_preset->setCurrentIndex(match);
    Q_EMIT changed();
}

void GenerationSettingsPanel::setModel(const std::optional<engine::ModelInfo>& model) {
    m_applying = true;
    if (!model) {
        m_modelWindows = {};
        m_window->setEnabled(false);
        m_overlap->setEnabled(false);
        m_resetWindows->setEnabled(false);
        m_windowHint->setText(tr("Open a model to set its windows."));
    } else {
        m_modelWindows = engine::resolveWindows(*model, {});
        m_window->setEnabled(true);
        m_overlap->setEnabled(true);
        m_resetWindows->setEnabled(true);
        m_window->setRange(1, model->config.nPositions);
        m_window->setValue(m_modelWindows.window);
        m_overlap->setRange(0, qMax(0, m_window->value() - 1));
        m_overlap->setValue(m_modelWindows.overlap);
        m_windowHint->setText(model->recurrence
                                  ? tr("Trained with T = %1, o = %2; it carries a state "
                                       "across windows.")
                                        .arg(m_modelWindows.window)
                                        .arg(m_modelWindows.overlap)
                                  : tr("Model default: T = %1, o = %2 (no recurrent state).")
                                        .arg(m_modelWindows.window)
                                        .arg(m_modelWindows.overlap));
    }
    m_applying = false;
}

void GenerationSettingsPanel::resetWindows() {
    if (m_modelWindows.window <= 0)
        return;
    m_window->setValue(m_modelWindows.window);
    m_overlap->setValue(m_modelWindows.overlap);
}

story::StorySettings GenerationSettingsPanel::settings() const {
    story::StorySettings s = m_loaded;
    s.sampling.temperature = m_temperature->value();
    s.sampling.topK = m_topK->value();
    s.sampling.topP = m_topP->value();
    s.sampling.repetitionPenalty = m_repetition->value();
    s.sampling.maxTokens = m_maxTokens->value();
    s.fixedSeed = m_fixedSeed->isChecked();
    s.trimSentences = m_trimSentences->isChecked();
    s.memory = story::MemoryLayout(m_memoryLayout->currentData().toInt());
    s.loreBudget = m_loreBudget->value();
    s.sampling.seed = s.fixedSeed ? uint64_t(m_seed->value()) : engine::drawSeed();
    s.windows = {};
    if (m_window->isEnabled()) {
        s.windows.window = m_window->value();
        s.windows.overlap = m_overlap->value();
    }
    return s;
}

std::string GenerationSettingsPanel::toJson() const {
    story::StorySettings s = settings();
    if (s.windows.window == m_modelWindows.window && s.windows.overlap == m_modelWindows.overlap)
        s.windows = {}; // the model's: follows the model
    return story::settingsJson(s);
}

void GenerationSettingsPanel::load(const story::StorySettings& settings) {
    m_loaded = settings;
    applyPreset(kBalanced);
    m_applying = true;
    m_temperature->setValue(settings.sampling.temperature);
    m_topK->setValue(settings.sampling.topK);
    m_topP->setValue(settings.sampling.topP);
    m_repetition->setValue(settings.sampling.repetitionPenalty);
    m_maxTokens->setValue(settings.sampling.maxTokens);
    m_fixedSeed->setChecked(settings.fixedSeed);
    m_trimSentences->setChecked(settings.trimSentences);
    m_seed->setEnabled(settings.fixedSeed);
    m_memoryLayout->setCurrentIndex(m_memoryLayout->findData(int(settings.memory)));
    m_loreBudget->setValue(settings.loreBudget);
    if (settings.fixedSeed)
        m_seed->setValue(
            int(std::min<uint64_t>(settings.sampling.seed, uint64_t(m_seed->maximum()))));
    m_applying = false;
    resetWindows();
    if (m_window->isEnabled() && settings.windows.window > 0) {
        m_window->setValue(settings.windows.window);
        m_overlap->setValue(settings.windows.overlap);
    }
    onEdited();
}

} // namespace baton::ui
