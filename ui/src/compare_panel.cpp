#include "compare_panel.h"

#include "line_chart.h"
#include "model_catalog.h"
#include "panel_util.h"

#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <set>

namespace baton::ui {

namespace {
QComboBox* modelBox(const QString& name) {
    auto* box = new QComboBox;
    box->setObjectName(name);
    box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    QObject::connect(box, &QComboBox::currentIndexChanged, box,
                     [box] { box->setToolTip(box->currentData(Qt::ToolTipRole).toString()); });
    return box;
}
} // namespace

ComparePanel::ComparePanel(ModelCatalog& catalog, LabBackend& backend, QWidget* parent)
    : QWidget(parent)
    , m_catalog(catalog)
    , m_presenter(new ComparePresenter(backend, catalog, this)) {
    setObjectName(QStringLiteral("comparePanel"));

    // The form.
    m_modelA = modelBox(QStringLiteral("compareModelA"));
    m_modelB = modelBox(QStringLiteral("compareModelB"));
    m_source = new QComboBox;
    m_source->setObjectName(QStringLiteral("compareSource"));
    m_source->addItem(tr("A text file"));
    m_source->addItem(tr("The open story"));
    auto* choose = new QPushButton(tr("Choose…"));
    m_fileLabel = new QLabel(tr("no file chosen"));
    m_fileLabel->setWordWrap(true);
    connect(choose, &QPushButton::clicked, this, [this] {
        const QString f =
            QFileDialog::getOpenFileName(this, tr("Choose a text to evaluate on"), QString(),
                                         tr("Text (*.txt *.md);;All files (*)"));
        if (!f.isEmpty())
            setTextFile(f);
    });
    m_maxChars = new QSpinBox;
    m_maxChars->setObjectName(QStringLiteral("compareMaxChars"));
    m_maxChars->setRange(1000, 50000000);
    m_maxChars->setSingleStep(10000);
    m_maxChars->setValue(60000);
    m_maxChars->setSuffix(tr(" characters"));
    m_maxChars->setToolTip(tr("Evaluate on the start of the text, up to this many characters"));
    m_windows = new QLineEdit(QStringLiteral("128"));
    m_windows->setObjectName(QStringLiteral("compareWindows"));
    m_windows->setToolTip(tr("Window sizes T, separated by commas"));
    m_overlaps = new QLineEdit(QStringLiteral("0, 16, 32, 64, 96"));
    m_overlaps->setObjectName(QStringLiteral("compareOverlaps"));
    m_overlaps->setToolTip(tr("Overlaps o (0 <= o < T), separated by commas"));
    m_run = new QPushButton(tr("Evaluate"));
    m_run->setObjectName(QStringLiteral("compareRun"));
    m_run->setDefault(true);
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("compareCancel"));
    connect(m_run, &QPushButton::clicked, this, [this] { run(); });
    connect(m_cancel, &QPushButton::clicked, m_presenter, &ComparePresenter::cancel);
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_progress->setMaximumHeight(8);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("compareStatus"));
    m_status->setWordWrap(true);
    m_history = new QComboBox;
    m_history->setObjectName(QStringLiteral("compareHistory"));
    m_history->setToolTip(tr("Results stored earlier, by text"));
    connect(m_history, &QComboBox::activated, this, [this](int index) {
        const QString hash = m_history->itemData(index).toString();
        if (!hash.isEmpty())
            m_presenter->reopen(hash);
    });

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Model"), m_modelA);
    form->addRow(tr("Compare with"), m_modelB);
    form->addRow(tr("Text"), m_source);
    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(m_fileLabel, 1);
    fileRow->addWidget(choose);
    form->addRow(QString(), fileRow);
    form->addRow(tr("Use at most"), m_maxChars);
    form->addRow(tr("Windows T"), m_windows);
    form->addRow(tr("Overlaps o"), m_overlaps);
    auto* runRow = new QHBoxLayout;
    runRow->addStretch(1);
    runRow->addWidget(m_cancel);
    runRow->addWidget(m_run);

    // Continuations.
    m_prompt = new QPlainTextEdit;
    m_prompt->setObjectName(QStringLiteral("comparePrompt"));
    m_prompt->setPlaceholderText(tr("A prompt to continue under both settings"));
    m_prompt->setMaximumHeight(90);
    auto* contForm = new QFormLayout;
    contForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    const char* names[2] = {"A", "B"};
    for (int side = 0; side < 2; ++side) {
        m_contModel[side] = modelBox(QStringLiteral("compareContModel%1").arg(side));
        m_contWindow[side] = new QSpinBox;
        m_contWindow[side]->setRange(2, 4096);
        m_contWindow[side]->setValue(128);
        m_contWindow[side]->setPrefix(QStringLiteral("T "));
        m_contOverlap[side] = new QSpinBox;
        m_contOverlap[side]->setObjectName(QStringLiteral("compareContOverlap%1").arg(side));
        m_contOverlap[side]->setRange(0, 4095);
        m_contOverlap[side]->setValue(side == 0 ? 0 : 64);
        m_contOverlap[side]->setPrefix(QStringLiteral("o "));
        // The model on a row of its own, so that its name shows whole in the pane.
        auto* row = new QHBoxLayout;
        row->addWidget(m_contWindow[side]);
        row->addWidget(m_contOverlap[side]);
        row->addStretch(1);
        contForm->addRow(tr("Setting %1").arg(QLatin1String(names[side])), m_contModel[side]);
        contForm->addRow(QString(), row);
    }
    m_contTokens = new QSpinBox;
    m_contTokens->setRange(1, 2000);
    m_contTokens->setValue(120);
    m_contTokens->setSuffix(tr(" tokens"));
    contForm->addRow(tr("Length"), m_contTokens);
    m_contRun = new QPushButton(tr("Continue both"));
    m_contRun->setObjectName(QStringLiteral("compareContRun"));
    connect(m_contRun, &QPushButton::clicked, this,
            [this] { runContinuations(m_prompt->toPlainText()); });

    auto* left = new QWidget;
    auto* ll = new QVBoxLayout(left);
    ll->setContentsMargins(14, 12, 10, 12);
    ll->addWidget(sectionTitle(tr("Perplexity against overlap")));
    ll->addLayout(form);
    ll->addLayout(runRow);
    ll->addWidget(m_progress);
    ll->addWidget(m_status);
    ll->addSpacing(8);
    ll->addWidget(sectionTitle(tr("Stored results")));
    ll->addWidget(m_history);
    ll->addSpacing(8);
    ll->addWidget(sectionTitle(tr("Side-by-side continuations")));
    ll->addWidget(m_prompt);
    ll->addLayout(contForm);
    auto* contRow = new QHBoxLayout;
    contRow->addStretch(1);
    contRow->addWidget(m_contRun);
    ll->addLayout(contRow);
    ll->addStretch(1);
    auto* scroll = new QScrollArea;
    scroll->setWidget(left);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(350);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    // Results: charts and table, and the continuations.
    m_byOverlap = new LineChart(tr("Perplexity against overlap"), tr("overlap o (tokens)"),
                                tr("token perplexity"));
    m_byOverlap->setObjectName(QStringLiteral("chartByOverlap"));
    m_byFlops = new LineChart(tr("Perplexity against compute"), tr("MFLOPs per token"),
                              tr("token perplexity"));
    m_byFlops->setObjectName(QStringLiteral("chartByFlops"));
    // Overlaps, FLOPs and perplexities are never negative: no axis starts below 0.
    m_byOverlap->setFloors(0, 0);
    m_byFlops->setFloors(0, 0);
    auto* charts = new QWidget;
    auto* chl = new QHBoxLayout(charts);
    chl->setContentsMargins(0, 0, 0, 0);
    chl->addWidget(m_byOverlap);
    chl->addWidget(m_byFlops);
    m_table = new QTableWidget(0, 8);
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setHorizontalHeaderLabels({tr("Model"), tr("T"), tr("o"), tr("Tokens"),
                                        tr("Perplexity"), tr("Word ppl"), tr("MFLOPs/token"),
                                        tr("Seconds")});
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);
    m_table->setSortingEnabled(false);
    auto* results = new QSplitter(Qt::Vertical);
    results->addWidget(charts);
    results->addWidget(m_table);
    results->setStretchFactor(0, 3);
    results->setStretchFactor(1, 2);

    auto* conts = new QWidget;
    auto* cl = new QHBoxLayout(conts);
    for (int side = 0; side < 2; ++side) {
        // Each pane says which setting (and model) wrote it.
        m_contLabel[side] = new QLabel(tr("Setting %1").arg(QLatin1String(names[side])));
        m_contLabel[side]->setObjectName(QStringLiteral("compareContLabel%1").arg(side));
        m_contLabel[side]->setWordWrap(true);
        QFont bold = m_contLabel[side]->font();
        bold.setWeight(QFont::DemiBold);
        m_contLabel[side]->setFont(bold);
        m_contOut[side] = new QTextBrowser;
        m_contOut[side]->setObjectName(QStringLiteral("compareContOut%1").arg(side));
        m_contOut[side]->setPlaceholderText(
            tr("Setting %1's continuation").arg(QLatin1String(names[side])));
        QFont f = m_contOut[side]->font();
        f.setPointSizeF(f.pointSizeF() * 1.05);
        m_contOut[side]->setFont(f);
        auto* pane = new QVBoxLayout;
        pane->addWidget(m_contLabel[side]);
        pane->addWidget(m_contOut[side], 1);
        cl->addLayout(pane);
    }
    auto* tabs = new QTabWidget;
    tabs->setObjectName(QStringLiteral("compareTabs"));
    tabs->addTab(results, tr("Perplexity"));
    tabs->addTab(conts, tr("Continuations"));
    connect(m_contRun, &QPushButton::clicked, tabs, [tabs] { tabs->setCurrentIndex(1); });

    auto* split = new QSplitter;
    split->addWidget(scroll);
    split->addWidget(tabs);
    split->setStretchFactor(1, 1);
    split->setSizes({360, 900});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    // The catalog changes once the database is open: then the stored results can be read.
    connect(&m_catalog, &ModelCatalog::changed, this, [this] {
        rebuildModelCombos();
        m_presenter->refreshHistory();
    });
    connect(m_presenter, &ComparePresenter::status, m_status, &QLabel::setText);
    connect(m_presenter, &ComparePresenter::progress, this,
            [this](double f) { m_progress->setValue(int(1000 * f)); });
    connect(m_presenter, &ComparePresenter::busyChanged, this, &ComparePanel::setBusy);
    connect(m_presenter, &ComparePresenter::rowsChanged, this, &ComparePanel::showRows);
    connect(m_presenter, &ComparePresenter::storedTextsChanged, this,
            &ComparePanel::showStoredTexts);
    connect(m_presenter, &ComparePresenter::continuationStarted, this,
            [this](int side, const QString& prompt) {
                m_contLabel[side]->setText(settingLabel(side));
                m_contOut[side]->clear();
                m_contOut[side]->setPlainText(prompt);
            });
    connect(m_presenter, &ComparePresenter::continuationText, this,
            [this](int side, const QString& text) {
                QTextCursor c(m_contOut[side]->document());
                c.movePosition(QTextCursor::End);
                QTextCharFormat model;
                model.setForeground(QColor(0x1f, 0x4e, 0x8c));
                c.insertText(text, model);
            });
    connect(m_presenter, &ComparePresenter::finished, this, &ComparePanel::finished);
    connect(m_presenter, &ComparePresenter::continuationsFinished, this,
            &ComparePanel::continuationsFinished);
    connect(m_presenter, &ComparePresenter::failed, this, &ComparePanel::failed);
    setBusy(false);
    rebuildModelCombos();
}

