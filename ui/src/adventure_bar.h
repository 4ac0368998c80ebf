// Adventure mode's input: Do / Say / Story, a line for the player's words, Send,
// and Undo turn / Retry turn. The rules (how a turn is framed, where the model stops)
// are the story layer's (story/adventure.h), the same for baton-cli.
#pragma once

#include <baton/story/adventure.h>

#include <QString>
#include <QWidget>

class QComboBox;
class QLineEdit;
class QPushButton;

namespace baton::ui {

using story::TurnKind;

class AdventureBar : public QWidget {
    Q_OBJECT
public:
    explicit AdventureBar(QWidget* parent = nullptr);

    TurnKind kind() const;
    void setKind(TurnKind kind);
    QString input() const;
    void clearInput();
    // Enables the input and the buttons (false while the model writes).
    void setReady(bool ready, bool canUndoTurn, bool canRetryTurn);
    void focusInput();

Q_SIGNALS:
    void sendRequested(baton::story::TurnKind kind, QString input);
    void undoTurnRequested();
    void retryTurnRequested();

private:
    QComboBox* m_kind = nullptr;
    QLineEdit* m_input = nullptr;
    QPushButton* m_send = nullptr;
    QPushButton* m_undo = nullptr;
    QPushButton* m_retry = nullptr;
};

} // namespace baton::ui
