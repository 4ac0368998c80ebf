#include "topics_panel.h"

#include "bar_chart.h"
#include "panel_util.h"
#include "probe_panel.h"
#include "synthetic_panel.h"

#include <baton/engine/topics.h>

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace baton::ui {

namespace {

QColor topicColor(int topic, int topics) {
    // Hues spread around the circle, alternating two lightnesses so that
    // neighbours stay apart when there are many topics.
    const int hue = int(360.0 * topic / std::max(1, topics));
    return QColor::fromHsv(hue % 360, topic % 2 ? 120 : 170, topic % 2 ? 225 : 190);
}

QString visibleToken(const std::string& piece) {
    QString s = QString::fromUtf8(piece.data(), qsizetype(piece.size()));
    s.replace(QLatin1Char('\n'), QStringLiteral("\u23CE"));
    s.replace(QLatin1Char('\t'), QStringLiteral("\u21E5"));
    return QStringLiteral("\u201C%1\u201D").arg(s);
}

QTableWidget* makeTable(const QString& name, const QStringList& headers) {
    auto* t = new QTableWidget(0, int(headers.size()));
    t->setObjectName(name);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->setVisible(false);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setWordWrap(false);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

} // namespace

TopicsPanel::TopicsPanel(storage::StorageController& storage, engine::ModelJobs& engine,
                         engine::ModelJobs& lab, QWidget* parent)
    : QWidget(parent)
    , m_storage(storage)
    , m_engine(engine)
    , m_lab(lab) {
    setObjectName(QStringLiteral("topicsPanel"));
    m_model = new QComboBox;
    m_model->setObjectName(QStringLiteral("topicModel"));
    m_model->setMinimumWidth(260);
    m_analyze = new QPushButton(tr("Analyse the story"));
    m_analyze->setObjectName(QStringLiteral("topicsAnalyze"));
    m_analyze->setDefault(true);
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("topicsCancel"));
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("topicsProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("topicsStatus"));
    m_status->setWordWrap(true);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Topic model")));
    top->addWidget(m_model);
    top->addWidget(m_analyze);
    top->addWidget(m_cancel);
    top->addWidget(m_progress);
    top->addWidget(m_status, 1);

    m_windows = new BarChart(tr("Topics along the story"), tr("window"), tr("share"), true);
    m_windows->setObjectName(QStringLiteral("topicsWindowsChart"));
    m_windows->setEmptyText(tr("Each window's topic distribution appears here: open a story "
                               "on the Write page and press Analyse the story."));
    m_compare = new BarChart(tr("Latest generation: context against continuation"), tr("topic"),
                             tr("share"), false);
    m_compare->setObjectName(QStringLiteral("topicsCompareChart"));
    m_compare->setEmptyText(tr("The topics of the latest generation's context (the window "
                               "before it) and of what the model wrote appear here."));
    m_words = makeTable(QStringLiteral("topicWords"), {tr("Topic"), tr("Share"), tr("Top words")});
    m_states = makeTable(QStringLiteral("stateTokens"),
                         {tr("Window"), tr("From token"), tr("What the state carries")});
    m_states->setToolTip(tr("For each window, the state handed to it from the window before, "
                            "projected through the final layer norm and the LM head: the tokens "
                            "it points to, most probable first."));

    // Fitting on the books stored for fine-tuning.
    m_fitTopics = new QSpinBox;
    m_fitTopics->setObjectName(QStringLiteral("fitTopics"));
    m_fitTopics->setRange(2, 200);
    m_fitTopics->setValue(20);
    m_fitSweeps = new QSpinBox;
    m_fitSweeps->setObjectName(QStringLiteral("fitSweeps"));
    m_fitSweeps->setRange(10, 5000);
    m_fitSweeps->setValue(300);
    m_fitName = new QLineEdit;
    m_fitName->setObjectName(QStringLiteral("fitName"));
    m_fitName->setPlaceholderText(tr("Topics of my books"));
    m_fit = new QPushButton(tr("Fit topics"));
    m_fit->setObjectName(QStringLiteral("fitStart"));
    m_fitCancel = new QPushButton(tr("Cancel"));
    m_fitCancel->setObjectName(QStringLiteral("fitCancel"));
    m_fitProgress = new QProgressBar;
    m_fitProgress->setObjectName(QStringLiteral("fitProgress"));
    m_fitProgress->setRange(0, 1000);
    auto* fitAbout = new QLabel(
        tr("LDA by collapsed Gibbs sampling on the books of the Fine-tune page, cut into "
           "documents of about 1,000 words. Each topic needs about %1 words of vocabulary "
           "(the words found in at least 5 of the documents and in at most half of them): a "
           "short book supports only a few topics. A fit whose topics repeat each other is "
           "not kept, and you are told how many topics the books support.")
            .arg(TopicFitCheck::kWordsPerTopic));
    fitAbout->setObjectName(QStringLiteral("fitAbout"));
    fitAbout->setWordWrap(true);
    m_fitStatus = new QLabel;
    m_fitStatus->setObjectName(QStringLiteral("fitStatus"));
    m_fitStatus->setWordWrap(true);
    m_fitStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* form = new QFormLayout;
    form->addRow(tr("Topics"), m_fitTopics);
    form->addRow(tr("Sweeps"), m_fitSweeps);
    form->addRow(tr("Name"), m_fitName);
    auto* fitButtons = new QHBoxLayout;
    fitButtons->addWidget(m_fitProgress, 1);
    fitButtons->addStretch(0);
    fitButtons->addWidget(m_fitCancel);
    fitButtons->addWidget(m_fit);

    m_probe = new ProbePanel(m_storage, m_engine);
    auto* below = new QTabWidget;
    below->setObjectName(QStringLiteral("topicsBelowTabs"));
    below->addTab(m_compare, tr("Latest generation"));
    below->addTab(m_probe, tr("Memory probe"));
    m_synthetic = new SyntheticPanel;
    below->addTab(m_synthetic, tr("Synthetic task"));
    auto* left = new QSplitter(Qt::Vertical);
    left->addWidget(m_windows);
    left->addWidget(below);
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 2);
    auto* right = new QWidget;
    auto* rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(sectionTitle(tr("Topics")));
    rl->addWidget(m_words, 2);
    rl->addWidget(sectionTitle(tr("What the state carries")));
    rl->addWidget(m_states, 3);
    rl->addWidget(sectionTitle(tr("Fit a topic model")));
    rl->addWidget(fitAbout);
    rl->addLayout(form);
    rl->addLayout(fitButtons);
    rl->addWidget(m_fitStatus);
    auto* split = new QSplitter;
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    split->setSizes({3000, 2000}); // 3:2, whatever the panes ask for
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(14, 10, 14, 10);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    connect(m_analyze, &QPushButton::clicked, this, &TopicsPanel::analyze);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (m_inspectJob)
            m_engine.cancel(m_inspectJob);
    });
    connect(m_fit, &QPushButton::clicked, this, &TopicsPanel::fit);
    connect(m_fitCancel, &QPushButton::clicked, this, &TopicsPanel::cancelFit);
    connect(m_probe, &ProbePanel::failed, this, &TopicsPanel::failed);
    // The synthetic task's report of the writing model (its adapter's, if it has one).
    auto showSynthetic = [this](const engine::ModelInfo& info) {
        m_synthetic->showFolder(
            QString::fromStdString(info.adapter.empty() ? info.path : info.adapter));
    };
    connect(&m_engine, &engine::ModelJobs::modelLoaded, this, showSynthetic);
    if (m_engine.model())
        showSynthetic(*m_engine.model());
    updateButtons();
}

