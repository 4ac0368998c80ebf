#include "line_chart.h"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStackedLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace baton::ui {

class LineChart::Impl {
public:
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QValueAxis* x = nullptr;
    QValueAxis* y = nullptr;
    QLabel* empty = nullptr;
    QStackedLayout* stack = nullptr;
};

namespace {
// A palette that stays apart for the first series (two models, several T).
const QColor kColors[] = {QColor(0x2f, 0x6f, 0xb3), QColor(0xd0, 0x6a, 0x1f),
                          QColor(0x3a, 0x93, 0x4f), QColor(0x8e, 0x4c, 0xa8),
                          QColor(0xb8, 0x3b, 0x4b), QColor(0x5b, 0x6b, 0x78)};

// The data's range [lo, hi] with a margin, never below `floor` unless the data are.
void fit(QValueAxis* axis, double lo, double hi, double floor) {
    const double bottom = std::min(lo, floor);
    if (!(hi > lo)) {
        const double pad = std::max(std::abs(lo) * 0.05, 1.0);
        lo -= pad;
        hi += pad;
    } else {
        const double pad = (hi - lo) * 0.08;
        lo -= pad;
        hi += pad;
    }
    lo = std::max(lo, bottom);
    axis->setRange(lo, hi);
    axis->applyNiceNumbers();
    // Nice numbers round the start down to a tick: a floor of 0 is a tick, another
    // floor may not be.
    if (axis->min() < bottom)
        axis->setMin(bottom);
    // Plain numbers with as many decimals as the tick spacing needs (no 1e+04).
    const double span = axis->max() - axis->min();
    const double tick = span / std::max(1, axis->tickCount() - 1);
    const int decimals = tick >= 1 ? 0 : std::min(6, int(std::ceil(-std::log10(tick))));
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}
} // namespace

LineChart::LineChart(const QString& title, const QString& xTitle, const QString& yTitle,
                     QWidget* parent)
    : QWidget(parent)
    , m_impl(new Impl)
    , m_xFloor(-INFINITY)
    , m_yFloor(-INFINITY) {
    auto& d = *m_impl;
    d.chart = new QChart;
    d.chart->setTitle(title);
    d.chart->setMargins(QMargins(4, 4, 4, 4));
    d.chart->legend()->setAlignment(Qt::AlignBottom);
    d.x = new QValueAxis;
    d.x->setTitleText(xTitle);
    d.x->setLabelFormat(QStringLiteral("%.3g"));
    d.y = new QValueAxis;
    d.y->setTitleText(yTitle);
    d.y->setLabelFormat(QStringLiteral("%.4g"));
    d.chart->addAxis(d.x, Qt::AlignBottom);
    d.chart->addAxis(d.y, Qt::AlignLeft);
    d.view = new QChartView(d.chart);
    d.view->setRenderHint(QPainter::Antialiasing);
    d.view->setMinimumHeight(220);
    d.empty = new QLabel;
    d.empty->setAlignment(Qt::AlignCenter);
    d.empty->setWordWrap(true);
    d.empty->setText(tr("%1\n\nNo results yet.").arg(title));
    QPalette p = d.empty->palette();
    p.setColor(QPalette::WindowText, QColor(0x70, 0x70, 0x70));
    d.empty->setPalette(p);
    d.stack = new QStackedLayout(this);
    d.stack->addWidget(d.empty);
    d.stack->addWidget(d.view);
    d.stack->setCurrentWidget(d.empty);
}

LineChart::~LineChart() = default;

void LineChart::setEmptyText(const QString& text) {
    m_impl->empty->setText(text);
}

void LineChart::setFloors(double x, double y) {
    m_xFloor = x;
    m_yFloor = y;
}

std::pair<double, double> LineChart::xRange() const {
    return {m_impl->x->min(), m_impl->x->max()};
}

std::pair<double, double> LineChart::yRange() const {
    return {m_impl->y->min(), m_impl->y->max()};
}

void LineChart::setSeries(const std::vector<ChartSeries>& series) {
    auto& d = *m_impl;
    d.chart->removeAllSeries();
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    int n = 0;
    for (const ChartSeries& s : series) {
        if (s.points.empty())
            continue;
        const QColor c = kColors[n % (sizeof(kColors) / sizeof(kColors[0]))];
        auto* line = new QLineSeries;
        line->setName(s.name);
        QPen pen(c);
        pen.setWidthF(2.0);
        line->setPen(pen);
        for (const QPointF& p : s.points) {
            line->append(p);
            x0 = std::min(x0, p.x());
            x1 = std::max(x1, p.x());
            y0 = std::min(y0, p.y());
            y1 = std::max(y1, p.y());
        }
        d.chart->addSeries(line);
        line->attachAxis(d.x);
        line->attachAxis(d.y);
        if (s.points.size() <= 60) {
            auto* dots = new QScatterSeries;
            dots->setMarkerSize(7);
            dots->setColor(c);
            dots->setBorderColor(c);
            for (const QPointF& p : s.points)
                dots->append(p);
            d.chart->addSeries(dots);
            dots->attachAxis(d.x);
            dots->attachAxis(d.y);
            // The line carries the legend entry.
            const auto markers = d.chart->legend()->markers(dots);
            for (auto* m : markers)
                m->setVisible(false);
        }
        ++n;
    }
    m_count = n;
    d.chart->legend()->setVisible(n > 1);
    if (n == 0) {
        d.stack->setCurrentWidget(d.empty);
        return;
    }
    fit(d.x, x0, x1, m_xFloor);
    fit(d.y, y0, y1, m_yFloor);
    d.stack->setCurrentWidget(d.view);
}

} // namespace baton::ui
