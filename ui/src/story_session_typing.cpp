// Saving what the writer types (story_session.h; saveTyped, with its undo step, is in
// story_session.cpp): every typed passage is saved to the story it was typed in; one
// whose save fails goes back to the editor, or, when the writer has opened another
// story meanwhile, is saved again to its own.
#include "save_retry.h"
#include "story_session.h"

#include <utility>

namespace baton::ui {

void StorySession::sendTyped(const TypedWrite& write) {
    const quint64 request = m_storage.appendPassage(write.story, write.text.toStdString(),
                                                    storage::PassageAuthor::User);
    m_writes.insert(request, tr("Saving your text"));
    m_typedWrites.insert(request, write);
}

void StorySession::leaveBehind(const TypedWrite& write, const ErrorText& why) {
    m_leftBehind.append(write);
    if (m_leftBehindRetry->failed())
        Q_EMIT failed(tr("Your text in the story you left could not be saved. Baton keeps it "
                         "and tries again in %1 s.")
                          .arg(m_leftBehindRetry->delayMs() / 1000),
                      why);
}

void StorySession::retryLeftBehind() {
    const QList<TypedWrite> writes = std::exchange(m_leftBehind, {});
    for (const TypedWrite& w : writes)
        sendTyped(w);
}

void StorySession::onTypedWriteSaved(quint64 request) {
    const auto typed = m_typedWrites.find(request);
    if (typed == m_typedWrites.end())
        return;
    const bool here = typed->story == m_story.id;
    m_typedWrites.erase(typed);
    if (here)
        Q_EMIT typedTextSaved();
    else if (m_leftBehind.isEmpty() && m_leftBehindRetry->delayMs() > 0) {
        m_leftBehindRetry->succeeded();
        Q_EMIT message(tr("Your text in the story you left is saved."));
    }
}

bool StorySession::onTypedWriteFailed(quint64 request, const storage::StorageError& error) {
    const auto typed = m_typedWrites.find(request);
    if (typed == m_typedWrites.end())
        return false;
    // Typed text is never dropped: once the path without it is shown, it goes back
    // to the editor as typed text (what is typed meanwhile stays after it). Text of
    // a story the writer has left meanwhile is saved again to that story.
    TypedWrite write = typed.value();
    m_typedWrites.erase(typed);
    const ErrorText why = describeStorageError(error);
    if (write.story == m_story.id)
        dropTypingStep(write);
    write.step = nullptr; // saved again later as text alone
    if (write.story == m_story.id && m_loadRequest == 0) {
        // Back to the editor once the path without it is shown, unless another story
        // was opened meanwhile (then reloadPath calls it for that instead).
        auto giveBack = [this, write, why] {
            --m_typedRestoring;
            if (write.story == m_story.id)
                Q_EMIT typedTextNotSaved(write.text, why);
            else
                leaveBehind(write, why);
        };
        ++m_typedRestoring;
        reloadPath(true, giveBack, giveBack);
        return true;
    }
    leaveBehind(write, why);
    return true;
}

} // namespace baton::ui
