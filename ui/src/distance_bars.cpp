#include "distance_bars.h"

#include "bar_chart.h"

#include <QObject>
#include <QStringList>

#include <algorithm>

namespace baton::ui {

DistanceFigures showDistanceBars(BarChart& chart, const std::vector<DistanceSet>& sets,
                                 const std::vector<DistanceCell>& cells) {
    std::vector<int> distances;
    for (const auto& c : cells)
        if (std::find(distances.begin(), distances.end(), c.distance) == distances.end())
            distances.push_back(c.distance);
    QStringList categories;
    for (int d : distances)
        categories << QObject::tr("d = %1").arg(d);
    DistanceFigures figures;
    std::vector<BarSet> bars;
    QStringList lines;
    for (size_t s = 0; s < sets.size(); ++s) {
        BarSet set{sets[s].name, {}, sets[s].color};
        QStringList values;
        for (int d : distances)
            for (const auto& c : cells)
                if (c.distance == d && c.set == int(s)) {
                    set.values.push_back(c.accuracy);
                    values << QString::number(c.accuracy, 'f', 2);
                    figures.largestStdError = std::max(figures.largestStdError, c.stdError);
                }
        lines << QObject::tr("%1: %2").arg(set.name, values.join(QStringLiteral(" / ")));
        bars.push_back(std::move(set));
    }
    chart.setBars(categories, bars);
    figures.text = lines.join(QStringLiteral("; "));
    return figures;
}

} // namespace baton::ui
