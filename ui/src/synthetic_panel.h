// The synthetic memory task in the app (engine/synthetic.h), a tab beside the memory
// probe on the Topics page: the curve of right answers by distance that
// `baton-cli probe --synthetic` measured for a design of the recurrence module, when
// the loaded model's folder (its adapter's, for a base with an adapter) holds that
// report (synthetic.json). A synthetic run writes one into its model folder; the
// curve is of the design trained from scratch on the task, which is said beside it.
// Reading the report is a small file read, done when the model changes.
#pragma once

#include <baton/engine/synthetic.h>

#include <QString>
#include <QWidget>

#include <optional>

class QLabel;

namespace baton::ui {

class BarChart;

class SyntheticPanel : public QWidget {
    Q_OBJECT
public:
    explicit SyntheticPanel(QWidget* parent = nullptr);

    // Shows the report in `folder` (a model's folder), or says there is none or why it
    // could not be read. An empty folder: no model is loaded.
    void showFolder(const QString& folder);
    const std::optional<engine::SyntheticReport>& report() const { return m_report; }

private:
    void showReport(const engine::SyntheticReport& report);

    BarChart* m_chart = nullptr;
    QLabel* m_status = nullptr;
    std::optional<engine::SyntheticReport> m_report;
};

} // namespace baton::ui
