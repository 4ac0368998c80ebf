#include "generation_settings_panel.h"

#include <baton/engine/sampling.h>

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QScopedValueRollback>
#include <QSpinBox>
#include <QToolButton>
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
    m_maxTokens = intSpin(1, 1000000, QStringLiteral("maxTokens"));
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
    m_seed = new QLineEdit(QStringLiteral("0"));
    m_seed->setObjectName(QStringLiteral("seed"));
    m_seed->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9]{1,19}")), m_seed));
    m_seed->setEnabled(false);
    auto* seedRow = new QHBoxLayout;
    seedRow->setContentsMargins(0, 0, 0, 0);
    seedRow->addWidget(m_seed, 1);
    seedRow->addWidget(m_fixedSeed);

    // The samplers, from the table, in their groups.
    auto* sampler = new QGroupBox(tr("Sampling"));
    auto* form = new QFormLayout(sampler);
    auto* repetition = new QGroupBox(tr("Repetition"));
    auto* rform = new QFormLayout(repetition);
    auto* more = new QGroupBox(tr("More samplers"));
    more->setObjectName(QStringLiteral("moreSamplers"));
    auto* mform = new QFormLayout(more);
    form->addRow(tr("Preset"), m_preset);
    for (const engine::SamplerSetting& setting : engine::samplerSettings()) {
        QFormLayout* target = setting.group == engine::SettingGroup::Basic        ? form
                              : setting.group == engine::SettingGroup::Repetition ? rform
                                                                                  : mform;
        QWidget* control = makeControl(setting);
        m_controls.push_back({&setting, control});
        auto* label = new QLabel(tr(setting.label));
        label->setToolTip(control->toolTip());
        target->addRow(label, control);
    }
    m_samplerOrder = new QLineEdit;
    m_samplerOrder->setObjectName(QStringLiteral("samplerOrder"));
    m_samplerOrder->setPlaceholderText(tr("Baton's chain"));
    m_samplerOrder->setValidator(new QRegularExpressionValidator(
        QRegularExpression(QStringLiteral("[a-z_, ]{0,200}")), m_samplerOrder));
    m_samplerOrder->setToolTip(
        tr("The truncations and the temperature in the order they run, separated by "
           "commas; a sampler not named does not run, and the penalties always come "
           "first. Names: %1. Empty: Baton's order (the temperature first unless "
           "Temperature last is on).")
            .arg(QString::fromStdString([] {
                std::string all;
                for (const std::string& n : engine::samplerStageNames())
                    all += (all.empty() ? "" : ", ") + n;
                return all;
            }())));
    m_bannedPhrases = new QPlainTextEdit;
    m_bannedPhrases->setObjectName(QStringLiteral("bannedPhrases"));
    m_bannedPhrases->setPlaceholderText(tr("One per line"));
    m_bannedPhrases->setTabChangesFocus(true);
    m_bannedPhrases->setFixedHeight(qMax(m_bannedPhrases->minimumSizeHint().height(),
                                         m_bannedPhrases->fontMetrics().lineSpacing() * 3 + 12));
    m_bannedPhrases->setToolTip(
        tr("Texts the model never writes (one per line, case ignored): when one would "
           "appear, the model goes back to where it began and writes something else. "
           "Each is matched as a whole word: \"her\" bans \"her,\" and \"Her \" but "
           "not \"there\" or \"father\"."));
    auto* bannedLabel = new QLabel(tr("Banned phrases"));
    bannedLabel->setToolTip(m_bannedPhrases->toolTip());
    rform->addRow(bannedLabel);
    rform->addRow(m_bannedPhrases); // the whole width: phrases are long
    m_bannedInsideWords = new QCheckBox(tr("Inside words too"));
    m_bannedInsideWords->setObjectName(QStringLiteral("bannedInsideWords"));
    m_bannedInsideWords->setToolTip(tr("Ban the phrases wherever they occur, inside longer "
                                       "words too: \"her\" then also bans \"there\"."));
    rform->addRow(m_bannedInsideWords);
    m_textBias = new QPlainTextEdit;
    m_textBias->setObjectName(QStringLiteral("textBias"));
    // The leading space a word's token has, shown (a placeholder's space is invisible).
    m_textBias->setPlaceholderText(tr("\u2423Darcy=-5   (\u2423: the space before the word)"));
    m_textBias->setTabChangesFocus(true);
    m_textBias->setFixedHeight(m_bannedPhrases->height());
    m_textBias->setToolTip(
        tr("One per line, TEXT=X: X (-100 to 100) is added to the likelihood of every token "
           "of TEXT; -100 bans them. Keep the space before a word: \" Darcy=-5\"."));
    m_textBiasError = new QLabel;
    m_textBiasError->setObjectName(QStringLiteral("textBiasError"));
    m_textBiasError->setWordWrap(true);
    m_textBiasError->setVisible(false);
    auto* biasLabel = new QLabel(tr("Logit bias"));
    biasLabel->setToolTip(m_textBias->toolTip());
    mform->addRow(biasLabel);
    mform->addRow(m_textBias);
    mform->addRow(m_textBiasError);
    auto* orderLabel = new QLabel(tr("Sampler order"));
    orderLabel->setToolTip(m_samplerOrder->toolTip());
    mform->addRow(orderLabel, m_samplerOrder);
    form->addRow(tr("Max tokens"), m_maxTokens);
    form->addRow(QString(), m_trimSentences);
    form->addRow(tr("Seed"), seedRow);
    auto* showMore = new QToolButton;
    showMore->setObjectName(QStringLiteral("showMoreSamplers"));
    showMore->setText(tr("More samplers"));
    showMore->setCheckable(true);
    showMore->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    showMore->setArrowType(Qt::RightArrow);
    showMore->setToolTip(tr("Typical-p, tail-free, top-a, top-n-sigma, XTC, dynamic "
                            "temperature, Mirostat"));
    more->setVisible(false);
    connect(showMore, &QToolButton::toggled, this, [more, showMore](bool on) {
        more->setVisible(on);
        showMore->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    });

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
    m_loreBudget->setSpecialValueText(tr("automatic"));
    m_loreBudget->setSuffix(tr(" tokens"));
    m_loreBudget->setToolTip(tr("The most tokens all world-info entries together may take. "
                                "Automatic: what leaves half of the window to the story "
                                "beside the memory and the author's note."));
    m_recall = new QCheckBox(tr("Recall the story's past"));
    m_recall->setObjectName(QStringLiteral("recall"));
    m_recall->setChecked(story::RecallSettings{}.enabled);
    m_recall->setToolTip(tr("Before each continuation, find earlier passages outside the window "
                            "that share names and rare words with the recent text, and read "
                            "the best of them again (the Context dock lists them)."));
    m_recallBudget = intSpin(0, 1 << 20, QStringLiteral("recallBudget"));
    m_recallBudget->setSpecialValueText(tr("automatic"));
    m_recallBudget->setSuffix(tr(" tokens"));
    m_recallBudget->setToolTip(tr("The most tokens recalled excerpts together may take. "
                                  "Automatic: a quarter of the window, within what world "
                                  "info leaves."));
    m_recallChunks = intSpin(1, story::kMaxRecallChunks, QStringLiteral("recallChunks"));
    m_recallChunks->setValue(story::RecallSettings{}.chunks);
    m_recallChunks->setToolTip(tr("The most excerpts recalled into one window."));
    m_recallBans = new QPushButton;
    m_recallBans->setObjectName(QStringLiteral("recallBans"));
    m_recallBans->setToolTip(tr("Excerpts banned from recall in the Context dock; click to "
                                "allow them again."));
    auto* context = new QGroupBox(tr("Context"));
    auto* cform = new QFormLayout(context);
    cform->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    cform->addRow(tr("Memory"), m_memoryLayout);
    cform->addRow(tr("World info"), m_loreBudget);
    cform->addRow(QString(), m_recall);
    cform->addRow(tr("Recall budget"), m_recallBudget);
    cform->addRow(tr("Excerpts"), m_recallChunks);
    cform->addRow(QString(), m_recallBans);

    // The forms' labels share one width, so their fields line up.
    int labelWidth = 0;
    for (QFormLayout* f : {form, rform, mform, wform, cform})
        for (int row = 0; row < f->rowCount(); ++row)
            if (auto* label =
                    qobject_cast<QLabel*>(f->itemAt(row, QFormLayout::LabelRole)
                                              ? f->itemAt(row, QFormLayout::LabelRole)->widget()
                                              : nullptr))
                labelWidth =
                    qMax(labelWidth, QFontMetrics(font()).horizontalAdvance(label->text()));
    labelWidth += 4;
    for (QFormLayout* f : {form, rform, mform, wform, cform})
        f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (QFormLayout* f : {form, rform, mform, wform, cform})
        for (int row = 0; row < f->rowCount(); ++row)
            if (QLayoutItem* item = f->itemAt(row, QFormLayout::LabelRole); item && item->widget())
                item->widget()->setMinimumWidth(labelWidth);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(sampler);
    layout->addWidget(repetition);
    layout->addWidget(showMore, 0, Qt::AlignLeft);
    layout->addWidget(more);
    layout->addWidget(windows);
    layout->addWidget(context);
    layout->addStretch(1);

    connect(m_preset, qOverload<int>(&QComboBox::activated), this, [this](int index) {
        applyPreset(index);
        Q_EMIT edited();
    });
    for (auto* s : {m_maxTokens, m_overlap, m_loreBudget, m_recallBudget, m_recallChunks})
        connect(s, &QSpinBox::valueChanged, this, &GenerationSettingsPanel::onEdited);
    connect(m_recall, &QCheckBox::toggled, this, [this](bool on) {
        m_recallBudget->setEnabled(on);
        m_recallChunks->setEnabled(on);
        onEdited();
    });
    connect(m_recallBans, &QPushButton::clicked, this, [this] {
        m_loaded.recall.banned.clear();
        showRecallBans();
        onEdited();
    });
    connect(m_seed, &QLineEdit::textEdited, this, &GenerationSettingsPanel::onEdited);
    connect(m_samplerOrder, &QLineEdit::textEdited, this, &GenerationSettingsPanel::onEdited);
    connect(m_bannedPhrases, &QPlainTextEdit::textChanged, this,
            &GenerationSettingsPanel::onEdited);
    connect(m_textBias, &QPlainTextEdit::textChanged, this, [this] {
        QStringList bad;
        textBiasLines(m_textBias->toPlainText(), &bad);
        m_textBiasError->setText(bad.isEmpty() ? QString()
                                               : tr("Not used (needs TEXT=X, X from -100 to "
                                                    "100): line %1")
                                                     .arg(bad.join(QStringLiteral(", "))));
        m_textBiasError->setVisible(!bad.isEmpty());
        onEdited();
    });
    connect(m_memoryLayout, qOverload<int>(&QComboBox::currentIndexChanged), this,
            &GenerationSettingsPanel::onEdited);
    connect(m_window, &QSpinBox::valueChanged, this, [this](int t) {
        m_overlap->setMaximum(qMax(0, t - 1));
        onEdited();
    });
    connect(m_trimSentences, &QCheckBox::toggled, this, &GenerationSettingsPanel::onEdited);
    connect(m_bannedInsideWords, &QCheckBox::toggled, this, &GenerationSettingsPanel::onEdited);
    connect(m_fixedSeed, &QCheckBox::toggled, this, [this](bool on) {
        m_seed->setEnabled(on);
        onEdited();
    });
    applyPreset(kBalanced);
    setModel(std::nullopt);
}

