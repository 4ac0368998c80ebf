#include "finetune_panel.h"

#include "line_chart.h"
#include "model_catalog.h"
#include "panel_util.h"

#include <QComboBox>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>

namespace baton::ui {

namespace {

constexpr qint64 kMaxBookBytes = 256ll << 20;

QString formatDuration(double seconds) {
    if (!(seconds >= 0) || seconds > 1e7)
        return QStringLiteral("—");
    const qint64 s = qint64(seconds + 0.5);
    if (s >= 3600)
        return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
    if (s >= 60)
        return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
    return QStringLiteral("%1 s").arg(s);
}

} // namespace

std::pair<std::string, std::string> splitForValidation(const std::string& text) {
    size_t cut = text.size() * 9 / 10;
    const size_t para = text.find("\n\n", cut);
    if (para != std::string::npos && para < text.size() - text.size() / 20)
        cut = para;
    while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        ++cut; // never inside a character
    return {text.substr(0, cut), text.substr(cut)};
}

namespace {} // namespace

storage::StorageController::Failed FineTunePanel::reportAs(const QString& what) {
    return [this, what](const storage::StorageError& error) {
        Q_EMIT failed(what, describeStorageError(error));
    };
}

FineTunePanel::FineTunePanel(ModelCatalog& catalog, engine::EngineController& lab,
                             storage::StorageController& storage, QWidget* parent)
    : QWidget(parent)
    , m_catalog(catalog)
    , m_lab(lab)
    , m_storage(storage) {
    setObjectName(QStringLiteral("fineTunePanel"));
    setAcceptDrops(true);

    m_books = new QListWidget;
    m_books->setObjectName(QStringLiteral("bookList"));
    m_books->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_books->setMinimumHeight(110);
    m_books->setToolTip(tr("Drop .txt or .md files here"));
    m_addBooks = new QPushButton(tr("Add books…"));
    m_addBooks->setObjectName(QStringLiteral("addBooks"));
    m_removeBook = new QPushButton(tr("Remove"));
    connect(m_addBooks, &QPushButton::clicked, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Add books to fine-tune on"), QString(),
            tr("Text and Markdown (*.txt *.md *.markdown);;All files (*)"));
        if (!files.isEmpty())
            importBooks(files);
    });
    connect(m_removeBook, &QPushButton::clicked, this, [this] {
        std::vector<int64_t> ids;
        for (auto* item : m_books->selectedItems())
            ids.push_back(item->data(Qt::UserRole).toLongLong());
        m_storage.removeBooks(
            ids, this, [this](bool) { refresh(); }, reportAs(tr("The book could not be removed")));
    });
    connect(m_books, &QListWidget::itemSelectionChanged, this, &FineTunePanel::updateButtons);

    m_base = new QComboBox;
    m_base->setObjectName(QStringLiteral("fineTuneBase"));
    m_mode = new QComboBox;
    m_mode->setObjectName(QStringLiteral("fineTuneMode"));
    m_mode->addItem(tr("Recurrent (carries a state)"), QStringLiteral("recurrent"));
    m_mode->addItem(tr("Baseline (no state)"), QStringLiteral("baseline"));
    m_scope = new QComboBox;
    m_scope->setObjectName(QStringLiteral("fineTuneScope"));
    m_scope->addItem(tr("All weights"), QStringLiteral("all"));
    m_scope->addItem(tr("The recurrence module only"), QStringLiteral("recurrence"));
    m_window = new QSpinBox;
    m_window->setObjectName(QStringLiteral("fineTuneWindow"));
    m_window->setRange(8, 4096);
    m_window->setValue(128);
    m_overlap = new QSpinBox;
    m_overlap->setObjectName(QStringLiteral("fineTuneOverlap"));
    m_overlap->setRange(0, 4095);
    m_bptt = new QSpinBox;
    m_bptt->setObjectName(QStringLiteral("fineTuneBptt"));
    m_bptt->setRange(1, 200);
    m_bptt->setValue(8);
    m_bptt->setToolTip(tr("Windows per training sequence: how far back the state's gradient "
                          "reaches"));
    m_batch = new QSpinBox;
    m_batch->setObjectName(QStringLiteral("fineTuneBatch"));
    m_batch->setRange(1, 256);
    m_batch->setValue(4);
    m_lr = new QDoubleSpinBox;
    m_lr->setObjectName(QStringLiteral("fineTuneLr"));
    m_lr->setDecimals(6);
    m_lr->setRange(1e-6, 0.1);
    m_lr->setSingleStep(1e-5);
    m_lr->setValue(1e-4);
    m_epochs = new QDoubleSpinBox;
    m_epochs->setObjectName(QStringLiteral("fineTuneEpochs"));
    m_epochs->setDecimals(2);
    m_epochs->setRange(0.01, 100);
    m_epochs->setValue(1);
    m_name = new QLineEdit;
    m_name->setObjectName(QStringLiteral("fineTuneName"));
    m_name->setPlaceholderText(tr("my-model"));
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this] {
        const bool recurrent = m_mode->currentData().toString() == QLatin1String("recurrent");
        m_scope->setEnabled(recurrent);
        m_bptt->setEnabled(recurrent);
        if (!recurrent)
            m_scope->setCurrentIndex(0);
    });

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Base model"), m_base);
    form->addRow(tr("Mode"), m_mode);
    form->addRow(tr("Train"), m_scope);
    form->addRow(tr("Window T"), m_window);
    form->addRow(tr("Overlap o"), m_overlap);
    form->addRow(tr("Windows per sequence"), m_bptt);
    form->addRow(tr("Sequences per batch"), m_batch);
    form->addRow(tr("Learning rate"), m_lr);
    form->addRow(tr("Epochs"), m_epochs);
    form->addRow(tr("New model's name"), m_name);

    m_start = new QPushButton(tr("Start"));
    m_start->setObjectName(QStringLiteral("fineTuneStart"));
    m_start->setDefault(true);
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("fineTuneCancel"));
    m_cancel->setToolTip(tr("Stop and keep a checkpoint: Resume continues from it"));
    m_resume = new QPushButton(tr("Resume"));
    m_resume->setObjectName(QStringLiteral("fineTuneResume"));
    m_use = new QPushButton(tr("Write with it"));
    m_use->setObjectName(QStringLiteral("fineTuneUse"));
    connect(m_start, &QPushButton::clicked, this, [this] { start(); });
    connect(m_cancel, &QPushButton::clicked, this, &FineTunePanel::cancel);
    connect(m_resume, &QPushButton::clicked, this, [this] { resume(); });
    connect(m_use, &QPushButton::clicked, this, [this] { Q_EMIT useRequested(m_finished); });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_resume);
    buttons->addStretch(1);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_start);

    auto* left = new QWidget;
    auto* ll = new QVBoxLayout(left);
    ll->setContentsMargins(14, 12, 10, 12);
    ll->addWidget(sectionTitle(tr("Books")));
    ll->addWidget(m_books, 1);
    auto* bookButtons = new QHBoxLayout;
    bookButtons->addWidget(m_addBooks);
    bookButtons->addStretch(1);
    auto* topics = new QPushButton(tr("Fit topics…"));
    topics->setObjectName(QStringLiteral("fitTopicsOnBooks"));
    topics->setToolTip(tr("Fit a topic model on these books (Topics page)"));
    connect(topics, &QPushButton::clicked, this, &FineTunePanel::topicsRequested);
    bookButtons->addWidget(topics);
    bookButtons->addWidget(m_removeBook);
    ll->addLayout(bookButtons);
    ll->addSpacing(6);
    ll->addWidget(sectionTitle(tr("Training")));
    ll->addLayout(form);
    ll->addLayout(buttons);
    auto* scroll = new QScrollArea;
    scroll->setWidget(left);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(360);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("fineTuneProgress"));
    m_progress->setRange(0, 1000);
    m_stats = new QLabel(tr("No run yet."));
    m_stats->setObjectName(QStringLiteral("fineTuneStats"));
    m_stats->setWordWrap(true);
    m_lossChart = new LineChart(tr("Training loss"), tr("step"), tr("loss (nats per token)"));
    m_lossChart->setObjectName(QStringLiteral("lossChart"));
    m_valChart = new LineChart(tr("Validation perplexity"), tr("step"), tr("perplexity"));
    m_valChart->setObjectName(QStringLiteral("validationChart"));
    m_log = new QPlainTextEdit;
    m_log->setObjectName(QStringLiteral("fineTuneLog"));
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(2000);
    m_log->setMaximumHeight(130);
    auto* statsRow = new QHBoxLayout;
    statsRow->addWidget(m_stats, 1);
    statsRow->addWidget(m_use);
    auto* right = new QWidget;
    auto* rl = new QVBoxLayout(right);
    rl->setContentsMargins(10, 12, 14, 12);
    rl->addLayout(statsRow);
    rl->addWidget(m_progress);
    auto* charts = new QHBoxLayout;
    charts->addWidget(m_lossChart);
    charts->addWidget(m_valChart);
    rl->addLayout(charts, 1);
    rl->addWidget(m_log);

    auto* split = new QSplitter;
    split->addWidget(scroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    split->setSizes({360, 900});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(&m_catalog, &ModelCatalog::changed, this, [this] {
        const QString keep = m_base->currentData().toString();
        m_base->clear();
        for (const CatalogModel& m : m_catalog.models())
            if (m.present)
                m_base->addItem(QStringLiteral("%1 — %2").arg(m.name, m.summary()), m.path);
        const int i = m_base->findData(keep);
        if (i >= 0)
            m_base->setCurrentIndex(i);
        updateButtons();
    });
    connect(&m_lab, &engine::EngineController::trainingEvent, this, &FineTunePanel::onEvent);
    connect(&m_lab, &engine::EngineController::jobFinished, this, &FineTunePanel::onFinished);
    updateButtons();
}