void ComparePanel::setStoryTextProvider(std::function<QString()> provider) {
    m_storyText = std::move(provider);
}

void ComparePanel::rebuildModelCombos() {
    // The boxes show the models' names whole (a very long name is elided in the
    // middle); the shape and the folder are in the tooltip.
    auto fill = [this](QComboBox* box, bool allowNone) {
        const QString keep = box->currentData().toString();
        box->clear();
        if (allowNone)
            box->addItem(tr("(none)"), QString());
        for (const CatalogModel& m : m_catalog.models()) {
            if (!m.present)
                continue;
            box->addItem(shownModelName(m.name), m.path);
            box->setItemData(box->count() - 1,
                             QStringLiteral("%1 — %2\n%3").arg(m.name, m.summary(), m.path),
                             Qt::ToolTipRole);
        }
        const int i = box->findData(keep);
        if (i >= 0)
            box->setCurrentIndex(i);
        box->setToolTip(box->currentData(Qt::ToolTipRole).toString());
    };
    fill(m_modelA, false);
    fill(m_modelB, true);
    fill(m_contModel[0], false);
    fill(m_contModel[1], false);
}

void ComparePanel::setModels(const QString& first, const QString& second) {
    m_modelA->setCurrentIndex(m_modelA->findData(first));
    m_modelB->setCurrentIndex(std::max(0, m_modelB->findData(second)));
    m_contModel[0]->setCurrentIndex(m_contModel[0]->findData(first));
    m_contModel[1]->setCurrentIndex(m_contModel[1]->findData(second.isEmpty() ? first : second));
}

