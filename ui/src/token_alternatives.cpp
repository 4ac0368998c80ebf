#include "token_alternatives.h"

#include "story_editor.h"

#include <cmath>

namespace baton::ui {

namespace {

QString percent(float logprob) {
    const double p = 100.0 * std::exp(double(logprob));
    if (p < 0.01)
        return QStringLiteral("<0.01%");
    return p >= 10 ? QStringLiteral("%1%").arg(p, 0, 'f', 0)
                   : QStringLiteral("%1%").arg(p, 0, 'f', p >= 1 ? 1 : 2);
}

} // namespace

int displayCharsBefore(const std::vector<story::TokenChoice>& choices, int token) {
    std::string text;
    for (int i = 0; i < token && size_t(i) < choices.size(); ++i)
        text += choices[size_t(i)].text;
    return int(toDisplayText(text).size());
}

int tokenAtDisplayOffset(const std::vector<story::TokenChoice>& choices, int offset) {
    // The shown length of the text up to each token's end (a \r\n turns into one
    // character only once both halves are there).
    std::string text;
    int begin = 0;
    for (size_t i = 0; i < choices.size(); ++i) {
        text += choices[i].text;
        const int end = int(toDisplayText(text).size());
        if (offset >= begin && offset < end)
            return int(i);
        begin = end;
    }
    return -1;
}

QString tokenLabel(const std::string& text) {
    QString shown = toDisplayText(text);
    shown.replace(QLatin1Char('\n'), QStringLiteral("↵"));
    shown.replace(QLatin1Char('\t'), QStringLiteral("→"));
    // An ampersand would be read as a mnemonic.
    shown.replace(QLatin1Char('&'), QStringLiteral("&&"));
    return QStringLiteral("“%1”").arg(shown);
}

TokenAlternativesMenu::TokenAlternativesMenu(const story::TokenChoice& choice,
                                             const QString& cannotBranch, QWidget* parent)
    : QMenu(parent) {
    setObjectName(QStringLiteral("tokenAlternativesMenu"));
    setAttribute(Qt::WA_DeleteOnClose);
    const QString written = std::isnan(choice.logprob) ? tokenLabel(choice.text)
                                                       : tr("%1, %2").arg(tokenLabel(choice.text),
                                                                          percent(choice.logprob));
    addSection(tr("Written: %1").arg(written));
    setToolTipsVisible(true);
    for (size_t i = 0; i < choice.alternatives.size(); ++i) {
        const story::Alternative& a = choice.alternatives[i];
        // After the tab: the menu's right-hand column.
        QAction* action = addAction(tokenLabel(a.text) + QLatin1Char('\t') + percent(a.logprob));
        const bool isWritten = a.text == choice.text;
        action->setCheckable(isWritten);
        action->setChecked(isWritten);
        action->setEnabled(!isWritten && cannotBranch.isEmpty());
        action->setToolTip(isWritten ? tr("The token written here")
                                     : tr("Branch here with this token and continue"));
        const int index = int(i);
        connect(action, &QAction::triggered, this, [this, index] { Q_EMIT picked(index); });
    }
    if (choice.alternatives.empty())
        addAction(tr("No alternatives were recorded"))->setEnabled(false);
    if (!cannotBranch.isEmpty()) {
        addSeparator();
        addAction(cannotBranch)->setEnabled(false);
    }
}

} // namespace baton::ui