void TopicsPanel::setStoryProvider(std::function<std::optional<StoryText>()> provider) {
    m_provider = std::move(provider);
    m_probe->setStoryProvider([this]() -> std::optional<std::string> {
        auto story = m_provider ? m_provider() : std::nullopt;
        if (!story)
            return std::nullopt;
        return std::move(story->text);
    });
}

void TopicsPanel::setTopicsFolder(const QString& folder) {
    m_folder = folder;
}

int TopicsPanel::topicModelCount() const {
    return int(m_models.size());
}

void TopicsPanel::refresh() {
    m_storage.listTopicModels(
        this,
        [this](std::vector<storage::TopicModelRecord> models) {
            const QString selected = m_model->currentData().toString();
            m_models = std::move(models);
            m_model->clear();
            for (const auto& m : m_models) {
                m_model->addItem(
                    tr("%1 (%2, %3)")
                        .arg(QString::fromStdString(m.name),
                             countText(m.topics, tr("1 topic"), tr("%1 topics")),
                             countText(m.vocabularySize, tr("1 word"), tr("%1 words"))),
                    QString::fromStdString(m.path));
                m_model->setItemData(m_model->count() - 1, QString::fromStdString(m.summary),
                                     Qt::ToolTipRole);
            }
            if (m_models.empty())
                m_model->addItem(tr("No topic model yet: fit one below"), QString());
            // The "fit one first" hint is answered once there is a model to analyse with.
            else if (m_status->text() == fitFirstHint())
                m_status->setText(tr("Ready: open a story on the Write page and press Analyse "
                                     "the story."));
            selectTopicModel(m_pendingSelect.isEmpty() ? selected : m_pendingSelect);
            m_pendingSelect.clear();
            updateButtons();
        },
        [this](const storage::StorageError& error) {
            Q_EMIT failed(tr("The topic models could not be listed"), describeStorageError(error));
        });
}

