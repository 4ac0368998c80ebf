// A line chart (Qt Charts) for the panels: named series of points, axes that fit
// the data with a margin, markers on the points, a legend when there is more than
// one series. setSeries() replaces everything (cheap at the panels' sizes).
#pragma once

#include <QPointF>
#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

namespace baton::ui {

struct ChartSeries {
    QString name;
    std::vector<QPointF> points;
};

class LineChart : public QWidget {
    Q_OBJECT
public:
    LineChart(const QString& title, const QString& xTitle, const QString& yTitle,
              QWidget* parent = nullptr);
    ~LineChart() override;
    void setSeries(const std::vector<ChartSeries>& series);
    // Shown in the middle while there is no data.
    void setEmptyText(const QString& text);
    int seriesCount() const { return m_count; }

private:
    class Impl;
    std::unique_ptr<Impl> m_impl;
    int m_count = 0;
};

} // namespace baton::ui