QWidget* GenerationSettingsPanel::makeControl(const engine::SamplerSetting& setting) {
    const QString name = QString::fromLatin1(setting.key);
    const QString tip = tr(setting.help);
    QWidget* w = nullptr;
    if (setting.whole == &engine::SamplingOptions::mirostat) {
        auto* box = new QComboBox;
        box->addItem(tr("off"), 0);
        box->addItem(tr("Mirostat v2"), 2);
        connect(box, qOverload<int>(&QComboBox::currentIndexChanged), this,
                &GenerationSettingsPanel::onEdited);
        w = box;
    } else if (setting.integer && setting.lo == 0 && setting.hi == 1) {
        auto* box = new QCheckBox;
        connect(box, &QCheckBox::toggled, this, &GenerationSettingsPanel::onEdited);
        w = box;
    } else if (setting.integer) {
        auto* spin = intSpin(int(setting.lo), int(setting.hi), name);
        if (setting.lo == 0) // 0 turns it off, or for a range means the whole window
            spin->setSpecialValueText(QString::fromLatin1(setting.key).endsWith("range")
                                          ? tr("whole window")
                                          : tr("off"));
        connect(spin, &QSpinBox::valueChanged, this, &GenerationSettingsPanel::onEdited);
        w = spin;
    } else {
        // The whole range, to three decimals (an open lower end starts one step in).
        const double step = setting.hi > 5 ? 0.05 : 0.01;
        auto* spin =
            doubleSpin(setting.loOpen ? setting.lo + 0.001 : setting.lo, setting.hi, step, 3, name);
        connect(spin, &QDoubleSpinBox::valueChanged, this, &GenerationSettingsPanel::onEdited);
        w = spin;
    }
    w->setObjectName(name);
    w->setToolTip(tip);
    return w;
}

