// Token alternatives (story_session.h): reading a passage's recorded alternatives on the
// storage thread, and a branch at a token run as a continuation.
#include "story_session.h"
#include "token_alternatives.h"

#include <utility>

namespace baton::ui {

void StorySession::loadChoices(qint64 passageId, QObject* context, ChoicesDone done) {
    using Stored = std::pair<storage::Passage, std::vector<uint8_t>>;
    m_storage.tokenChoices(
        passageId, context,
        [done](const Stored& stored) {
            auto choices = story::readChoices(stored.second, stored.first.text);
            if (!choices)
                return done({}, QString::fromStdString(choices.error().message));
            done(std::move(*choices), {});
        },
        [done](const storage::StorageError& error) {
            done({}, QString::fromStdString(error.message));
        });
}

bool StorySession::branchAt(const story::TokenBranch& at,
                            const std::vector<story::TokenChoice>& choices,
                            const story::StorySettings& settings) {
    size_t index = 0;
    while (index < m_path.size() && m_path[index].id != at.passageId)
        ++index;
    if (index == m_path.size() || at.token < 0 || size_t(at.token) >= choices.size())
        return false;
    const auto& alternatives = choices[size_t(at.token)].alternatives;
    if (at.alternative < 0 || size_t(at.alternative) >= alternatives.size() || !begin(settings))
        return false;
    // The editor keeps the text before the token and shows the picked one at once.
    Q_EMIT truncated(displayLength(m_path, index) + displayCharsBefore(choices, at.token));
    Q_EMIT streamed(toDisplayText(alternatives[size_t(at.alternative)].text));
    story::ContinueRequest r = continuation(settings);
    r.branch = at;
    start(std::move(r), tr("alternative"));
    return true;
}

} // namespace baton::ui
