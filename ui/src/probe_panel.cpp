#include "probe_panel.h"

#include "bar_chart.h"
#include "distance_bars.h"
#include "panel_util.h"

#include <baton/engine/probe.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace baton::ui {

namespace {

constexpr qint64 kStory = -1; // the source combo's item for the open story

QColor stateColor(engine::StateSource s, bool recurrent) {
    if (!recurrent)
        return QColor(0x8a, 0x9b, 0xb0);
    switch (s) {
    case engine::StateSource::On:
        return QColor(0x2f, 0x4b, 0x6e);
    case engine::StateSource::Off:
        return QColor(0x8a, 0x9b, 0xb0);
    case engine::StateSource::Mean:
        return QColor(0x3c, 0x9a, 0x8f);
    case engine::StateSource::Far:
    case engine::StateSource::Shuffled:
        return QColor(0xd0, 0x8c, 0x3a);
    }
    return {};
}

QString stateLabel(engine::StateSource s, bool recurrent) {
    if (!recurrent)
        return ProbePanel::tr("baseline (no state)");
    switch (s) {
    case engine::StateSource::On:
        return ProbePanel::tr("state on");
    case engine::StateSource::Off:
        return ProbePanel::tr("state off");
    case engine::StateSource::Mean:
        return ProbePanel::tr("mean state");
    case engine::StateSource::Far:
        return ProbePanel::tr("state from far away");
    case engine::StateSource::Shuffled:
        return ProbePanel::tr("another episode's state");
    }
    return {};
}

} // namespace

ProbePanel::ProbePanel(storage::StorageController& storage, engine::ModelJobs& engine,
                       QWidget* parent)
    : QWidget(parent)
    , m_storage(storage)
    , m_engine(engine) {
    setObjectName(QStringLiteral("probePanel"));
    m_source = new QComboBox;
    m_source->setObjectName(QStringLiteral("probeSource"));
    m_source->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_source->setMinimumContentsLength(14);
    m_source->setToolTip(tr("A book the model was not trained on (stored on the Fine-tune "
                            "page), or the open story"));
    m_episodes = new QSpinBox;
    m_episodes->setObjectName(QStringLiteral("probeEpisodes"));
    m_episodes->setRange(10, 2000);
    m_episodes->setValue(100);
    m_episodes->setToolTip(tr("Episodes per distance: more give a smaller standard error "
                              "(about 0.03 at 100)"));
    m_run = new QPushButton(tr("Run the probe"));
    m_run->setObjectName(QStringLiteral("probeRun"));
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("probeCancel"));
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("probeProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(110);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Text")));
    controls->addWidget(m_source, 1);
    controls->addWidget(new QLabel(tr("Episodes")));
    controls->addWidget(m_episodes);
    controls->addWidget(m_run);
    controls->addWidget(m_cancel);
    controls->addWidget(m_progress);

    m_chart =
        new BarChart(tr("Does the model remember a fact from d windows back?"),
                     tr("distance from fact to question (windows)"), tr("right answers"), false);
    m_chart->setObjectName(QStringLiteral("probeChart"));
    m_chart->setEmptyText(
        tr("A fact is stated in one window (\u201cMr. Crane hid the key in the cellar.\u201d) "
           "and asked for d windows later (\u201cThe key had been hidden in the\u201d). The "
           "model's answer is the likeliest of eight places, names or colours: chance is "
           "1/8. Without a state a model cannot know a fact from an earlier window."));
    m_status = figuresLabel(QStringLiteral("probeStatus"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 6, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(m_chart, 1);
    layout->addWidget(m_status);

    connect(m_run, &QPushButton::clicked, this, &ProbePanel::run);
    connect(m_cancel, &QPushButton::clicked, this, &ProbePanel::cancel);
    updateButtons();
}

void ProbePanel::setStoryProvider(std::function<std::optional<std::string>()> provider) {
    m_story = std::move(provider);
}

void ProbePanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    refreshBooks();
}

void ProbePanel::refreshBooks() {
    m_storage.listBooks(
        this,
        [this](const std::vector<storage::Book>& books) {
            const QVariant selected = m_source->currentData();
            m_source->clear();
            for (const auto& b : books)
                m_source->addItem(tr("%1 (%2 kB)")
                                      .arg(QString::fromStdString(b.title))
                                      .arg((b.textBytes + 512) / 1024),
                                  qint64(b.id));
            m_source->addItem(tr("The open story"), kStory);
            const int i = selected.isValid() ? m_source->findData(selected) : -1;
            m_source->setCurrentIndex(std::max(0, i));
        },
        [this](const storage::StorageError& error) {
            // Said here rather than in a dialog: the list is read each time the tab shows.
            m_status->setText(
                tr("The books could not be listed: %1").arg(describeStorageError(error).message));
        });
}

int ProbePanel::sourceCount() const {
    return m_source->count();
}

void ProbePanel::selectBook(int64_t id) {
    if (const int i = m_source->findData(qint64(id)); i >= 0)
        m_source->setCurrentIndex(i);
}

void ProbePanel::selectStory() {
    if (const int i = m_source->findData(kStory); i >= 0)
        m_source->setCurrentIndex(i);
}

void ProbePanel::setEpisodes(int episodes) {
    m_episodes->setValue(episodes);
}