double GenerationSettingsPanel::valueOf(const SamplerControl& c) {
    if (auto* box = qobject_cast<QComboBox*>(c.widget))
        return box->currentData().toDouble();
    if (auto* box = qobject_cast<QCheckBox*>(c.widget))
        return box->isChecked() ? 1 : 0;
    if (auto* spin = qobject_cast<QSpinBox*>(c.widget))
        return spin->value();
    return static_cast<QDoubleSpinBox*>(c.widget)->value();
}

void GenerationSettingsPanel::display(const SamplerControl& c, double value) {
    if (auto* box = qobject_cast<QComboBox*>(c.widget))
        box->setCurrentIndex(qMax(0, box->findData(int(value))));
    else if (auto* box = qobject_cast<QCheckBox*>(c.widget))
        box->setChecked(value != 0);
    else if (auto* spin = qobject_cast<QSpinBox*>(c.widget))
        spin->setValue(int(value));
    else
        static_cast<QDoubleSpinBox*>(c.widget)->setValue(value);
}

// The lines TEXT=X of the logit bias box (the last '=' separates; the text is kept as
// typed, leading space included); `bad` gets the numbers of the lines that are not.
std::vector<std::pair<std::string, float>>
GenerationSettingsPanel::textBiasLines(const QString& text, QStringList* bad) {
    std::vector<std::pair<std::string, float>> out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        const QString& line = lines[i];
        if (line.trimmed().isEmpty())
            continue;
        const int eq = int(line.lastIndexOf(QLatin1Char('=')));
        bool ok = false;
        const double x = eq > 0 ? line.mid(eq + 1).trimmed().toDouble(&ok) : 0.0;
        if (ok && std::abs(x) <= 100)
            out.emplace_back(line.left(eq).toStdString(), float(x));
        else if (bad)
            *bad << QString::number(i + 1);
    }
    return out;
}

