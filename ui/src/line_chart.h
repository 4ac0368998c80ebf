// A line chart (Qt Charts) for the panels: named series of points, axes that fit
// the data with a margin, markers on the points, a legend when there is more than
// one series. setSeries() replaces everything (cheap at the panels' sizes). An axis
// can have a floor (setFloors): the margin never takes it below, so an axis of
// quantities that cannot be negative (overlaps, perplexities) never starts below 0.
#pragma once

#include <QPointF>
#include <QString>
#include <QWidget>

#include <memory>
#include <utility>
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
    // The lowest start of each axis (-infinity: none, the default). Applies from the
    // next setSeries(); data below a floor moves the axis down to the data.
    void setFloors(double x, double y);
    int seriesCount() const { return m_count; }
    // The axes' ranges as drawn (min, max).
    std::pair<double, double> xRange() const;
    std::pair<double, double> yRange() const;

private:
    class Impl;
    std::unique_ptr<Impl> m_impl;
    int m_count = 0;
    double m_xFloor, m_yFloor;
};

} // namespace baton::ui
