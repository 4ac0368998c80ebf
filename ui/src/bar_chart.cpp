#include "bar_chart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QStackedBarSeries>
#include <QStackedLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace baton::ui {

class BarChart::Impl {
public:
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QLabel* empty = nullptr;
    QStackedLayout* stack = nullptr;
    QString xTitle, yTitle;
    bool stacked = false;
};

BarChart::BarChart(const QString& title, const QString& xTitle, const QString& yTitle, bool stacked,
                   QWidget* parent)
    : QWidget(parent)
    , m_impl(std::make_unique<Impl>()) {
    m_impl->xTitle = xTitle;
    m_impl->yTitle = yTitle;
    m_impl->stacked = stacked;
    m_impl->chart = new QChart;
    m_impl->chart->setTitle(title);
    m_impl->chart->setAnimationOptions(QChart::NoAnimation);
    m_impl->chart->legend()->setAlignment(Qt::AlignRight);
    m_impl->chart->setMargins(QMargins(4, 4, 4, 4));
    m_impl->view = new QChartView(m_impl->chart);
    m_impl->view->setRenderHint(QPainter::Antialiasing);
    m_impl->view->setMinimumHeight(200);
    m_impl->empty = new QLabel;
    m_impl->empty->setAlignment(Qt::AlignCenter);
    m_impl->empty->setWordWrap(true);
    m_impl->empty->setForegroundRole(QPalette::PlaceholderText);
    m_impl->stack = new QStackedLayout(this);
    m_impl->stack->setContentsMargins(0, 0, 0, 0);
    m_impl->stack->addWidget(m_impl->empty);
    m_impl->stack->addWidget(m_impl->view);
    setEmptyText(tr("No data yet."));
}

BarChart::~BarChart() = default;

void BarChart::setTitle(const QString& title) {
    m_impl->chart->setTitle(title);
}

void BarChart::setEmptyText(const QString& text) {
    m_impl->empty->setText(text);
    if (m_count == 0)
        m_impl->stack->setCurrentWidget(m_impl->empty);
}

void BarChart::setBars(const QStringList& categories, const std::vector<BarSet>& sets) {
    QChart* chart = m_impl->chart;
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes())
        chart->removeAxis(axis);
    m_count = int(sets.size());
    m_categories = int(categories.size());
    if (sets.empty() || categories.isEmpty()) {
        m_count = 0;
        m_impl->stack->setCurrentWidget(m_impl->empty);
        return;
    }
    QAbstractBarSeries* series = m_impl->stacked
                                     ? static_cast<QAbstractBarSeries*>(new QStackedBarSeries)
                                     : static_cast<QAbstractBarSeries*>(new QBarSeries);
    double top = 0;
    std::vector<double> sums(size_t(categories.size()), 0.0);
    for (const BarSet& s : sets) {
        auto* set = new QBarSet(s.name);
        for (int i = 0; i < categories.size(); ++i) {
            const double v = i < int(s.values.size()) ? s.values[size_t(i)] : 0.0;
            set->append(v);
            sums[size_t(i)] += v;
            top = std::max(top, v);
        }
        if (s.color.isValid()) {
            set->setColor(s.color);
            set->setBorderColor(s.color.darker(115));
        }
        series->append(set);
    }
    if (m_impl->stacked)
        top = *std::max_element(sums.begin(), sums.end());
    series->setBarWidth(m_impl->stacked ? 0.9 : 0.7);
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    x->setTitleText(m_impl->xTitle);
    // Many categories: label only some of them (Qt draws every label otherwise).
    if (categories.size() > 40)
        x->setLabelsVisible(false);
    auto* y = new QValueAxis;
    // Shares stacked to 1 end at 1; other bars get a little room above.
    const bool unit = m_impl->stacked && std::abs(top - 1.0) < 1e-6;
    y->setRange(0, unit ? 1.0 : (top > 0 ? top * 1.05 : 1.0));
    if (!unit)
        y->applyNiceNumbers(); // ticks at round values
    y->setTitleText(m_impl->yTitle);
    y->setLabelFormat(QStringLiteral("%.2g"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    chart->legend()->setVisible(sets.size() > 1 && sets.size() <= 24);
    m_impl->stack->setCurrentWidget(m_impl->view);
}

} // namespace baton::ui