void ComparePanel::setTextFile(const QString& path) {
    m_file = path;
    m_fileLabel->setText(QFileInfo(path).fileName());
    m_fileLabel->setToolTip(path);
    m_source->setCurrentIndex(0);
}

void ComparePanel::setGrid(const QString& windows, const QString& overlaps) {
    m_windows->setText(windows);
    m_overlaps->setText(overlaps);
}

std::optional<QString> ComparePanel::currentText(QString* label) {
    if (m_source->currentIndex() == 1) {
        const QString text = m_storyText ? m_storyText() : QString();
        if (text.trimmed().isEmpty()) {
            Q_EMIT m_presenter->status(tr("Open a story with some text first, or choose a file."));
            return std::nullopt;
        }
        *label = tr("the open story");
        return text;
    }
    if (m_file.isEmpty()) {
        Q_EMIT m_presenter->status(tr("Choose a text file to evaluate on."));
        return std::nullopt;
    }
    QFile f(m_file);
    if (!f.open(QIODevice::ReadOnly)) {
        Q_EMIT m_presenter->status(tr("%1 cannot be read: %2").arg(m_file, f.errorString()));
        return std::nullopt;
    }
    // At most 4 bytes per character; the characters beyond the limit are cut later.
    const QByteArray bytes = f.read(qint64(m_maxChars->value()) * 4);
    const std::optional<QString> text = decodeUtf8(bytes, !f.atEnd());
    if (!text || text->isEmpty()) {
        Q_EMIT m_presenter->status(
            text ? tr("%1 is empty.").arg(QFileInfo(m_file).fileName())
                 : tr("%1 is not UTF-8 text.").arg(QFileInfo(m_file).fileName()));
        return std::nullopt;
    }
    *label = QFileInfo(m_file).fileName();
    return text;
}

