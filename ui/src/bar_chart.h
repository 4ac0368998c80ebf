// A bar chart (Qt Charts) for the panels: categories along x and named sets of
// values, side by side or stacked (shares that add up to 1, e.g. topic
// distributions per window). setBars() replaces everything.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <vector>

namespace baton::ui {

struct BarSet {
    QString name;
    std::vector<double> values; // one per category
    QColor color;               // invalid: the chart's theme picks one
};

class BarChart : public QWidget {
    Q_OBJECT
public:
    BarChart(const QString& title, const QString& xTitle, const QString& yTitle, bool stacked,
             QWidget* parent = nullptr);
    ~BarChart() override;
    void setBars(const QStringList& categories, const std::vector<BarSet>& sets);
    void setTitle(const QString& title);
    // Shown in the middle while there is no data.
    void setEmptyText(const QString& text);
    int setCount() const { return m_count; }
    int categoryCount() const { return m_categories; }

private:
    class Impl;
    std::unique_ptr<Impl> m_impl;
    int m_count = 0;
    int m_categories = 0;
};

} // namespace baton::ui