void FineTunePanel::setRunsFolder(const QString& folder) {
    m_runsFolder = folder;
}

int FineTunePanel::bookCount() const {
    return m_books->count();
}

void FineTunePanel::refresh() {
    m_storage.listBooks(this, [this](std::vector<storage::Book> books) {
        m_books->clear();
        for (const auto& b : books) {
            auto* item = new QListWidgetItem(
                QStringLiteral("%1  ·  %2")
                    .arg(QString::fromStdString(b.title), formatBytes(b.textBytes)));
            item->setData(Qt::UserRole, qint64(b.id));
            item->setToolTip(QString::fromStdString(b.sourcePath));
            m_books->addItem(item);
        }
        updateButtons();
        Q_EMIT booksChanged();
    });
    m_storage.listRuns(this, [this](std::vector<storage::TrainingRun> runs) {
        m_resumable = {};
        for (const auto& r : runs) {
            if (r.status == storage::RunStatus::Completed)
                break; // only the newest unfinished run
            if (r.status == storage::RunStatus::Cancelled ||
                r.status == storage::RunStatus::Failed ||
                (r.status == storage::RunStatus::Running && r.id != m_runId)) {
                const QJsonObject s =
                    QJsonDocument::fromJson(QByteArray::fromStdString(r.configJson)).object();
                if (QFileInfo::exists(s.value(QStringLiteral("out_dir")).toString())) {
                    m_resumable = r;
                    break;
                }
            }
        }
        updateButtons();
    });
}