bool ComparePanel::run() {
    if (running())
        return false;
    CompareRequest r;
    r.models << m_modelA->currentData().toString() << m_modelB->currentData().toString();
    r.windows = m_windows->text();
    r.overlaps = m_overlaps->text();
    auto text = currentText(&r.label);
    if (!text)
        return false;
    r.text = text->left(m_maxChars->value());
    return m_presenter->evaluate(r);
}

void ComparePanel::cancel() {
    m_presenter->cancel();
}

bool ComparePanel::running() const {
    return m_presenter->running();
}

const std::vector<storage::EvalResult>& ComparePanel::rows() const {
    return m_presenter->rows();
}

void ComparePanel::reopen(const QString& textHash) {
    m_presenter->reopen(textHash);
}

bool ComparePanel::runContinuations(const QString& prompt) {
    std::array<ContinuationSetting, 2> s;
    for (int side = 0; side < 2; ++side)
        s[size_t(side)] = {m_contModel[side]->currentData().toString(), m_contWindow[side]->value(),
                           m_contOverlap[side]->value()};
    if (running())
        return false;
    m_contRunning = s; // what continuationStarted labels the panes with
    return m_presenter->continueBoth(prompt, s, m_contTokens->value());
}

QString ComparePanel::settingLabel(int side) const {
    const ContinuationSetting& s = m_contRunning[size_t(side)];
    const QString overlap =
        s.overlap == 0 ? tr("o = 0 (disjoint windows)") : tr("o = %1").arg(s.overlap);
    QString text = tr("Setting %1: T = %2, %3")
                       .arg(side == 0 ? QLatin1String("A") : QLatin1String("B"))
                       .arg(s.window)
                       .arg(overlap);
    if (m_contRunning[0].model != m_contRunning[1].model)
        text += QStringLiteral(" · ") + m_presenter->modelName(s.model);
    return text;
}

