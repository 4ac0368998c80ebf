#include "compare_panel.h"

#include "line_chart.h"
#include "model_catalog.h"
#include "panel_util.h"

#include <baton/engine/windows.h>

#include <QCheckBox>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
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
#include <tuple>

namespace baton::ui {

namespace {

std::vector<int> parseInts(const QString& text, bool* ok) {
    std::vector<int> out;
    *ok = true;
    for (const QString& part :
         text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts)) {
        bool good = false;
        const int v = part.toInt(&good);
        if (!good) {
            *ok = false;
            return {};
        }
        if (std::find(out.begin(), out.end(), v) == out.end())
            out.push_back(v);
    }
    return out;
}

QString modelName(const ModelCatalog& catalog, const QString& path) {
    if (auto m = catalog.byPath(path))
        return m->name;
    return QFileInfo(path).fileName();
}

// The latest row for each (model, T, o).
std::vector<storage::EvalResult> latest(const std::vector<storage::EvalResult>& rows) {
    std::map<std::tuple<std::string, int, int>, storage::EvalResult> by;
    for (const auto& r : rows)
        by[{r.modelPath, r.window, r.overlap}] = r;
    std::vector<storage::EvalResult> out;
    for (auto& [key, r] : by)
        out.push_back(r);
    return out;
}

} // namespace

ComparePanel::ComparePanel(ModelCatalog& catalog, engine::EngineController& lab,
                           storage::StorageController& storage, QWidget* parent)
    : QWidget(parent)
    , m_catalog(catalog)
    , m_lab(lab)
    , m_storage(storage) {
    setObjectName(QStringLiteral("comparePanel"));

    // The form.
    m_modelA = new QComboBox;
    m_modelA->setObjectName(QStringLiteral("compareModelA"));
    m_modelB = new QComboBox;
    m_modelB->setObjectName(QStringLiteral("compareModelB"));
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
    connect(m_cancel, &QPushButton::clicked, this, &ComparePanel::cancel);
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
            reopen(hash);
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
    const char* names[2] = {"A", "B"};
    for (int side = 0; side < 2; ++side) {
        m_contModel[side] = new QComboBox;
        m_contModel[side]->setObjectName(QStringLiteral("compareContModel%1").arg(side));
        m_contWindow[side] = new QSpinBox;
        m_contWindow[side]->setRange(2, 4096);
        m_contWindow[side]->setValue(128);
        m_contWindow[side]->setPrefix(QStringLiteral("T "));
        m_contOverlap[side] = new QSpinBox;
        m_contOverlap[side]->setObjectName(QStringLiteral("compareContOverlap%1").arg(side));
        m_contOverlap[side]->setRange(0, 4095);
        m_contOverlap[side]->setValue(side == 0 ? 0 : 64);
        m_contOverlap[side]->setPrefix(QStringLiteral("o "));
        auto* row = new QHBoxLayout;
        row->addWidget(m_contModel[side], 1);
        row->addWidget(m_contWindow[side]);
        row->addWidget(m_contOverlap[side]);
        contForm->addRow(tr("Setting %1").arg(QLatin1String(names[side])), row);
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
        m_contOut[side] = new QTextBrowser;
        m_contOut[side]->setObjectName(QStringLiteral("compareContOut%1").arg(side));
        m_contOut[side]->setPlaceholderText(tr("Setting %1's continuation").arg(names[side]));
        QFont f = m_contOut[side]->font();
        f.setPointSizeF(f.pointSizeF() * 1.05);
        m_contOut[side]->setFont(f);
        cl->addWidget(m_contOut[side]);
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
        refreshHistory();
    });
    connect(&m_lab, &engine::EngineController::modelLoaded, this,
            [this](engine::JobId job, const engine::ModelInfo& info) {
                const auto it = m_jobs.find(job);
                if (it != m_jobs.end())
                    m_configs.insert(it->model, info.config);
            });
    connect(&m_lab, &engine::EngineController::evaluationRow, this,
            [this](engine::JobId job, const engine::ScoreResult& row, bool withState) {
                if (withState)
                    onRow(job, row);
            });
    connect(&m_lab, &engine::EngineController::jobProgress, this,
            [this](engine::JobId job, double fraction, const QString&) {
                const auto it = m_jobs.find(job);
                if (it == m_jobs.end() || it->kind != Pending::Evaluate || m_evalJobs == 0)
                    return;
                m_progress->setValue(int(1000.0 * (m_evalDone + fraction) / m_evalJobs));
            });
    connect(&m_lab, &engine::EngineController::generationProgress, this,
            [this](engine::JobId job, const engine::GenerationProgress& p) {
                const auto it = m_jobs.find(job);
                if (it == m_jobs.end() || it->kind != Pending::Continue)
                    return;
                QTextCursor c(m_contOut[it->side]->document());
                c.movePosition(QTextCursor::End);
                QTextCharFormat model;
                model.setForeground(QColor(0x1f, 0x4e, 0x8c));
                c.insertText(QString::fromStdString(p.text), model);
            });
    connect(&m_lab, &engine::EngineController::jobFinished, this, &ComparePanel::onFinished);
    setBusy(false);
    rebuildModelCombos();
}

