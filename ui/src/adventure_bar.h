// Adventure mode's input: Do / Say / Story, a line for the player's words, Send,
// and Undo turn / Retry turn. frameTurn() puts the player's words in the second
// person on a line of their own that starts with '>', as text adventures print
// them; the model then writes what happens, and stops before the next '>' line.
#pragma once

#include <QString>
#include <QWidget>

class QComboBox;
class QLineEdit;
class QPushButton;

namespace baton::ui {

enum class TurnKind { Do, Say, Story };

// The text a turn adds to a story whose text ends with `before`: a blank line first
// (unless the story is empty or already ends with one), then
//   Do "open the door"       -> "> You open the door.\n\n"
//   Do "I look around"       -> "> You look around.\n\n"
//   Say "where is the key"   -> "> You say, \"Where is the key.\"\n\n"  (punctuation kept)
//   Story "A storm rises."   -> "A storm rises."  (the model continues the paragraph)
// Empty (after trimming) input gives "".
QString frameTurn(TurnKind kind, const QString& input, const QString& before);

// What the model must not write in an adventure: the player's next action.
inline const char* adventureStopString() {
    return "\n>";
}

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
    void sendRequested(baton::ui::TurnKind kind, QString input);
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
