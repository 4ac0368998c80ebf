// Token alternatives in the editor (story/token_choices.h): where a passage's recorded
// tokens lie in its text as the editor shows it, and the menu that offers a token's
// alternatives with their probabilities (Ctrl+click on generated text, or the context
// menu's "Token Alternatives").
#pragma once

#include <baton/story/token_choices.h>

#include <QMenu>

#include <vector>

namespace baton::ui {

// The characters of the passage's shown text (toDisplayText) before token `token`.
int displayCharsBefore(const std::vector<story::TokenChoice>& choices, int token);
// The token whose shown text covers character `offset` of the passage (-1: none
// recorded there).
int tokenAtDisplayOffset(const std::vector<story::TokenChoice>& choices, int offset);
// How a token's text reads in a menu: quoted, a line break as ↵.
QString tokenLabel(const std::string& text);

// The alternatives of one token, likeliest first, each with its probability; the one
// written is checked and cannot be picked. With `cannotBranch` (why not, for the
// writer), they are shown and none can be picked.
class TokenAlternativesMenu : public QMenu {
    Q_OBJECT
public:
    TokenAlternativesMenu(const story::TokenChoice& choice, const QString& cannotBranch = {},
                          QWidget* parent = nullptr);

Q_SIGNALS:
    void picked(int alternative);
};

} // namespace baton::ui
