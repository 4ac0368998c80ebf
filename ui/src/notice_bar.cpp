#include "notice_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace baton::ui {

NoticeBar::NoticeBar(const QString& text, const QString& button, QWidget* parent)
    : QFrame(parent) {
    setAutoFillBackground(true);
    QPalette p = palette();
    p.setColor(QPalette::Window, QColor(0xfd, 0xf3, 0xd8));
    p.setColor(QPalette::WindowText, QColor(0x3a, 0x30, 0x18));
    setPalette(p);
    m_label = new QLabel(text);
    m_label->setWordWrap(true);
    m_button = new QPushButton(button);
    connect(m_button, &QPushButton::clicked, this, &NoticeBar::clicked);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(16, 8, 12, 8);
    layout->addWidget(m_label, 1);
    layout->addWidget(m_button);
}

void NoticeBar::setText(const QString& text) {
    m_label->setText(text);
}

} // namespace baton::ui