void TopicsPanel::selectTopicModel(const QString& path) {
    const int i = m_model->findData(path);
    if (i >= 0)
        m_model->setCurrentIndex(i);
}

void TopicsPanel::setFitOptions(int topics, int sweeps, const QString& name) {
    m_fitTopics->setValue(topics);
    m_fitSweeps->setValue(sweeps);
    m_fitName->setText(name);
}

void TopicsPanel::focusFit() {
    m_fitName->setFocus();
}

void TopicsPanel::analyze() {
    if (m_inspectJob)
        return;
    const QString path = m_model->currentData().toString();
    if (path.isEmpty()) {
        m_status->setText(fitFirstHint());
        return;
    }
    if (!m_engine.model()) {
        m_status->setText(tr("No model is loaded for writing."));
        return;
    }
    const auto story = m_provider ? m_provider() : std::nullopt;
    if (!story || story->text.empty()) {
        m_status->setText(tr("Open a story with some text on the Write page first."));
        return;
    }
    engine::TopicsInspectRequest r;
    r.text = story->text;
    r.continuationByte = story->continuationByte;
    r.windows = story->windows;
    r.windowStartBytes = story->windowStarts;
    r.topicModelPath = path.toStdString();
    m_inspectJob = m_engine.run<engine::TopicsInspection>(
        this,
        [r](engine::JobContext& c) -> engine::Result<engine::TopicsInspection> {
            auto model = c.requireModel();
            if (!model)
                return model.error();
            return engine::inspectTopics(**model, r, c.cancel(), c.progressReporter());
        },
        [this](const engine::TopicsInspection& view) {
            show(view);
            onInspected({});
        },
        [this](const engine::Error& error) { onInspected(error); },
        [this](double f, const QString& m) {
            m_progress->setValue(int(f * 1000));
            m_status->setText(m);
        });
    m_progress->setValue(0);
    m_status->setText(tr("Reading the story's topics…"));
    updateButtons();
}

void TopicsPanel::cancel() {
    if (m_inspectJob)
        m_engine.cancel(m_inspectJob);
    cancelFit();
    m_probe->cancel();
}

void TopicsPanel::onInspected(const std::optional<engine::Error>& error) {
    m_inspectJob = 0;
    if (!error) {
        m_progress->setValue(1000);
        Q_EMIT analyzed();
    } else if (error->code == engine::ErrorCode::Cancelled) {
        m_status->setText(tr("Cancelled."));
    } else {
        m_status->setText(tr("The story could not be analysed."));
        Q_EMIT failed(tr("The story's topics could not be read"), describeEngineError(*error));
    }
    updateButtons();
}