void ComparePanel::setStoryTextProvider(std::function<QString()> provider) {
    m_storyText = std::move(provider);
}

void ComparePanel::rebuildModelCombos() {
    auto fill = [this](QComboBox* box, bool allowNone) {
        const QString keep = box->currentData().toString();
        box->clear();
        if (allowNone)
            box->addItem(tr("(none)"), QString());
        for (const CatalogModel& m : m_catalog.models())
            if (m.present)
                box->addItem(QStringLiteral("%1 — %2").arg(m.name, m.summary()), m.path);
        const int i = box->findData(keep);
        if (i >= 0)
            box->setCurrentIndex(i);
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
            m_status->setText(tr("Open a story with some text first, or choose a file."));
            return std::nullopt;
        }
        *label = tr("the open story");
        return text;
    }
    if (m_file.isEmpty()) {
        m_status->setText(tr("Choose a text file to evaluate on."));
        return std::nullopt;
    }
    QFile f(m_file);
    if (!f.open(QIODevice::ReadOnly)) {
        m_status->setText(tr("%1 cannot be read: %2").arg(m_file, f.errorString()));
        return std::nullopt;
    }
    // At most 4 bytes per character; the characters beyond the limit are cut later.
    const QByteArray bytes = f.read(qint64(m_maxChars->value()) * 4);
    const std::optional<QString> text = decodeUtf8(bytes, !f.atEnd());
    if (!text || text->isEmpty()) {
        m_status->setText(text ? tr("%1 is empty.").arg(QFileInfo(m_file).fileName())
                               : tr("%1 is not UTF-8 text.").arg(QFileInfo(m_file).fileName()));
        return std::nullopt;
    }
    *label = QFileInfo(m_file).fileName();
    return text;
}

bool ComparePanel::run() {
    if (running())
        return false;
    bool okW = false, okO = false;
    const std::vector<int> windows = parseInts(m_windows->text(), &okW);
    const std::vector<int> overlaps = parseInts(m_overlaps->text(), &okO);
    if (!okW || !okO || windows.empty() || overlaps.empty()) {
        m_status->setText(tr("Give the window sizes and overlaps as numbers separated by "
                             "commas, e.g. 128 and 0, 32, 64."));
        return false;
    }
    std::vector<engine::WindowSettings> settings;
    QStringList skipped;
    for (int t : windows)
        for (int o : overlaps) {
            if (t < 2 || o < 0 || o >= t) {
                skipped << QStringLiteral("T %1 o %2").arg(t).arg(o);
                continue;
            }
            settings.push_back({t, o});
        }
    if (settings.empty()) {
        m_status->setText(tr("No valid setting: every overlap must be at least 0 and smaller "
                             "than its window."));
        return false;
    }
    QStringList models{m_modelA->currentData().toString()};
    if (const QString b = m_modelB->currentData().toString(); !b.isEmpty() && b != models[0])
        models << b;
    if (models[0].isEmpty()) {
        m_status->setText(tr("Choose a model."));
        return false;
    }
    QString label;
    auto text = currentText(&label);
    if (!text)
        return false;
    if (text->size() > m_maxChars->value())
        text->truncate(m_maxChars->value());
    const QByteArray utf8 = text->toUtf8();
    m_textLabel = label;
    m_textHash = QString::fromLatin1(
        QCryptographicHash::hash(utf8, QCryptographicHash::Sha256).toHex().left(16));
    m_rows.clear();
    showRows();
    m_failed = false;
    m_evalJobs = int(models.size());
    m_evalDone = 0;
    engine::EvaluateRequest req;
    req.text = utf8.toStdString();
    req.settings = settings;
    for (const QString& m : models) {
        m_jobs.insert(m_lab.loadModel(m), Pending{m, Pending::Load, 0});
        m_jobs.insert(m_lab.evaluate(req), Pending{m, Pending::Evaluate, 0});
    }
    QString status = tr("Evaluating %1 settings on %2 (%3 characters)…")
                         .arg(settings.size())
                         .arg(label)
                         .arg(text->size());
    if (!skipped.isEmpty())
        status += tr(" Skipped (overlap not below the window): %1.").arg(skipped.join(", "));
    m_status->setText(status);
    m_progress->setValue(0);
    setBusy(true);
    return true;
}

