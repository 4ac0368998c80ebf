#include "story_session.h"

#include "story_editor.h"

#include <baton/engine/generator.h>
#include <baton/engine/windows.h>
#include <baton/storage/database.h>
#include <baton/storage/story_prompt.h>
#include <baton/storage/story_store.h>

#include <QUndoStack>

#include <memory>

namespace baton::ui {

namespace {

int displayLength(const std::vector<storage::Passage>& path, size_t count) {
    int n = 0;
    for (size_t i = 0; i < count && i < path.size(); ++i)
        n += int(toDisplayText(path[i].text).size());
    return n;
}

// One step of the story's undo history. The step has already happened when it is
// pushed, so the stack's first redo() does nothing.
class StoryStep : public QUndoCommand {
public:
    StoryStep(const QString& text, std::function<void()> undo, std::function<void()> redo)
        : QUndoCommand(text)
        , m_undo(std::move(undo))
        , m_redo(std::move(redo)) {}
    void undo() override { m_undo(); }
    void redo() override {
        if (m_done)
            m_redo();
        m_done = true;
    }

private:
    std::function<void()> m_undo, m_redo;
    bool m_done = false;
};

// Where the trailing run of model passages begins (path.size(): none): the last
// generation's text, which a retry replaces and a turn's reply ends with.
size_t trailingModelStart(const std::vector<storage::Passage>& path) {
    size_t first = path.size();
    while (first > 0 && path[first - 1].author == storage::PassageAuthor::Model)
        --first;
    return first;
}

bool stateProblem(engine::ErrorCode code) {
    return code == engine::ErrorCode::StateCorrupt || code == engine::ErrorCode::StateMismatch ||
           code == engine::ErrorCode::StateVersion;
}

} // namespace

StorySession::StorySession(storage::StorageController& storage, engine::EngineController& engine,
                           QObject* parent)
    : QObject(parent)
    , m_storage(storage)
    , m_engine(engine) {
    qRegisterMetaType<ErrorText>();
    m_undo = new QUndoStack(this);
    using SC = storage::StorageController;
    using EC = engine::EngineController;
    connect(&m_storage, &SC::storyLoaded, this,
            [this](quint64 request, const storage::Story& story,
                   const std::vector<storage::Passage>& path) {
                if (request != m_loadRequest)
                    return;
                m_loadRequest = 0;
                if (story.id != m_story.id)
                    m_undo->clear();
                m_story = story;
                m_path = path;
                computeRetryPoint(path);
                Q_EMIT opened(story, path);
            });
    connect(&m_storage, &SC::resumePointReady, this, &StorySession::onResumePoint);
    auto done = [this](quint64 request) { m_writes.remove(request); };
    connect(&m_storage, &SC::passageAppended, this, [done](quint64 r, qint64) { done(r); });
    connect(&m_storage, &SC::currentPassageSet, this,
            [done](quint64 r, qint64, qint64) { done(r); });
    connect(&m_storage, &SC::storyUpdated, this, [done](quint64 r, qint64) { done(r); });
    connect(&m_storage, &SC::passageEdited, this, [done](quint64 r, qint64) { done(r); });
    connect(&m_storage, &SC::failed, this, &StorySession::onStorageFailed);

    connect(&m_engine, &EC::generationProgress, this,
            [this](engine::JobId job, const engine::GenerationProgress& p) {
                if (job != m_job)
                    return;
                if (!p.text.empty() && m_genStory == m_story.id && !m_saveFailed)
                    Q_EMIT streamed(toDisplayText(p.text));
                const int stride = qMax(1, m_windows.stride());
                Q_EMIT windowProgress(p.windowStart / stride, p.windowFill, m_windows.window,
                                      p.tokensPerSecond);
            });
    connect(&m_engine, &EC::generationChunk, this, &StorySession::onChunk);
    connect(&m_engine, &EC::generationDone, this,
            [this](engine::JobId job, const engine::GenerationDone& d) {
                if (job == m_job)
                    m_lastResult = d.result;
            });
    connect(&m_engine, &EC::jobFinished, this, &StorySession::onJobFinished);
}

void StorySession::setPhase(Phase phase) {
    if (phase == m_phase)
        return;
    m_phase = phase;
    Q_EMIT phaseChanged(phase);
}

void StorySession::open(qint64 storyId) {
    if (busy())
        return;
    m_loadRequest = m_storage.loadStory(storyId);
}

void StorySession::close() {
    stop();
    m_loadRequest = 0;
    m_story = {};
    m_path.clear();
    m_undo->clear();
    m_retryParent = -1;
    Q_EMIT closed();
}

void StorySession::computeRetryPoint(const std::vector<storage::Passage>& path) {
    // The trailing run of model passages is what a retry replaces.
    const size_t first = trailingModelStart(path);
    if (first == path.size()) {
        m_retryParent = -1;
        return;
    }
    m_retryParent = first > 0 ? path[first - 1].id : 0;
    m_retryChars = displayLength(path, first);
}

bool StorySession::begin(const GenerationSettings& settings) {
    if (!isOpen() || busy())
        return false;
    if (!m_engine.model()) {
        Q_EMIT failed(tr("Nothing to generate with"),
                      {tr("No model is loaded. Open one with File > Open model…"), {}});
        return false;
    }
    const engine::ModelInfo& model = *m_engine.model();
    const engine::WindowSettings windows = engine::resolveWindows(model, settings.windows);
    if (auto ok = engine::validateWindows(windows, model.config.nPositions); !ok) {
        Q_EMIT failed(tr("The window settings cannot be used"), describeEngineError(ok.error()));
        return false;
    }
    m_settings = settings;
    m_windows = windows;
    m_identity = model.identity;
    m_genStory = m_story.id;
    m_saveFailed = false;
    return true;
}

bool StorySession::generate(const QString& userText, const GenerationSettings& settings) {
    if (!begin(settings))
        return false;
    m_leafBefore = leaf();
    m_stepName = userText.isEmpty() ? tr("Continue") : tr("Generate");
    if (!userText.isEmpty())
        m_writes.insert(m_storage.appendPassage(m_story.id, userText.toStdString(),
                                                storage::PassageAuthor::User),
                        tr("Saving your text"));
    setPhase(Phase::Preparing);
    requestResume();
    return true;
}

void StorySession::retry(const GenerationSettings& settings) {
    if (!canRetry() || !begin(settings))
        return;
    // The current leaf goes back to where the last generation began; the resume
    // point is read after the move (requests run in order) and the new text becomes
    // an alternative there.
    m_leafBefore = leaf();
    m_stepName = tr("Retry");
    Q_EMIT truncated(m_retryChars);
    m_writes.insert(m_storage.setCurrentPassage(m_story.id, m_retryParent),
                    tr("Going back to where the last generation began"));
    setPhase(Phase::Preparing);
    requestResume();
}

void StorySession::requestResume() {
    m_resumeRequest = m_storage.resumePoint(m_genStory, m_identity, m_windows.window,
                                            m_windows.overlap, int(engine::kStateFormatVersion));
}

void StorySession::onResumePoint(quint64 request, qint64, const storage::ResumePoint& point) {
    if (request != m_resumeRequest || request == 0)
        return;
    m_resumeRequest = 0;
    if (m_phase != Phase::Preparing)
        return; // stopped meanwhile
    if (m_saveFailed) {
        setPhase(Phase::Idle);
        return;
    }
    m_genPath = point.path;
    // What a retry of this generation replaces: everything it adds.
    m_retryParent = point.path.empty() ? 0 : point.path.back().id;
    m_retryChars = displayLength(point.path, point.path.size());

    engine::GenerateRequest r;
    if (point.hasState()) {
        r.state = point.state.blob;
        r.text = point.textAfterState();
    } else {
        r.text = textWithoutState(point.path);
    }
    r.text += storage::authorsNoteText(m_story);
    r.startOfText = true;
    r.sampling = m_settings.sampling;
    r.windows = m_windows;
    r.chunkTokens = m_chunkTokens;
    m_resumedFrom = point.hasState() ? point.state.passageId : 0;
    m_encodedChars = qint64(toDisplayText(r.text).size());
    startGeneration(r);
}

void StorySession::startGeneration(const engine::GenerateRequest& request) {
    m_request = request;
    m_lastResult = {};
    m_job = m_engine.generate(request);
    setPhase(Phase::Generating);
}

void StorySession::onChunk(engine::JobId job, const engine::StateChunk& chunk) {
    if (job != m_job || chunk.text.empty() || m_saveFailed)
        return;
    std::optional<storage::StoredState> state;
    if (!chunk.state.empty()) {
        storage::StoredState s;
        s.windowIndex = chunk.windowIndex;
        s.tokenOffset = chunk.streamLength;
        s.modelIdentity = m_identity;
        s.window = m_windows.window;
        s.overlap = m_windows.overlap;
        s.formatVersion = int(engine::kStateFormatVersion);
        s.blob = chunk.state;
        state = std::move(s);
    }
    m_writes.insert(
        m_storage.appendPassage(m_genStory, chunk.text, storage::PassageAuthor::Model, state, true),
        tr("Saving the generated text"));
}

void StorySession::onJobFinished(engine::JobId job, bool ok, const engine::Error& error) {
    if (job != m_job)
        return;
    m_job = 0;
    if (!ok && m_phase != Phase::Stopping && stateProblem(error.code) && !m_request.state.empty()) {
        // The saved state cannot be used (another build, a damaged blob): encode the
        // whole path's text instead.
        engine::GenerateRequest r = m_request;
        r.state.clear();
        r.text = textWithoutState(m_genPath) + storage::authorsNoteText(m_story);
        m_resumedFrom = 0;
        m_encodedChars = qint64(toDisplayText(r.text).size());
        Q_EMIT message(tr("The saved state could not be used (%1); encoding the story's text.")
                           .arg(QString::fromStdString(error.message)));
        startGeneration(r);
        return;
    }
    if (!ok) {
        finishGeneration([this, error] {
            if (error.code != engine::ErrorCode::Cancelled)
                Q_EMIT failed(tr("The model could not continue the story"),
                              describeEngineError(error));
        });
        return;
    }
    const auto& r = m_lastResult;
    QString why;
    switch (r.reason) {
    case engine::StopReason::Cancelled:
        why = tr("stopped");
        break;
    case engine::StopReason::EndOfText:
        why = tr("the model ended the text");
        break;
    case engine::StopReason::StopString:
        why = tr("stop string");
        break;
    default:
        why = tr("max tokens");
        break;
    }
    const QString tokens =
        r.tokens.size() == 1 ? tr("1 token") : tr("%1 tokens").arg(r.tokens.size());
    const QString summary = tr("%1 in %2 s (%3 tokens/s), %4")
                                .arg(tokens)
                                .arg(r.seconds, 0, 'f', 1)
                                .arg(r.tokensPerSecond, 0, 'f', 1)
                                .arg(why);
    finishGeneration([this, summary] { Q_EMIT generationFinished(summary); });
}

void StorySession::finishGeneration(std::function<void()> report) {
    if (m_genStory != m_story.id || m_saveFailed) {
        // The story is being read again (a failed save) or was closed.
        setPhase(Phase::Idle);
        report();
        return;
    }
    const qint64 before = m_leafBefore;
    const QString name = m_stepName;
    reloadPath(true, [this, before, name, report] {
        const qint64 after = leaf();
        if (after != before)
            pushMove(name, before, after);
        setPhase(Phase::Idle);
        report();
    });
}

std::string StorySession::textWithoutState(const std::vector<storage::Passage>& path) const {
    std::string text = storage::memoryPrefix(m_story);
    for (const auto& p : path)
        text += p.text;
    return text;
}

void StorySession::reloadPath(bool show, std::function<void()> then) {
    const qint64 id = m_story.id;
    m_storage.call<std::vector<storage::Passage>>(
        false,
        [id](storage::Database& db) -> storage::Result<std::vector<storage::Passage>> {
            return db.stories().currentPath(id);
        },
        this,
        [this, id, show, then](std::vector<storage::Passage> path) {
            if (id != m_story.id)
                return;
            m_path = std::move(path);
            computeRetryPoint(m_path);
            if (show)
                Q_EMIT pathChanged(m_path);
            if (then)
                then();
        },
        [this, then](const storage::StorageError& error) {
            if (then)
                then();
            Q_EMIT failed(tr("The story could not be read"), describeStorageError(error));
        });
}

void StorySession::applyMove(qint64 leafId) {
    if (!isOpen())
        return;
    m_writes.insert(m_storage.setCurrentPassage(m_story.id, leafId), tr("Moving in the story"));
    reloadPath(true);
}

void StorySession::applyEdits(const std::vector<StoryEditor::PassageEdit>& edits, bool forward) {
    if (!isOpen())
        return;
    for (const auto& e : edits)
        m_writes.insert(m_storage.editPassage(e.passageId, forward ? e.after : e.before),
                        tr("Saving the edit"));
    reloadPath(true);
}

void StorySession::switchTo(qint64 leafId, const QString& what) {
    if (!isOpen() || busy() || leafId == leaf())
        return;
    const qint64 before = leaf();
    applyMove(leafId);
    pushMove(what, before, leafId);
}

void StorySession::pushMove(const QString& name, qint64 before, qint64 after) {
    m_undo->push(new StoryStep(
        name, [this, before] { applyMove(before); }, [this, after] { applyMove(after); }));
}

bool StorySession::undoTurn() {
    const size_t first = trailingModelStart(m_path);
    if (first == 0 || busy())
        return false;
    // m_path[first - 1] is the action; the turn ends before it.
    switchTo(first >= 2 ? m_path[first - 2].id : 0, tr("Undo turn"));
    return true;
}

void StorySession::saveEdits(const std::vector<StoryEditor::PassageEdit>& edits) {
    if (edits.empty() || !isOpen())
        return;
    for (const auto& e : edits)
        m_writes.insert(m_storage.editPassage(e.passageId, e.after), tr("Saving your edit"));
    m_undo->push(new StoryStep(
        edits.size() == 1 ? tr("Edit") : tr("Edit of %1 passages").arg(edits.size()),
        [this, edits] { applyEdits(edits, false); }, [this, edits] { applyEdits(edits, true); }));
    reloadPath(false);
}

void StorySession::saveTyped(const QString& text) {
    if (text.isEmpty() || !isOpen() || busy())
        return;
    const qint64 before = leaf();
    m_writes.insert(
        m_storage.appendPassage(m_story.id, text.toStdString(), storage::PassageAuthor::User),
        tr("Saving your text"));
    // The step is on the stack at once (an Undo right away must find it); the new
    // passage's id arrives with the path, before any later request is answered.
    auto after = std::make_shared<qint64>(0);
    m_undo->push(new StoryStep(
        tr("Typing"), [this, before] { applyMove(before); },
        [this, after] {
            if (*after != 0)
                applyMove(*after);
        }));
    reloadPath(true, [this, after] { *after = leaf(); });
}

bool StorySession::canUndo() const {
    return isOpen() && !busy() && m_undo->canUndo();
}

bool StorySession::canRedo() const {
    return isOpen() && !busy() && m_undo->canRedo();
}

void StorySession::undo() {
    if (canUndo())
        m_undo->undo();
}

void StorySession::redo() {
    if (canRedo())
        m_undo->redo();
}

void StorySession::saveNotes(const QString& memory, const QString& authorsNote) {
    const std::string m = memory.toStdString(), n = authorsNote.toStdString();
    if (!isOpen() || (m == m_story.memory && n == m_story.authorsNote))
        return;
    m_story.memory = m;
    m_story.authorsNote = n;
    const qint64 id = m_story.id;
    // Only these two fields: the rest of the row is as the database has it.
    m_storage.call<bool>(
        true,
        [id, m, n](storage::Database& db) -> storage::Result<bool> {
            auto story = db.stories().get(id);
            if (!story)
                return story.error();
            story->memory = m;
            story->authorsNote = n;
            if (auto r = db.stories().update(*story); !r)
                return r.error();
            return true;
        },
        this, [](bool) {},
        [this](const storage::StorageError& error) {
            Q_EMIT failed(tr("The memory and author's note could not be saved"),
                          describeStorageError(error));
        });
}

void StorySession::onStorageFailed(quint64 request, const storage::StorageError& error) {
    if (request == m_loadRequest && request != 0) {
        m_loadRequest = 0;
        Q_EMIT failed(tr("The story could not be opened"), describeStorageError(error));
        return;
    }
    if (request == m_resumeRequest && request != 0) {
        m_resumeRequest = 0;
        setPhase(Phase::Idle);
        Q_EMIT failed(tr("The story could not be read"), describeStorageError(error));
        return;
    }
    const auto it = m_writes.find(request);
    if (it == m_writes.end())
        return;
    const QString what = it.value();
    m_writes.erase(it);
    // Nothing more is saved for this generation: stop it, and show what is saved.
    m_saveFailed = true;
    if (m_job) {
        m_engine.cancel(m_job);
        setPhase(Phase::Stopping);
    } else if (m_phase == Phase::Preparing) {
        m_resumeRequest = 0;
        setPhase(Phase::Idle);
    }
    Q_EMIT failed(tr("%1 failed; the story shows what is saved").arg(what),
                  describeStorageError(error));
    if (m_genStory == m_story.id && m_story.id != 0)
        m_loadRequest = m_storage.loadStory(m_story.id);
}

void StorySession::stop() {
    if (m_phase == Phase::Generating && m_job) {
        m_engine.cancel(m_job);
        setPhase(Phase::Stopping);
    } else if (m_phase == Phase::Preparing) {
        m_resumeRequest = 0;
        setPhase(Phase::Idle);
    }
}

void StorySession::saveSettings(const std::string& json) {
    if (!isOpen() || json == m_story.settingsJson)
        return;
    m_story.settingsJson = json;
    m_writes.insert(m_storage.setStorySettings(m_story.id, json), tr("Saving the settings"));
}

} // namespace baton::ui