void TopicsPanel::show(const engine::TopicsInspection& view) {
    m_inspection = view;
    const int k = view.topics;
    QStringList windows;
    for (const auto& w : view.windows)
        windows << QString::number(w.window + 1);
    std::vector<BarSet> sets;
    std::vector<double> share(size_t(k), 0.0);
    for (int t = 0; t < k; ++t) {
        BarSet s{tr("topic %1").arg(t + 1), {}, topicColor(t, k)};
        for (const auto& w : view.windows) {
            const double v = t < int(w.theta.size()) ? w.theta[size_t(t)] : 0.0;
            s.values.push_back(v);
            share[size_t(t)] += v / double(std::max<size_t>(1, view.windows.size()));
        }
        sets.push_back(std::move(s));
    }
    m_windows->setBars(windows, sets);

    m_words->setRowCount(k);
    for (int t = 0; t < k; ++t) {
        auto* name = new QTableWidgetItem(tr("%1").arg(t + 1));
        name->setBackground(topicColor(t, k));
        m_words->setItem(t, 0, name);
        m_words->setItem(
            t, 1,
            new QTableWidgetItem(QStringLiteral("%1%").arg(100 * share[size_t(t)], 0, 'f', 0)));
        QStringList words;
        if (t < int(view.topWords.size()))
            for (const auto& w : view.topWords[size_t(t)])
                words << QString::fromStdString(w);
        m_words->setItem(t, 2, new QTableWidgetItem(words.join(QStringLiteral(", "))));
    }
    m_words->resizeColumnsToContents();

    if (view.jsdBits >= 0) {
        QStringList topics;
        for (int t = 0; t < k; ++t)
            topics << QString::number(t + 1);
        m_compare->setBars(topics,
                           {{tr("context"), view.context, QColor(0x8a, 0x9b, 0xb0)},
                            {tr("continuation"), view.continuation, QColor(0x2f, 0x4b, 0x6e)}});
        m_compare->setTitle(tr("Latest generation: context against continuation, JSD %1 bits")
                                .arg(view.jsdBits, 0, 'f', 3));
    } else {
        m_compare->setBars({}, {});
        m_compare->setTitle(tr("Latest generation: context against continuation"));
        m_compare->setEmptyText(tr("The story has no generated text after text of yours yet."));
    }

    m_states->setRowCount(0);
    if (!view.recurrent) {
        m_states->setRowCount(1);
        m_states->setItem(0, 2,
                          new QTableWidgetItem(tr("This model carries no state (a baseline).")));
    } else {
        m_states->setRowCount(int(view.windows.size()));
        for (size_t i = 0; i < view.windows.size(); ++i) {
            const auto& w = view.windows[i];
            const int row = int(i);
            m_states->setItem(row, 0, new QTableWidgetItem(QString::number(w.window + 1)));
            m_states->setItem(row, 1, new QTableWidgetItem(QString::number(w.firstToken)));
            QStringList tokens;
            for (size_t j = 0; j < w.stateTokens.size(); ++j)
                tokens << QStringLiteral("%1 %2%")
                              .arg(visibleToken(w.stateTokens[j]))
                              .arg(100.0 * w.stateProbs[j], 0, 'f', 1);
            m_states->setItem(row, 2,
                              new QTableWidgetItem(tokens.isEmpty()
                                                       ? tr("(the first window: no state yet)")
                                                       : tokens.join(QStringLiteral("  "))));
        }
    }
    m_states->resizeColumnToContents(0);
    m_states->resizeColumnToContents(1);
    m_status->setText(
        tr("%1, %2%3")
            .arg(countText(qint64(view.windows.size()), tr("1 window"), tr("%1 windows")))
            .arg(countText(k, tr("1 topic"), tr("%1 topics")))
            .arg(view.jsdBits >= 0
                     ? tr("; latest generation JSD %1 bits").arg(view.jsdBits, 0, 'f', 3)
                     : QString()));
}

QString TopicsPanel::fitFirstHint() {
    return tr("Fit a topic model first (below), then analyse.");
}

void TopicsPanel::updateButtons() {
    m_analyze->setEnabled(!m_inspectJob);
    m_cancel->setEnabled(m_inspectJob != 0);
    m_fit->setEnabled(!fitting());
    m_fitCancel->setEnabled(m_fitJob != 0 || m_fitReading);
    m_model->setEnabled(!m_inspectJob);
    // An idle progress bar reads as an empty text field: shown only while it moves.
    m_progress->setVisible(m_inspectJob != 0);
    m_fitProgress->setVisible(fitting());
}

} // namespace baton::ui