void FineTunePanel::importBooks(const QStringList& files) {
    std::vector<storage::Book> books;
    QStringList refused;
    for (const QString& path : files) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            refused << tr("%1: %2").arg(QFileInfo(path).fileName(), f.errorString());
            continue;
        }
        if (f.size() > kMaxBookBytes) {
            refused << tr("%1: larger than %2")
                           .arg(QFileInfo(path).fileName(), formatBytes(kMaxBookBytes));
            continue;
        }
        const QByteArray bytes = f.readAll();
        const std::optional<QString> text = decodeUtf8(bytes);
        if (!text) {
            refused << tr("%1: not UTF-8 text").arg(QFileInfo(path).fileName());
            continue;
        }
        if (text->trimmed().isEmpty()) {
            refused << tr("%1: empty").arg(QFileInfo(path).fileName());
            continue;
        }
        storage::Book b;
        b.title = QFileInfo(path).completeBaseName().toStdString();
        b.sourcePath = QFileInfo(path).absoluteFilePath().toStdString();
        b.checksum =
            QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex().toStdString();
        b.text = bytes.toStdString();
        books.push_back(std::move(b));
    }
    if (!refused.isEmpty()) {
        ErrorText e;
        e.message = tr("Only UTF-8 text or Markdown files can be used as books. Nothing was "
                       "changed for these files:");
        e.detail = refused.join(QLatin1Char('\n'));
        Q_EMIT failed(tr("Some files were not added"), e);
    }
    if (books.empty())
        return;
    m_storage.addBooks(
        books, this, [this](bool) { refresh(); }, reportAs(tr("The books could not be saved")));
}

void FineTunePanel::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void FineTunePanel::dropEvent(QDropEvent* event) {
    QStringList files;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile())
            files << url.toLocalFile();
    if (!files.isEmpty()) {
        importBooks(files);
        event->acceptProposedAction();
    }
}