engine::SamplingOptions GenerationSettingsPanel::controlsSampling() const {
    engine::SamplingOptions o = m_loaded.sampling;
    for (size_t i = 0; i < m_controls.size(); ++i) {
        const double shown = valueOf(m_controls[i]);
        if (i < m_shown.size() && shown == m_shown[i])
            continue; // the stored value, as it was
        m_controls[i].setting->set(o, shown);
    }
    return o;
}

void GenerationSettingsPanel::rememberShown() {
    m_shown.clear();
    for (const SamplerControl& c : m_controls)
        m_shown.push_back(valueOf(c));
}

void GenerationSettingsPanel::applyPreset(int index) {
    if (index < 0 || index >= presetCount())
        return;
    m_applying = true;
    story::applyPreset(story::presets()[size_t(index)], m_loaded.sampling);
    for (const SamplerControl& c : m_controls)
        display(c, c.setting->get(m_loaded.sampling));
    rememberShown();
    m_preset->setCurrentIndex(index);
    m_applying = false;
    Q_EMIT changed();
}

void GenerationSettingsPanel::onEdited() {
    if (m_applying)
        return;
    // The preset whose values these are, else Custom.
    const engine::SamplingOptions o = controlsSampling();
    int match = presetCount();
    for (int i = 0; i < presetCount(); ++i)
        if (story::matchesPreset(story::presets()[size_t(i)], o))
            match = i;
    m_preset->setCurrentIndex(match);
    Q_EMIT changed();
    if (!m_loading)
        Q_EMIT edited();
}

