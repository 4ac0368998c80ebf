// Saving what the writer types and edits (write_page.h): after a pause in typing, before
// anything that reads the story, and again after a failed save, never dropping the text.
#include "save_retry.h"
#include "story_editor.h"
#include "story_session.h"
#include "write_page.h"

#include <QTimer>

namespace baton::ui {

void WritePage::connectSaving() {
    m_saveRetry = new SaveRetry(this);
    connect(m_editor, &StoryEditor::typedTextChanged, this, [this] {
        if (!m_editor->typedText().isEmpty())
            m_editTimer->start(); // autosave after a pause in typing
        updateActions();
    });
    connect(m_session, &StorySession::typedTextNotSaved, this,
            [this](const QString& text, const ErrorText& why) {
                m_editor->restoreTyped(text);
                m_editTimer->stop(); // the retry's timer, not the typing pause, comes next
                const bool first = m_saveRetry->failed();
                const QString what = tr("Your text could not be saved. Baton keeps it in the "
                                        "editor and tries again in %1 s.")
                                         .arg(m_saveRetry->delayMs() / 1000);
                if (first)
                    Q_EMIT failed(what, why);
                else
                    Q_EMIT statusMessage(what + QLatin1Char(' ') + why.message, 0);
            });
    connect(m_session, &StorySession::typedTextSaved, this, [this] {
        if (m_saveRetry->delayMs() > 0) // a streak of failures ends
            Q_EMIT statusMessage(tr("Your text is saved."), 5000);
        m_saveRetry->succeeded();
    });
    connect(m_saveRetry, &SaveRetry::retry, this, &WritePage::saveDraft);
}

void WritePage::commitEdits() {
    m_editTimer->stop();
    if (!m_editor->hasPendingEdits())
        return;
    const auto edits = m_editor->pendingEdits();
    if (m_session->isOpen())
        m_session->saveEdits(edits);
    m_editor->acceptEdits();
    if (!edits.empty()) {
        Q_EMIT statusMessage(tr("Edit saved; the model reads the story again from the "
                                "edit on (Ctrl+Z undoes it)."),
                             6000);
        refreshContext();
    }
}

void WritePage::saveDraft() {
    commitEdits();
    const QString typed = m_editor->typedText();
    if (typed.isEmpty() || !m_session->isOpen() || m_session->busy() || m_editor->isReadOnly())
        return;
    m_session->saveTyped(typed);
    m_editor->commitTypedText();
}

} // namespace baton::ui