QJsonObject FineTunePanel::settings() const {
    QJsonObject s;
    s[QStringLiteral("base")] = m_base->currentData().toString();
    s[QStringLiteral("mode")] = m_mode->currentData().toString();
    s[QStringLiteral("scope")] = m_scope->currentData().toString();
    s[QStringLiteral("window")] = m_window->value();
    s[QStringLiteral("overlap")] = m_overlap->value();
    s[QStringLiteral("bptt_windows")] = m_bptt->value();
    s[QStringLiteral("batch_size")] = m_batch->value();
    s[QStringLiteral("lr")] = m_lr->value();
    s[QStringLiteral("epochs")] = m_epochs->value();
    s[QStringLiteral("name")] = m_name->text().trimmed();
    return s;
}

void FineTunePanel::setSettings(const QJsonObject& s) {
    auto pick = [](QComboBox* box, const QJsonValue& v) {
        const int i = box->findData(v.toString());
        if (i >= 0)
            box->setCurrentIndex(i);
    };
    pick(m_base, s.value(QStringLiteral("base")));
    pick(m_mode, s.value(QStringLiteral("mode")));
    pick(m_scope, s.value(QStringLiteral("scope")));
    m_window->setValue(s.value(QStringLiteral("window")).toInt(m_window->value()));
    m_overlap->setValue(s.value(QStringLiteral("overlap")).toInt(m_overlap->value()));
    m_bptt->setValue(s.value(QStringLiteral("bptt_windows")).toInt(m_bptt->value()));
    m_batch->setValue(s.value(QStringLiteral("batch_size")).toInt(m_batch->value()));
    m_lr->setValue(s.value(QStringLiteral("lr")).toDouble(m_lr->value()));
    m_epochs->setValue(s.value(QStringLiteral("epochs")).toDouble(m_epochs->value()));
    m_name->setText(s.value(QStringLiteral("name")).toString(m_name->text()));
}

