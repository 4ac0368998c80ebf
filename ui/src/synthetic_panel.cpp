#include "synthetic_panel.h"

#include "bar_chart.h"
#include "distance_bars.h"
#include "panel_util.h"

#include <QColor>
#include <QLabel>
#include <QStringList>
#include <QVBoxLayout>

#include <algorithm>

namespace baton::ui {

namespace {

QString stateName(const std::string& state) {
    if (state == "on")
        return SyntheticPanel::tr("state on");
    if (state == "off")
        return SyntheticPanel::tr("state off");
    return SyntheticPanel::tr("baseline (no state)");
}

QColor stateColor(const std::string& state) {
    return state == "on" ? QColor(0x2f, 0x4b, 0x6e) : QColor(0x8a, 0x9b, 0xb0);
}

// With a curriculum: the windows per training sequence of each stage, and where
// training reached it.
QString curriculumText(const engine::SyntheticReport& r) {
    if (r.config.curriculum.empty())
        return {};
    QStringList stages;
    for (const auto& st : r.stages)
        stages << SyntheticPanel::tr("%1 from step %2").arg(st.windows).arg(st.startStep + 1);
    QStringList planned;
    for (int w : r.config.curriculum)
        planned << QString::number(w);
    return SyntheticPanel::tr(" Trained with a curriculum of %1 windows per sequence; reached: %2.")
        .arg(planned.join(", "),
             stages.isEmpty() ? SyntheticPanel::tr("none recorded") : stages.join(", "));
}

} // namespace

SyntheticPanel::SyntheticPanel(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("syntheticPanel"));
    m_chart =
        new BarChart(tr("Can the state carry a fact? (synthetic task)"),
                     tr("distance from fact to question (windows)"), tr("right answers"), false);
    m_chart->setObjectName(QStringLiteral("syntheticChart"));
    m_status = figuresLabel(QStringLiteral("syntheticStatus"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 6, 4, 4);
    layout->addWidget(m_chart, 1);
    layout->addWidget(m_status);
    showFolder(QString());
}

void SyntheticPanel::showFolder(const QString& folder) {
    m_report.reset();
    m_chart->setBars({}, {});
    m_chart->setEmptyText(
        tr("Facts \u201cSET key value\u201d are stated in one window and asked for in the same "
           "window (d = 0, the control) and d windows later. A small model trained from "
           "scratch on these token sequences, with a design of the recurrence module, shows "
           "here whether that design can carry a fact across windows at all. Run it with "
           "baton-cli probe --synthetic; its report (synthetic.json) in a model's folder "
           "shows here when the model is loaded."));
    if (folder.isEmpty()) {
        m_status->setText(tr("No model is loaded."));
        return;
    }
    auto report = engine::readSyntheticReport(folder.toStdString());
    if (!report) {
        m_status->setText(tr("The synthetic-task report in %1 could not be read: %2")
                              .arg(folder, QString::fromStdString(report.error().message)));
        return;
    }
    if (!*report) {
        m_status->setText(tr("The loaded model's folder holds no synthetic-task result."));
        return;
    }
    showReport(**report);
}

void SyntheticPanel::showReport(const engine::SyntheticReport& r) {
    m_report = r;
    const auto& e = r.evaluation;
    std::vector<std::string> states;
    std::vector<DistanceSet> sets;
    std::vector<DistanceCell> cells;
    for (const auto& c : e.cells) {
        auto at = std::find(states.begin(), states.end(), c.state);
        if (at == states.end()) {
            sets.push_back({stateName(c.state), stateColor(c.state)});
            at = states.insert(states.end(), c.state);
        }
        cells.push_back({c.distance, int(at - states.begin()), c.accuracy(), c.accuracyStdError()});
    }
    const DistanceFigures figures = showDistanceBars(*m_chart, sets, cells);
    m_chart->setTitle(tr("Right answers by distance, design %1 (chance %2)")
                          .arg(QString::fromStdString(r.config.design))
                          .arg(e.chance, 0, 'f', 3));
    const auto& c = r.config;
    m_status->setText(
        tr("Measured on the synthetic task, not on text: a %1-layer, %2-wide model trained "
           "from scratch (seed %3, %4 steps) with windows of %5 tokens, %6 facts per window "
           "and %7 values to choose from; %8 sequences of %9 windows (standard error up to "
           "%10). %11.")
            .arg(c.layers)
            .arg(c.embd)
            .arg(c.seed)
            .arg(r.steps)
            .arg(c.task.window)
            .arg(c.task.factsPerWindow)
            .arg(c.task.values)
            .arg(e.sequences)
            .arg(e.windows)
            .arg(figures.largestStdError, 0, 'f', 3)
            .arg(figures.text) +
        curriculumText(r));
}

} // namespace baton::ui