void GenerationSettingsPanel::setModel(const std::optional<engine::ModelInfo>& model) {
    const QScopedValueRollback loading(m_loading, true);
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
    s.sampling = controlsSampling();
    s.sampling.maxTokens = m_maxTokens->value();
    s.fixedSeed = m_fixedSeed->isChecked();
    s.trimSentences = m_trimSentences->isChecked();
    s.memory = story::MemoryLayout(m_memoryLayout->currentData().toInt());
    s.loreBudget = m_loreBudget->value();
    s.recall.enabled = m_recall->isChecked();
    s.recall.budget = m_recallBudget->value();
    s.recall.chunks = m_recallChunks->value();
    s.sampling.seed = s.fixedSeed ? m_seed->text().toULongLong() : engine::drawSeed();
    s.sampling.samplerOrder.clear(); // a name the engine does not know is refused there
    for (const QString& name : m_samplerOrder->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!name.trimmed().isEmpty())
            s.sampling.samplerOrder.push_back(name.trimmed().toStdString());
    s.sampling.textBias = textBiasLines(m_textBias->toPlainText(), nullptr);
    s.sampling.bannedPhrases.clear();
    s.sampling.bannedInsideWords = m_bannedInsideWords->isChecked();
    for (const QString& line : m_bannedPhrases->toPlainText().split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty())
            s.sampling.bannedPhrases.push_back(line.toStdString());
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
    const QScopedValueRollback loading(m_loading, true);
    applyPreset(kBalanced);
    m_loaded = settings;
    m_applying = true;
    for (const SamplerControl& c : m_controls)
        display(c, c.setting->get(settings.sampling));
    rememberShown();
    m_maxTokens->setValue(settings.sampling.maxTokens);
    m_fixedSeed->setChecked(settings.fixedSeed);
    m_trimSentences->setChecked(settings.trimSentences);
    m_seed->setEnabled(settings.fixedSeed);
    m_memoryLayout->setCurrentIndex(m_memoryLayout->findData(int(settings.memory)));
    m_loreBudget->setValue(settings.loreBudget);
    m_recall->setChecked(settings.recall.enabled);
    m_recallBudget->setValue(settings.recall.budget);
    m_recallChunks->setValue(settings.recall.chunks);
    m_recallBudget->setEnabled(settings.recall.enabled);
    m_recallChunks->setEnabled(settings.recall.enabled);
    showRecallBans();
    if (settings.fixedSeed)
        m_seed->setText(QString::number(qulonglong(settings.sampling.seed)));
    QStringList order;
    for (const std::string& name : settings.sampling.samplerOrder)
        order << QString::fromStdString(name);
    m_samplerOrder->setText(order.join(QStringLiteral(", ")));
    QStringList banned;
    for (const std::string& phrase : settings.sampling.bannedPhrases)
        banned << QString::fromStdString(phrase);
    m_bannedPhrases->setPlainText(banned.join(QLatin1Char('\n')));
    m_bannedInsideWords->setChecked(settings.sampling.bannedInsideWords);
    QStringList biases;
    for (const auto& [text, bias] : settings.sampling.textBias)
        biases << QString::fromStdString(text) + QLatin1Char('=') + QString::number(double(bias));
    m_textBias->setPlainText(biases.join(QLatin1Char('\n')));
    m_applying = false;
    resetWindows();
    if (m_window->isEnabled() && settings.windows.window > 0) {
        m_window->setValue(settings.windows.window);
        m_overlap->setValue(settings.windows.overlap);
    }
    onEdited();
}

} // namespace baton::ui

namespace baton::ui {

void GenerationSettingsPanel::banRecall(qint64 passageId, qint64 chunkStart) {
    const std::pair<int64_t, int64_t> chunk{passageId, chunkStart};
    auto& banned = m_loaded.recall.banned;
    if (std::find(banned.begin(), banned.end(), chunk) != banned.end())
        return;
    banned.push_back(chunk);
    showRecallBans();
    onEdited();
}

void GenerationSettingsPanel::showRecallBans() {
    const auto n = qsizetype(m_loaded.recall.banned.size());
    m_recallBans->setText(n == 0 ? tr("No excerpt banned from recall")
                                 : tr("Allow %n banned excerpt(s) again", nullptr, int(n)));
    m_recallBans->setEnabled(n > 0);
}

} // namespace baton::ui