bool FineTunePanel::start() {
    if (running())
        return false;
    auto refuse = [this](const QString& why) {
        m_stats->setText(why);
        return false;
    };
    if (m_books->count() == 0)
        return refuse(tr("Add at least one book to fine-tune on."));
    if (m_base->currentData().toString().isEmpty())
        return refuse(tr("Choose a base model."));
    if (m_overlap->value() >= m_window->value())
        return refuse(tr("The overlap must be smaller than the window."));
    if (m_runsFolder.isEmpty())
        return refuse(tr("No folder for runs: open a story database first."));
    QJsonObject s = settings();
    QString name = s.value(QStringLiteral("name")).toString();
    if (name.isEmpty())
        name = QStringLiteral("%1-%2").arg(QFileInfo(s.value("base").toString()).fileName(),
                                           s.value("mode").toString());
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    s[QStringLiteral("name")] = name;
    const QString outDir =
        QDir(m_runsFolder)
            .absoluteFilePath(QStringLiteral("%1-%2").arg(
                name, QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-hhmmss"))));
    s[QStringLiteral("out_dir")] = outDir;
    std::vector<int64_t> bookIds;
    for (int i = 0; i < m_books->count(); ++i)
        bookIds.push_back(m_books->item(i)->data(Qt::UserRole).toLongLong());
    QJsonArray ids;
    for (int64_t id : bookIds)
        ids.append(qint64(id));
    s[QStringLiteral("books")] = ids;
    storage::TrainingRun run;
    if (auto m = m_catalog.byPath(s.value("base").toString()))
        run.modelId = m->id;
    run.configJson = QJsonDocument(s).toJson(QJsonDocument::Compact).toStdString();
    run.status = storage::RunStatus::Running;
    m_stats->setText(tr("Preparing the books…"));
    m_start->setEnabled(false);
    // The books' texts, then the run recorded; the trainer writes them into its folder.
    m_storage.bookTexts(
        bookIds, this,
        [this, s, outDir, run](std::vector<storage::Book> books) {
            m_storage.createRun(
                run, this,
                [this, s, outDir, books = std::move(books)](int64_t runId) {
                    m_loss.clear();
                    m_valPpl.clear();
                    m_valPplNoState.clear();
                    redrawCharts();
                    m_log->clear();
                    launch(s, outDir, false, runId, books);
                },
                reportAs(tr("The run could not be recorded")));
        },
        reportAs(tr("The books could not be read")));
    return true;
}

void FineTunePanel::launch(const QJsonObject& s, const QString& outDir, bool resume, qint64 runId,
                           const std::vector<storage::Book>& books) {
    engine::TrainConfig c;
    c.outDir = outDir.toStdString();
    c.resume = resume;
    c.baseModel = s.value(QStringLiteral("base")).toString().toStdString();
    const bool recurrent = s.value(QStringLiteral("mode")).toString() == QLatin1String("recurrent");
    c.mode = recurrent ? engine::TrainMode::Recurrent : engine::TrainMode::Baseline;
    c.scope =
        recurrent && s.value(QStringLiteral("scope")).toString() == QLatin1String("recurrence")
            ? engine::TrainScope::Recurrence
            : engine::TrainScope::All;
    // Each book cut near 90%: the start to train on, the rest held out for validation,
    // so that a run on a single book still measures held-out perplexity.
    for (const auto& b : books) {
        auto [train, validation] = splitForValidation(b.text);
        const std::string name = std::to_string(b.id) + ".txt";
        c.corpusTexts.push_back({name, std::move(train)});
        c.validationTexts.push_back({name, std::move(validation)});
    }
    c.window = s.value(QStringLiteral("window")).toInt();
    c.overlap = s.value(QStringLiteral("overlap")).toInt();
    c.bpttWindows = recurrent ? s.value(QStringLiteral("bptt_windows")).toInt() : 1;
    c.batchSize = s.value(QStringLiteral("batch_size")).toInt();
    c.lr = s.value(QStringLiteral("lr")).toDouble();
    c.epochs = s.value(QStringLiteral("epochs")).toDouble();
    c.warmupSteps = 20;
    c.validateEveryTokens = 50000;
    c.validationMaxTokens = 20000;
    c.checkpointEverySteps = 50;
    c.saveDtype = "f32";
    m_runId = runId;
    m_runName = s.value(QStringLiteral("name")).toString();
    m_finished.clear();
    m_job = m_lab.train(c);
    m_stats->setText(resume ? tr("Resuming %1…").arg(m_runName)
                            : tr("Starting %1…").arg(m_runName));
    log(resume ? tr("Resuming in %1").arg(outDir) : tr("Run folder: %1").arg(outDir));
    m_progress->setValue(0);
    updateButtons();
}

void FineTunePanel::cancel() {
    if (m_job)
        m_lab.cancel(m_job);
}

bool FineTunePanel::resume() {
    if (running() || !m_resumable.id)
        return false;
    const QJsonObject s =
        QJsonDocument::fromJson(QByteArray::fromStdString(m_resumable.configJson)).object();
    setSettings(s);
    const qint64 runId = m_resumable.id;
    // The charts continue from the stored metrics.
    m_storage.resumeRun(
        runId, this,
        [this, s, runId](std::vector<storage::MetricPoint> points) {
            m_loss.clear();
            m_valPpl.clear();
            m_valPplNoState.clear();
            for (const auto& p : points) {
                const QPointF pt(double(p.step), p.value);
                if (p.name == "train_loss")
                    m_loss.push_back(pt);
                else if (p.name == "val_ppl")
                    m_valPpl.push_back(pt);
                else if (p.name == "val_ppl_no_state")
                    m_valPplNoState.push_back(pt);
            }
            redrawCharts();
            launch(s, s.value(QStringLiteral("out_dir")).toString(), true, runId, {});
        },
        reportAs(tr("The run's metrics could not be read")));
    m_resumable = {};
    updateButtons();
    return true;
}

void FineTunePanel::onEvent(engine::JobId job, const engine::TrainEvent& e) {
    if (job != m_job)
        return;
    using Kind = engine::TrainEvent::Kind;
    switch (e.kind) {
    case Kind::Info:
        log(QString::fromStdString(e.message));
        break;
    case Kind::Step: {
        m_loss.push_back(QPointF(double(e.step), e.loss));
        if (e.step % 5 == 0 || e.step == e.totalSteps)
            m_unsaved.push_back({m_runId, e.step, "train_loss", e.loss});
        if (e.totalSteps > 0)
            m_progress->setValue(int(1000.0 * double(e.step) / double(e.totalSteps)));
        m_stats->setText(tr("%1 · step %2 of %3 · loss %4 · %5 tokens/s · %6 left")
                             .arg(m_runName)
                             .arg(e.step)
                             .arg(e.totalSteps)
                             .arg(e.loss, 0, 'f', 3)
                             .arg(e.tokensPerSecond, 0, 'f', 0)
                             .arg(formatDuration(e.etaSeconds)));
        // The loss chart is redrawn every few steps (cheap, but not per event).
        if (m_loss.size() < 50 || e.step % 5 == 0)
            redrawCharts();
        break;
    }
    case Kind::Validation:
        m_valPpl.push_back(QPointF(double(e.step), e.valPerplexity));
        m_unsaved.push_back({m_runId, e.step, "val_ppl", e.valPerplexity});
        if (e.valLossNoState > 0) {
            const double noState = std::exp(e.valLossNoState);
            m_valPplNoState.push_back(QPointF(double(e.step), noState));
            m_unsaved.push_back({m_runId, e.step, "val_ppl_no_state", noState});
        }
        log(tr("step %1: validation perplexity %2%3")
                .arg(e.step)
                .arg(e.valPerplexity, 0, 'f', 2)
                .arg(e.valLossNoState > 0
                         ? tr(" (state off: %1)").arg(std::exp(e.valLossNoState), 0, 'f', 2)
                         : QString()));
        redrawCharts();
        break;
    case Kind::Checkpoint:
        log(tr("checkpoint at step %1").arg(e.step));
        if (!m_unsaved.empty()) {
            const auto points = std::move(m_unsaved);
            m_unsaved.clear();
            m_storage.addMetrics(points, this, {},
                                 reportAs(tr("The run's metrics could not be saved")));
        }
        break;
    case Kind::Done:
        m_finished = QString::fromStdString(e.checkpoint);
        log(tr("%1 at step %2").arg(QString::fromStdString(e.message)).arg(e.step));
        break;
    }
}

void FineTunePanel::onFinished(engine::JobId job, bool ok, const engine::Error& error) {
    if (job != m_job)
        return;
    m_job = 0;
    const bool cancelled = !ok && error.code == engine::ErrorCode::Cancelled;
    const qint64 runId = m_runId;
    const QString finished = ok ? m_finished : QString();
    const auto points = std::move(m_unsaved);
    m_unsaved.clear();
    const storage::RunStatus status =
        ok ? storage::RunStatus::Completed
           : (cancelled ? storage::RunStatus::Cancelled : storage::RunStatus::Failed);
    const std::string message = ok ? "finished" : (cancelled ? "cancelled" : error.message);
    m_storage.finishRun(
        runId, points, finished.toStdString(), status, message, this, [this](bool) { refresh(); },
        reportAs(tr("The run could not be recorded")));
    if (ok) {
        m_progress->setValue(1000);
        m_catalog.add(finished, m_runName, QString());
        m_stats->setText(
            tr("%1 is ready: it is in the model list and can be written with now.").arg(m_runName));
        log(tr("Model saved in %1").arg(finished));
    } else if (cancelled) {
        m_finished.clear();
        m_stats->setText(tr("Cancelled. A checkpoint was kept: Resume continues from it."));
    } else {
        m_finished.clear();
        m_stats->setText(tr("The run stopped with an error."));
        Q_EMIT failed(tr("Fine-tuning failed"), describeEngineError(error));
    }
    redrawCharts();
    updateButtons();
    Q_EMIT runFinished(ok);
}

void FineTunePanel::redrawCharts() {
    m_lossChart->setSeries({{tr("training loss"), m_loss}});
    std::vector<ChartSeries> val{{tr("with the state"), m_valPpl}};
    if (!m_valPplNoState.empty())
        val.push_back({tr("state switched off"), m_valPplNoState});
    else
        val.front().name = tr("validation");
    m_valChart->setSeries(val);
}

void FineTunePanel::log(const QString& line) {
    m_log->appendPlainText(QDateTime::currentDateTime().toString(QStringLiteral("hh:mm:ss  ")) +
                           line);
}

void FineTunePanel::updateButtons() {
    const bool busy = running();
    m_start->setEnabled(!busy && m_books->count() > 0 && m_base->count() > 0);
    m_cancel->setEnabled(busy);
    m_resume->setEnabled(!busy && m_resumable.id != 0);
    m_resume->setToolTip(m_resumable.id
                             ? tr("Continue run %1 from its last checkpoint").arg(m_resumable.id)
                             : tr("No unfinished run"));
    m_use->setVisible(!m_finished.isEmpty() && !busy);
    m_addBooks->setEnabled(!busy);
    m_removeBook->setEnabled(!busy && !m_books->selectedItems().isEmpty());
}

} // namespace baton::ui
