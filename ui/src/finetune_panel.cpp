#include "finetune_panel.h"

#include "line_chart.h"
#include "model_catalog.h"
#include "panel_util.h"

#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace baton::ui {

FineTunePanel::FineTunePanel(ModelCatalog& catalog, LabBackend& backend, QWidget* parent)
    : QWidget(parent)
    , m_catalog(catalog)
    , m_presenter(new FineTunePresenter(backend, catalog, this)) {
    setObjectName(QStringLiteral("fineTunePanel"));
    setAcceptDrops(true);

    m_books = new QListWidget;
    m_books->setObjectName(QStringLiteral("bookList"));
    m_books->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_books->setMinimumHeight(110);
    m_books->setToolTip(tr("Drop .txt, .md, .epub or library .tar.xz files here"));
    m_bookHint = new QLabel(tr("No books yet.\n\nPress Add books… below, or drop files "
                               "here: plain text (.txt), Markdown (.md) or DRM-free EPUB "
                               "(.epub), in UTF-8, or a library's shards (.tar.xz: each "
                               "work a book).\n\nThe end of each book (about a tenth) "
                               "is held out: never trained on, it shows whether training "
                               "helped."));
    m_bookHint->setObjectName(QStringLiteral("bookHint"));
    m_bookHint->setWordWrap(true);
    m_bookHint->setAlignment(Qt::AlignCenter);
    // Its height is what the list's place offers, not what the wrapped text asks.
    m_bookHint->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Ignored);
    m_bookHint->setMinimumHeight(150);
    m_bookHint->setStyleSheet(QStringLiteral("QLabel#bookHint { border: 1px dashed #9aa3ad; "
                                             "border-radius: 4px; color: #5b6470; "
                                             "padding: 10px; }"));
    m_bookStack = new QStackedWidget;
    m_bookStack->addWidget(m_bookHint);
    m_bookStack->addWidget(m_books);
    m_addBooks = new QPushButton(tr("Add books…"));
    m_addBooks->setObjectName(QStringLiteral("addBooks"));
    m_removeBook = new QPushButton(tr("Remove"));
    connect(m_addBooks, &QPushButton::clicked, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Add books to fine-tune on"), QString(),
            tr("Books (*.txt *.md *.markdown *.epub *.tar.xz *.txz *.tar);;All files (*)"));
        if (!files.isEmpty())
            m_presenter->importBooks(files);
    });
    connect(m_removeBook, &QPushButton::clicked, this, [this] {
        std::vector<int64_t> ids;
        for (auto* item : m_books->selectedItems())
            ids.push_back(item->data(Qt::UserRole).toLongLong());
        m_presenter->removeBooks(ids);
    });
    connect(m_books, &QListWidget::itemSelectionChanged, this, &FineTunePanel::updateButtons);

    m_base = new QComboBox;
    m_base->setObjectName(QStringLiteral("fineTuneBase"));
    // The model's name whole; its shape and folder in the tooltip.
    m_base->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_base, &QComboBox::currentIndexChanged, m_base,
            [this] { m_base->setToolTip(m_base->currentData(Qt::ToolTipRole).toString()); });
    m_mode = new QComboBox;
    m_mode->setObjectName(QStringLiteral("fineTuneMode"));
    m_mode->addItem(tr("Recurrent (carries a state)"), QStringLiteral("recurrent"));
    m_mode->addItem(tr("Baseline (no state)"), QStringLiteral("baseline"));
    m_scope = new QComboBox;
    m_scope->setObjectName(QStringLiteral("fineTuneScope"));
    m_scope->addItem(tr("All weights"), QStringLiteral("all"));
    m_scope->addItem(tr("The recurrence module only"), QStringLiteral("recurrence"));
    m_scope->addItem(tr("A recurrence adapter"), QStringLiteral("adapter"));
    m_scope->setToolTip(
        tr("All weights: a new model. The module only: a new model whose base weights are "
           "frozen. An adapter: the module alone (four state slots), saved as a small folder "
           "that loads onto this base model, which stays as it is; it needs a baseline base."));
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
    connect(m_use, &QPushButton::clicked, this,
            [this] { Q_EMIT useRequested(m_presenter->finishedModel()); });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_resume);
    buttons->addStretch(1);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_start);

    auto* left = new QWidget;
    auto* ll = new QVBoxLayout(left);
    ll->setContentsMargins(14, 12, 10, 12);
    m_bookTitle = sectionTitle(tr("Books"));
    ll->addWidget(m_bookTitle);
    ll->addWidget(m_bookStack, 1);
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
    // This page trains in this process; bigger runs go to the command line.
    auto* larger = new QLabel(
        tr("Several GPUs or machines train one model data-parallel from the command line: "
           "<span style=\"white-space:nowrap\"><code>baton-cli train --nproc N</code></span> "
           "on one machine, or one process per machine under torchrun or Slurm "
           "(docs/training.md, \"Training on several processes\")."));
    larger->setObjectName(QStringLiteral("fineTuneLargerRuns"));
    larger->setWordWrap(true);
    larger->setTextFormat(Qt::RichText);
    larger->setForegroundRole(QPalette::PlaceholderText);
    ll->addSpacing(4);
    ll->addWidget(larger);
    auto* scroll = m_form = new QScrollArea;
    scroll->setWidget(left);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // As wide as the form needs: it scrolls up and down, never cut at the side.
    scroll->setMinimumWidth(left->minimumSizeHint().width() +
                            scroll->verticalScrollBar()->sizeHint().width());

    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("fineTuneProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setFormat(QStringLiteral("%p%"));
    m_progress->setVisible(false); // until a run starts: idle, it reads as a text field
    m_stats = new QLabel(tr("No run yet."));
    m_stats->setObjectName(QStringLiteral("fineTuneStats"));
    m_stats->setWordWrap(true);
    m_lossChart = new LineChart(tr("Training loss"), tr("step"), tr("loss (nats per token)"));
    m_lossChart->setObjectName(QStringLiteral("lossChart"));
    m_valChart = new LineChart(tr("Validation perplexity"), tr("step"), tr("perplexity"));
    m_valChart->setObjectName(QStringLiteral("validationChart"));
    m_heldOut = new QLabel;
    m_heldOut->setObjectName(QStringLiteral("fineTuneHeldOut"));
    m_heldOut->setWordWrap(true);
    m_heldOut->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_heldOut->setVisible(false);
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
    rl->addWidget(m_heldOut);
    auto* charts = new QHBoxLayout;
    charts->addWidget(m_lossChart);
    charts->addWidget(m_valChart);
    rl->addLayout(charts, 1);
    rl->addWidget(m_log);

    auto* split = new QSplitter;
    split->addWidget(scroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    split->setCollapsible(0, false);
    split->setSizes({scroll->minimumWidth(), 900});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(&m_catalog, &ModelCatalog::changed, this, [this] {
        const QString keep = m_base->currentData().toString();
        m_base->clear();
        for (const CatalogModel& m : m_catalog.models()) {
            if (!m.present || m.isAdapter())
                continue;
            m_base->addItem(shownModelName(m.name), m.path);
            m_base->setItemData(m_base->count() - 1,
                                QStringLiteral("%1 — %2\n%3").arg(m.name, m.summary(), m.path),
                                Qt::ToolTipRole);
        }
        const int i = m_base->findData(keep);
        if (i >= 0)
            m_base->setCurrentIndex(i);
        m_base->setToolTip(m_base->currentData(Qt::ToolTipRole).toString());
        m_form->setMinimumWidth(m_form->widget()->minimumSizeHint().width() +
                                m_form->verticalScrollBar()->sizeHint().width());
        updateButtons();
    });
    connect(m_presenter, &FineTunePresenter::booksChanged, this, &FineTunePanel::showBooks);
    connect(m_presenter, &FineTunePresenter::stateChanged, this, &FineTunePanel::updateButtons);
    connect(m_presenter, &FineTunePresenter::status, m_stats, &QLabel::setText);
    connect(m_presenter, &FineTunePresenter::progress, this,
            [this](double f) { m_progress->setValue(int(1000 * f)); });
    connect(m_presenter, &FineTunePresenter::logLine, this, [this](const QString& line) {
        m_log->appendPlainText(QDateTime::currentDateTime().toString(QStringLiteral("hh:mm:ss  ")) +
                               line);
    });
    connect(m_presenter, &FineTunePresenter::logCleared, m_log, &QPlainTextEdit::clear);
    connect(m_presenter, &FineTunePresenter::chartsChanged, this, &FineTunePanel::redrawCharts);
    connect(m_presenter, &FineTunePresenter::heldOutChanged, this, [this] {
        const QString text = m_presenter->heldOutSummary();
        m_heldOut->setText(text);
        m_heldOut->setVisible(!text.isEmpty());
    });
    connect(m_presenter, &FineTunePresenter::settingsRestored, this, &FineTunePanel::setSettings);
    connect(m_presenter, &FineTunePresenter::runFinished, this, &FineTunePanel::runFinished);
    connect(m_presenter, &FineTunePresenter::failed, this, &FineTunePanel::failed);
    updateButtons();
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
        m_presenter->importBooks(files);
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

void FineTunePanel::setRunsFolder(const QString& folder) {
    m_presenter->setRunsFolder(folder);
}

void FineTunePanel::refresh() {
    m_presenter->refresh();
}

void FineTunePanel::importBooks(const QStringList& files) {
    m_presenter->importBooks(files);
}

int FineTunePanel::bookCount() const {
    return m_books->count();
}

void FineTunePanel::prepareRecurrence(const QString& base) {
    const auto m = m_catalog.byPath(base);
    if (!m || running())
        return;
    setSettings(recurrencePreset(*m));
    m_stats->setText(
        tr("Adding recurrence to %1: an adapter trained on your books, with settings for the "
           "model's size. Add books, then press Start.")
            .arg(m->name));
}

bool FineTunePanel::start() {
    return m_presenter->start(settings());
}

void FineTunePanel::cancel() {
    m_presenter->cancel();
}

bool FineTunePanel::resume() {
    return m_presenter->resume();
}

bool FineTunePanel::running() const {
    return m_presenter->running();
}

bool FineTunePanel::canResume() const {
    return m_presenter->canResume();
}

QString FineTunePanel::finishedModel() const {
    return m_presenter->finishedModel();
}

int FineTunePanel::lossPoints() const {
    return int(m_presenter->loss().size());
}

int FineTunePanel::validationPoints() const {
    return int(m_presenter->validation().size());
}

void FineTunePanel::showBooks() {
    m_books->clear();
    for (const auto& b : m_presenter->books()) {
        auto* item = new QListWidgetItem(
            QStringLiteral("%1  ·  %2")
                .arg(QString::fromStdString(b.title), formatBytes(b.textBytes)));
        item->setData(Qt::UserRole, qint64(b.id));
        item->setToolTip(QString::fromStdString(b.sourcePath));
        m_books->addItem(item);
    }
    const int n = m_books->count();
    m_bookStack->setCurrentWidget(n > 0 ? static_cast<QWidget*>(m_books) : m_bookHint);
    m_bookTitle->setText(n > 0 ? tr("Books (%1)").arg(n) : tr("Books"));
    updateButtons();
    Q_EMIT booksChanged();
}

void FineTunePanel::redrawCharts() {
    m_lossChart->setSeries({{tr("training loss"), m_presenter->loss()}});
    std::vector<ChartSeries> val{{tr("with the state"), m_presenter->validation()}};
    if (!m_presenter->validationNoState().empty())
        val.push_back({tr("state switched off"), m_presenter->validationNoState()});
    else
        val.front().name = tr("validation");
    m_valChart->setSeries(val);
}

void FineTunePanel::updateButtons() {
    const bool busy = running() || m_presenter->importing();
    m_start->setEnabled(!busy && m_books->count() > 0 && m_base->count() > 0);
    m_cancel->setEnabled(busy);
    m_resume->setEnabled(!busy && m_presenter->canResume());
    m_resume->setToolTip(
        m_presenter->canResume()
            ? tr("Continue run %1 from its last checkpoint").arg(m_presenter->resumableRun())
            : tr("No unfinished run"));
    m_use->setVisible(!m_presenter->finishedModel().isEmpty() && !busy);
    m_progress->setVisible(busy);
    // The held-out line follows the run ("measured when training ends" until then).
    const QString heldOut = m_presenter->heldOutSummary();
    m_heldOut->setText(heldOut);
    m_heldOut->setVisible(!heldOut.isEmpty());
    m_addBooks->setEnabled(!busy);
    m_removeBook->setEnabled(!busy && !m_books->selectedItems().isEmpty());
}

} // namespace baton::ui