void ComparePanel::cancel() {
    for (auto it = m_jobs.begin(); it != m_jobs.end(); ++it)
        m_lab.cancel(it.key());
}

bool ComparePanel::runContinuations(const QString& prompt) {
    if (running())
        return false;
    if (prompt.trimmed().isEmpty()) {
        m_status->setText(tr("Write a prompt to continue."));
        return false;
    }
    for (int side = 0; side < 2; ++side) {
        const QString model = m_contModel[side]->currentData().toString();
        if (model.isEmpty()) {
            m_status->setText(tr("Choose a model for both settings."));
            return false;
        }
        if (m_contOverlap[side]->value() >= m_contWindow[side]->value()) {
            m_status->setText(tr("Setting %1: the overlap must be smaller than the window.")
                                  .arg(side == 0 ? "A" : "B"));
            return false;
        }
    }
    m_failed = false;
    m_evalJobs = 0;
    for (int side = 0; side < 2; ++side) {
        const QString model = m_contModel[side]->currentData().toString();
        m_contOut[side]->clear();
        m_contOut[side]->setPlainText(prompt);
        engine::GenerateRequest req;
        req.text = prompt.toStdString();
        req.startOfText = true;
        req.sampling.temperature = 0.8;
        req.sampling.topP = 0.95;
        req.sampling.seed = 1234; // the same draws for both settings
        req.sampling.maxTokens = m_contTokens->value();
        req.windows = {m_contWindow[side]->value(), m_contOverlap[side]->value()};
        m_jobs.insert(m_lab.loadModel(model), Pending{model, Pending::Load, side});
        m_jobs.insert(m_lab.generate(req), Pending{model, Pending::Continue, side});
    }
    m_status->setText(tr("Continuing the prompt under both settings (same seed)…"));
    setBusy(true);
    return true;
}

void ComparePanel::onRow(engine::JobId job, const engine::ScoreResult& row) {
    const auto it = m_jobs.find(job);
    if (it == m_jobs.end())
        return;
    storage::EvalResult r;
    r.modelPath = it->model.toStdString();
    if (auto m = m_catalog.byPath(it->model))
        r.modelId = m->id;
    r.textId = m_textLabel.toStdString();
    r.textHash = m_textHash.toStdString();
    r.window = row.windows.window;
    r.overlap = row.windows.overlap;
    r.scoredTokens = row.scoredTokens;
    r.nll = row.nllSum;
    r.tokenPpl = row.tokenPerplexity;
    r.wordPpl = row.wordPerplexity;
    if (m_configs.contains(it->model))
        r.flopsPerToken = engine::flopsPerToken(m_configs.value(it->model), row.windows, false);
    r.seconds = row.seconds;
    r.createdAt = QDateTime::currentMSecsSinceEpoch();
    m_rows.push_back(r);
    m_storage.addEvalResult(r, this, {}, reportAs(tr("The result could not be stored")));
    showRows();
}

void ComparePanel::onFinished(engine::JobId job, bool ok, const engine::Error& error) {
    const auto it = m_jobs.find(job);
    if (it == m_jobs.end())
        return;
    const Pending p = *it;
    m_jobs.erase(it);
    if (p.kind == Pending::Evaluate)
        ++m_evalDone;
    if (!ok) {
        if (!m_failed && error.code != engine::ErrorCode::Cancelled)
            Q_EMIT failed(
                p.kind == Pending::Load
                    ? tr("%1 could not be loaded").arg(modelName(m_catalog, p.model))
                    : tr("The comparison with %1 failed").arg(modelName(m_catalog, p.model)),
                describeEngineError(error));
        m_failed = true;
        // The rest of the run depends on this job: cancel it.
        cancel();
    }
    if (!m_jobs.isEmpty())
        return;
    const bool wasContinuation = p.kind == Pending::Continue || m_evalJobs == 0;
    setBusy(false);
    if (m_failed)
        m_status->setText(error.code == engine::ErrorCode::Cancelled ? tr("Cancelled.")
                                                                     : tr("Stopped by an error."));
    else
        m_status->setText(wasContinuation ? tr("Both continuations are done (seed 1234).")
                                          : tr("Done: %1 results stored.").arg(m_rows.size()));
    m_progress->setValue(m_failed ? 0 : 1000);
    refreshHistory();
    if (wasContinuation)
        Q_EMIT continuationsFinished();
    else
        Q_EMIT finished(!m_failed);
}

