// A notice across the top of a page with one button: "No model is loaded … [Open
// model…]".
#pragma once

#include <QFrame>

class QLabel;
class QPushButton;

namespace baton::ui {

class NoticeBar : public QFrame {
    Q_OBJECT
public:
    NoticeBar(const QString& text, const QString& button, QWidget* parent = nullptr);
    void setText(const QString& text);

Q_SIGNALS:
    void clicked();

private:
    QLabel* m_label;
    QPushButton* m_button;
};

} // namespace baton::ui
