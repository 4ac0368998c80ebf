#include "adventure_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace baton::ui {

AdventureBar::AdventureBar(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("adventureBar"));
    setAutoFillBackground(true);
    m_kind = new QComboBox;
    m_kind->setObjectName(QStringLiteral("turnKind"));
    m_kind->addItem(tr("Do"), int(TurnKind::Do));
    m_kind->addItem(tr("Say"), int(TurnKind::Say));
    m_kind->addItem(tr("Story"), int(TurnKind::Story));
    m_kind->setToolTip(tr("Do: an action (\"open the door\"). Say: words spoken aloud. Story: "
                          "narration the model continues."));
    m_input = new QLineEdit;
    m_input->setObjectName(QStringLiteral("turnInput"));
    m_input->setPlaceholderText(tr("What do you do?"));
    m_input->setClearButtonEnabled(true);
    m_send = new QPushButton(tr("Send"));
    m_send->setObjectName(QStringLiteral("turnSend"));
    m_send->setDefault(true);
    m_undo = new QPushButton(tr("Undo turn"));
    m_undo->setObjectName(QStringLiteral("turnUndo"));
    m_undo->setToolTip(tr("Take back your last action and the reply (kept as a branch)"));
    m_retry = new QPushButton(tr("Retry turn"));
    m_retry->setObjectName(QStringLiteral("turnRetry"));
    m_retry->setToolTip(tr("Write another reply to your last action (Ctrl+R)"));
    auto* l = new QHBoxLayout(this);
    l->setContentsMargins(12, 8, 12, 8);
    l->addWidget(m_kind);
    l->addWidget(m_input, 1);
    l->addWidget(m_send);
    l->addSpacing(8);
    l->addWidget(m_undo);
    l->addWidget(m_retry);
    auto send = [this] {
        if (!m_input->text().trimmed().isEmpty() && m_send->isEnabled())
            Q_EMIT sendRequested(kind(), m_input->text());
    };
    connect(m_input, &QLineEdit::returnPressed, this, send);
    connect(m_send, &QPushButton::clicked, this, send);
    connect(m_undo, &QPushButton::clicked, this, &AdventureBar::undoTurnRequested);
    connect(m_retry, &QPushButton::clicked, this, &AdventureBar::retryTurnRequested);
    connect(m_kind, &QComboBox::currentIndexChanged, this, [this] {
        const TurnKind k = kind();
        m_input->setPlaceholderText(k == TurnKind::Do    ? tr("What do you do?")
                                    : k == TurnKind::Say ? tr("What do you say?")
                                                         : tr("What happens next?"));
    });
}

TurnKind AdventureBar::kind() const {
    return TurnKind(m_kind->currentData().toInt());
}

void AdventureBar::setKind(TurnKind kind) {
    m_kind->setCurrentIndex(m_kind->findData(int(kind)));
}

QString AdventureBar::input() const {
    return m_input->text();
}

void AdventureBar::clearInput() {
    m_input->clear();
}

void AdventureBar::setReady(bool ready, bool canUndoTurn, bool canRetryTurn) {
    m_input->setEnabled(ready);
    m_kind->setEnabled(ready);
    m_send->setEnabled(ready);
    m_undo->setEnabled(ready && canUndoTurn);
    m_retry->setEnabled(ready && canRetryTurn);
}

void AdventureBar::focusInput() {
    m_input->setFocus();
}

} // namespace baton::ui