bool ProbePanel::run() {
    if (running())
        return false;
    if (!m_engine.model()) {
        m_status->setText(tr("No model is loaded for writing: load one on the Models page."));
        return false;
    }
    if (m_source->count() == 0) {
        m_status->setText(tr("The list of books is still being read; try again."));
        return false;
    }
    const qint64 id = m_source->currentData().toLongLong();
    const QString label = m_source->currentText();
    if (id == kStory) {
        auto text = m_story ? m_story() : std::nullopt;
        if (!text || text->empty()) {
            m_status->setText(tr("Open a story with some text on the Write page first."));
            return false;
        }
        start({std::move(*text)}, tr("the open story"));
        return true;
    }
    m_reading = true;
    m_cancelRequested = false;
    m_status->setText(tr("Reading %1…").arg(label));
    updateButtons();
    m_storage.bookTexts(
        {int64_t(id)}, this,
        [this, label](std::vector<storage::Book> books) {
            m_reading = false;
            if (m_cancelRequested || books.empty()) {
                m_status->setText(m_cancelRequested ? tr("Cancelled.")
                                                    : tr("%1 is no longer stored.").arg(label));
                updateButtons();
                return;
            }
            start({std::move(books.front().text)}, label);
        },
        [this](const storage::StorageError& error) {
            m_reading = false;
            updateButtons();
            Q_EMIT failed(tr("The book could not be read"), describeStorageError(error));
        });
    return true;
}

void ProbePanel::start(std::vector<std::string> texts, const QString& label) {
    engine::ProbeOptions options;
    options.episodes = m_episodes->value();
    options.distances = {0, 1, 2, 4};
    options.states = {engine::StateSource::On, engine::StateSource::Off, engine::StateSource::Mean,
                      engine::StateSource::Shuffled};
    m_label = label;
    m_job = m_engine.run<engine::ProbeResult>(
        this,
        [texts = std::move(texts),
         options](engine::JobContext& c) mutable -> engine::Result<engine::ProbeResult> {
            auto model = c.requireModel();
            if (!model)
                return model.error();
            options.cancel = c.cancel();
            options.progress = [&c](int64_t done, int64_t total) {
                c.progress(total > 0 ? double(done) / double(total) : 1.0,
                           "episode " + std::to_string(done) + " of " + std::to_string(total));
                return !c.cancelled();
            };
            return engine::runProbe(**model, texts, options);
        },
        [this](const engine::ProbeResult& result) {
            showResult(result);
            onFinished({});
        },
        [this](const engine::Error& error) { onFinished(error); },
        [this](double f, const QString& message) {
            m_progress->setValue(int(f * 1000));
            m_status->setText(tr("Probing %1: %2").arg(m_label, message));
        });
    m_progress->setValue(0);
    m_status->setText(tr("Probing %1…").arg(label));
    updateButtons();
}

void ProbePanel::cancel() {
    m_cancelRequested = true;
    if (m_job)
        m_engine.cancel(m_job);
}

void ProbePanel::onFinished(const std::optional<engine::Error>& failure) {
    m_job = 0;
    updateButtons();
    if (!failure) {
        m_progress->setValue(1000);
        Q_EMIT probed();
        return;
    }
    const engine::Error& error = *failure;
    if (error.code == engine::ErrorCode::Cancelled) {
        m_status->setText(tr("Cancelled."));
    } else if (error.code == engine::ErrorCode::InvalidArgument) {
        // Too short a text for the distances: the engine's reason is the advice.
        m_status->setText(
            tr("Cannot probe %1: %2").arg(m_label, QString::fromStdString(error.message)));
    } else {
        m_status->setText(tr("The probe failed."));
        Q_EMIT failed(tr("The memory probe failed"), describeEngineError(error));
    }
}

void ProbePanel::showResult(const engine::ProbeResult& result) {
    m_result = result;
    // Distances along x, one bar per state (cells are distance-major).
    std::vector<engine::StateSource> states;
    std::vector<DistanceSet> sets;
    std::vector<DistanceCell> cells;
    for (const auto& c : result.cells) {
        auto at = std::find(states.begin(), states.end(), c.state);
        if (at == states.end()) {
            sets.push_back(
                {stateLabel(c.state, result.recurrent), stateColor(c.state, result.recurrent)});
            at = states.insert(states.end(), c.state);
        }
        cells.push_back({c.distance, int(at - states.begin()), c.accuracy(), c.accuracyStdError()});
    }
    const DistanceFigures figures = showDistanceBars(*m_chart, sets, cells);
    m_chart->setTitle(tr("Right answers by distance, window %1 (chance %2)")
                          .arg(result.windows.window)
                          .arg(result.chance, 0, 'f', 3));
    const int episodes = result.cells.empty() ? 0 : result.cells.front().episodes;
    m_status->setText(
        tr("%1, %2 episodes per distance (standard error up to %3). %4. %5")
            .arg(m_label)
            .arg(episodes)
            .arg(figures.largestStdError, 0, 'f', 3)
            .arg(figures.text)
            .arg(result.recurrent
                     ? tr("What the state carries is the gap between \u201cstate on\u201d and "
                          "the others at d \u2265 1.")
                     : tr("A baseline cannot see an earlier window: at d \u2265 1 it can only "
                          "guess.")));
}

void ProbePanel::updateButtons() {
    m_run->setEnabled(!running());
    m_cancel->setEnabled(running());
    m_source->setEnabled(!running());
    m_episodes->setEnabled(!running());
}

} // namespace baton::ui
