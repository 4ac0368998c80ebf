// Right answers by distance, one set of bars per state: the memory probe's chart and
// the synthetic task's. Fills a BarChart (distances along x, in the order they first
// appear) and returns every figure as text for the panel's status line.
#pragma once

#include <QColor>
#include <QString>

#include <vector>

namespace baton::ui {

class BarChart;

struct DistanceSet {
    QString name; // "state on", ...
    QColor color;
};

struct DistanceCell {
    int distance = 0;
    int set = 0; // index into the sets
    double accuracy = 0;
    double stdError = 0;
};

struct DistanceFigures {
    QString text; // "state on: 0.95 / 0.70 / ...; state off: ..."
    double largestStdError = 0;
};

DistanceFigures showDistanceBars(BarChart& chart, const std::vector<DistanceSet>& sets,
                                 const std::vector<DistanceCell>& cells);

} // namespace baton::ui