void ComparePanel::showStoredTexts(const std::vector<StoredText>& texts) {
    const QString keep = m_history->currentData().toString();
    m_history->clear();
    if (texts.empty())
        m_history->addItem(tr("(none yet)"), QString());
    for (const StoredText& t : texts)
        m_history->addItem(tr("%1 · %2 · %3")
                               .arg(t.label)
                               .arg(countText(t.results, tr("1 result"), tr("%1 results")))
                               .arg(QDateTime::fromMSecsSinceEpoch(t.newest).toString(
                                   QStringLiteral("yyyy-MM-dd hh:mm"))),
                           t.hash);
    const int i = m_history->findData(keep.isEmpty() ? m_presenter->textHash() : keep);
    if (i >= 0)
        m_history->setCurrentIndex(i);
}

void ComparePanel::showRows() {
    const std::vector<storage::EvalResult> rows = m_presenter->latestRows();
    // Perplexity against overlap: a line per (model, T); against compute: per model.
    std::map<std::pair<std::string, int>, std::vector<QPointF>> byOverlap;
    std::map<std::string, std::vector<QPointF>> byFlops;
    for (const auto& r : rows) {
        byOverlap[{r.modelPath, r.window}].push_back(QPointF(r.overlap, r.tokenPpl));
        if (r.flopsPerToken > 0)
            byFlops[r.modelPath].push_back(QPointF(r.flopsPerToken / 1e6, r.tokenPpl));
    }
    std::set<int> windowsSeen;
    for (const auto& r : rows)
        windowsSeen.insert(r.window);
    std::vector<ChartSeries> a, b;
    for (auto& [key, pts] : byOverlap) {
        std::sort(pts.begin(), pts.end(),
                  [](const QPointF& p, const QPointF& q) { return p.x() < q.x(); });
        QString name = m_presenter->modelName(QString::fromStdString(key.first));
        if (windowsSeen.size() > 1)
            name += QStringLiteral(" · T %1").arg(key.second);
        a.push_back({name, pts});
    }
    for (auto& [model, pts] : byFlops) {
        std::sort(pts.begin(), pts.end(),
                  [](const QPointF& p, const QPointF& q) { return p.x() < q.x(); });
        b.push_back({m_presenter->modelName(QString::fromStdString(model)), pts});
    }
    m_byOverlap->setSeries(a);
    m_byFlops->setSeries(b);

    m_table->setRowCount(int(rows.size()));
    auto cell = [](const QString& s, bool number) {
        auto* item = new QTableWidgetItem(s);
        if (number)
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        return item;
    };
    for (int i = 0; i < int(rows.size()); ++i) {
        const auto& r = rows[size_t(i)];
        m_table->setItem(i, 0,
                         cell(m_presenter->modelName(QString::fromStdString(r.modelPath)), false));
        m_table->setItem(i, 1, cell(QString::number(r.window), true));
        m_table->setItem(i, 2, cell(QString::number(r.overlap), true));
        m_table->setItem(i, 3, cell(QString::number(r.scoredTokens), true));
        m_table->setItem(i, 4, cell(QString::number(r.tokenPpl, 'f', 2), true));
        m_table->setItem(i, 5, cell(QString::number(r.wordPpl, 'f', 2), true));
        m_table->setItem(i, 6, cell(QString::number(r.flopsPerToken / 1e6, 'f', 2), true));
        m_table->setItem(i, 7, cell(QString::number(r.seconds, 'f', 2), true));
    }
}

void ComparePanel::setBusy(bool busy) {
    m_run->setEnabled(!busy);
    m_contRun->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    m_progress->setVisible(busy);
}

} // namespace baton::ui