void ComparePanel::showRows() {
    const std::vector<storage::EvalResult> rows = latest(m_rows);
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
        QString name = modelName(m_catalog, QString::fromStdString(key.first));
        if (windowsSeen.size() > 1)
            name += QStringLiteral(" · T %1").arg(key.second);
        a.push_back({name, pts});
    }
    for (auto& [model, pts] : byFlops) {
        std::sort(pts.begin(), pts.end(),
                  [](const QPointF& p, const QPointF& q) { return p.x() < q.x(); });
        b.push_back({modelName(m_catalog, QString::fromStdString(model)), pts});
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
                         cell(modelName(m_catalog, QString::fromStdString(r.modelPath)), false));
        m_table->setItem(i, 1, cell(QString::number(r.window), true));
        m_table->setItem(i, 2, cell(QString::number(r.overlap), true));
        m_table->setItem(i, 3, cell(QString::number(r.scoredTokens), true));
        m_table->setItem(i, 4, cell(QString::number(r.tokenPpl, 'f', 2), true));
        m_table->setItem(i, 5, cell(QString::number(r.wordPpl, 'f', 2), true));
        m_table->setItem(i, 6, cell(QString::number(r.flopsPerToken / 1e6, 'f', 2), true));
        m_table->setItem(i, 7, cell(QString::number(r.seconds, 'f', 2), true));
    }
}

void ComparePanel::refreshHistory() {
    m_storage.listEvalResults(
        this,
        [this](std::vector<storage::EvalResult> all) {
            // One entry per text (newest first), with how many results it has.
            std::map<std::string, std::pair<storage::EvalResult, int>> texts;
            for (const auto& r : all) {
                auto& e = texts[r.textHash];
                if (e.second == 0 || r.createdAt >= e.first.createdAt)
                    e.first = r;
                ++e.second;
            }
            std::vector<std::pair<storage::EvalResult, int>> list;
            for (auto& [hash, e] : texts)
                list.push_back(e);
            std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
                return x.first.createdAt > y.first.createdAt;
            });
            const QString keep = m_history->currentData().toString();
            m_history->clear();
            if (list.empty())
                m_history->addItem(tr("(none yet)"), QString());
            for (const auto& [r, n] : list)
                m_history->addItem(tr("%1 · %2 results · %3")
                                       .arg(QString::fromStdString(r.textId))
                                       .arg(n)
                                       .arg(QDateTime::fromMSecsSinceEpoch(r.createdAt)
                                                .toString(QStringLiteral("yyyy-MM-dd hh:mm"))),
                                   QString::fromStdString(r.textHash));
            const int i = m_history->findData(keep.isEmpty() ? m_textHash : keep);
            if (i >= 0)
                m_history->setCurrentIndex(i);
        },
        reportAs(tr("The stored results could not be read")));
}

void ComparePanel::reopen(const QString& textHash) {
    const std::string hash = textHash.toStdString();
    m_storage.listEvalResults(
        this,
        [this, hash](std::vector<storage::EvalResult> all) {
            m_rows.clear();
            for (auto& r : all)
                if (r.textHash == hash)
                    m_rows.push_back(std::move(r));
            m_textHash = QString::fromStdString(hash);
            if (!m_rows.empty())
                m_textLabel = QString::fromStdString(m_rows.front().textId);
            showRows();
            m_status->setText(tr("%1 stored results for %2.").arg(m_rows.size()).arg(m_textLabel));
        },
        reportAs(tr("The stored results could not be read")));
}

std::function<void(const storage::StorageError&)> ComparePanel::reportAs(const QString& what) {
    return [this, what](const storage::StorageError& error) {
        Q_EMIT failed(what, describeStorageError(error));
    };
}

void ComparePanel::setBusy(bool busy) {
    m_run->setEnabled(!busy);
    m_contRun->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    m_progress->setVisible(busy);
}

} // namespace baton::ui
