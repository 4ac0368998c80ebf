#include "story_session.h"

#include "save_retry.h"
#include "story_editor.h"

#include <baton/engine/generator.h>
#include <baton/engine/windows.h>
#include <baton/story/retry.h>
#include <baton/story/title.h>

#include <QUndoStack>

#include <memory>

namespace baton::ui {

namespace {

// One step of the story's undo history. The step has already happened when it is
// pushed, so the stack's first redo() does nothing.
// `live` (a typed passage's step): while false, the step does nothing.
class StoryStep : public QUndoCommand {
public:
    StoryStep(const QString& text, std::function<void()> undo, std::function<void()> redo,
              std::shared_ptr<bool> live = {})
        : QUndoCommand(text)
        , m_undo(std::move(undo))
        , m_redo(std::move(redo))
        , m_live(std::move(live)) {}
    void undo() override {
        if (!m_live || *m_live)
            m_undo();
    }
    void redo() override {
        if (m_done && (!m_live || *m_live))
            m_redo();
        m_done = true;
    }
    const std::shared_ptr<bool>& live() const { return m_live; }

private:
    std::function<void()> m_undo, m_redo;
    std::shared_ptr<bool> m_live;
    bool m_done = false;
};

} // namespace

StorySession::StorySession(storage::StorageController& storage, engine::ModelJobs& engine,
                           QObject* parent)
    : QObject(parent)
    , m_storage(storage)
    , m_engine(engine) {
    qRegisterMetaType<ErrorText>();
    m_undo = new QUndoStack(this);
    using SC = storage::StorageController;
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
    connect(&m_storage, &SC::flushed, this, [this](quint64 request) {
        if (request != 0 && request == m_contextFlush) {
            m_contextFlush = 0;
            runContextJob();
        }
        if (request != m_flushRequest || request == 0)
            return;
        m_flushRequest = 0;
        if (m_phase != Phase::Preparing || !m_pending)
            return; // stopped meanwhile
        story::ContinueRequest r = std::move(*m_pending);
        m_pending.reset();
        startGeneration(std::move(r));
        setPhase(Phase::Generating);
    });
    auto done = [this](quint64 request) { m_writes.remove(request); };
    connect(&m_storage, &SC::passageAppended, this, [this, done](quint64 r, qint64) {
        done(r);
        onTypedWriteSaved(r);
    });
    m_leftBehindRetry = new SaveRetry(this);
    connect(m_leftBehindRetry, &SaveRetry::retry, this, &StorySession::retryLeftBehind);
    connect(&m_storage, &SC::currentPassageSet, this,
            [done](quint64 r, qint64, qint64) { done(r); });
    connect(&m_storage, &SC::storyUpdated, this, [done](quint64 r, qint64) { done(r); });
    connect(&m_storage, &SC::passageEdited, this, [done](quint64 r, qint64) { done(r); });
    connect(&m_storage, &SC::failed, this, &StorySession::onStorageFailed);
}

void StorySession::requestContext(const story::StorySettings& settings,
                                  const QString& pendingText) {
    if (!isOpen() || !m_stories || busy())
        return;
    m_contextWanted = ContextRequest{settings, pendingText.toStdString()};
    m_contextWanted->settings.sampling.maxTokens = 0;
    if (m_contextFlush == 0 && m_contextJob == 0)
        m_contextFlush = m_storage.flush();
}

void StorySession::runContextJob() {
    if (!m_contextWanted || busy() || !isOpen())
        return;
    const ContextRequest wanted = std::move(*m_contextWanted);
    m_contextWanted.reset();
    auto stories = m_stories;
    const qint64 id = m_story.id;
    using Laid = story::Result<story::ContextView>;
    m_contextJob = m_engine.run<Laid>(
        this,
        [stories, id, wanted](engine::JobContext& c) -> engine::Result<Laid> {
            if (auto model = c.requireModel(); !model)
                return model.error();
            auto service = stories->service();
            if (!service)
                return Laid(service.error());
            auto plan = story::planContinuation((*service)->database(), *c.model(), id,
                                                wanted.settings, wanted.pending);
            return plan ? story::describeContext(*plan, *c.model()) : Laid(plan.error());
        },
        [this](const Laid& view) {
            contextDone();
            if (view)
                Q_EMIT contextReady(*view);
            else
                Q_EMIT contextFailed(QString::fromStdString(view.error().message));
        },
        [this](const engine::Error& error) {
            contextDone();
            Q_EMIT contextFailed(QString::fromStdString(error.message));
        });
}

void StorySession::contextDone() {
    m_contextJob = 0;
    if (m_contextWanted) // asked again meanwhile
        m_contextFlush = m_storage.flush();
}

void StorySession::startGeneration(story::ContinueRequest r) {
    auto stories = m_stories;
    m_lastResult = {};
    const engine::WindowSettings windows = m_windows;
    using Continued = story::Result<story::ContinueResult>;
    m_job = m_engine.stream<Continued, engine::GenerationProgress>(
        this,
        [stories, r](engine::JobContext& c,
                     const std::function<void(engine::GenerationProgress)>& report)
            -> engine::Result<Continued> {
            if (auto model = c.requireModel(); !model)
                return model.error();
            auto service = stories->service();
            if (!service)
                return Continued(service.error());
            engine::GenerationStream stream(c, report);
            Continued done = (*service)->continueStory(
                c.model(), r, [&](const engine::GenerationEvent& e) { return stream.onEvent(e); },
                c.cancel());
            stream.finish();
            return done;
        },
        [this, windows](const engine::GenerationProgress& p) {
            if (!p.text.empty() && m_genStory == m_story.id)
                Q_EMIT streamed(toDisplayText(p.text));
            const int window =
                m_engine.model() ? engine::resolveWindows(*m_engine.model(), windows).window : 0;
            Q_EMIT windowProgress(p.windowIndex, p.windowFill, window, p.tokensPerSecond);
        },
        [this](const Continued& done) { onGenerationDone(done); },
        [this](const engine::Error& error) {
            m_job = 0;
            finishGeneration([this, error] {
                if (error.code != engine::ErrorCode::Cancelled)
                    Q_EMIT failed(tr("The model could not continue the story"),
                                  describeEngineError(error));
            });
        });
    setPhase(Phase::Generating);
}

void StorySession::setDatabasePath(const QString& path) {
    if (!m_stories || m_stories->databasePath() != path.toStdString())
        m_stories = std::make_shared<story::StoryServiceOnFile>(path.toStdString());
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
    m_retryChars = -1;
    Q_EMIT closed();
}

void StorySession::computeRetryPoint(const std::vector<storage::Passage>& path) {
    const auto target = story::retryTarget(path);
    m_retryChars = target ? displayLength(path, target->firstIndex) : -1;
}

bool StorySession::begin(const story::StorySettings& settings) {
    if (!isOpen() || busy())
        return false;
    if (!m_stories) {
        Q_EMIT failed(tr("Nothing to write to"), {tr("No story database is open."), {}});
        return false;
    }
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
    m_windows = settings.windows;
    m_genStory = m_story.id;
    return true;
}

bool StorySession::generate(const QString& userText, const story::StorySettings& settings) {
    if (!begin(settings))
        return false;
    story::ContinueRequest r = continuation(settings);
    r.userText = userText.toStdString();
    start(std::move(r), tr("generation"));
    return true;
}

void StorySession::retry(const story::StorySettings& settings) {
    if (!canRetry() || !begin(settings))
        return;
    Q_EMIT truncated(m_retryChars);
    story::ContinueRequest r = continuation(settings);
    r.retry = true;
    start(std::move(r), tr("retry"));
}

story::ContinueRequest StorySession::continuation(const story::StorySettings& settings) const {
    story::ContinueRequest r;
    r.storyId = m_story.id;
    r.settings = settings;
    r.chunkTokens = m_chunkTokens;
    return r;
}

void StorySession::start(story::ContinueRequest request, const QString& stepName) {
    m_leafBefore = leaf();
    m_stepName = stepName;
    m_pending = std::move(request);
    setPhase(Phase::Preparing);
    m_flushRequest = m_storage.flush();
}

void StorySession::onGenerationDone(const story::Result<story::ContinueResult>& done) {
    m_job = 0;
    if (!done) {
        const story::Error e = done.error();
        finishGeneration([this, e] {
            if (e.storage)
                Q_EMIT failed(tr("The story could not be read or saved"),
                              describeStorageError(*e.storage));
            else if (e.engine && e.engine->code != engine::ErrorCode::Cancelled)
                Q_EMIT failed(tr("The model could not continue the story"),
                              describeEngineError(*e.engine));
            else if (!e.engine)
                Q_EMIT failed(tr("The story cannot be continued"),
                              {QString::fromStdString(e.message), {}});
        });
        return;
    }
    const story::ContinueResult& r = *done;
    m_lastResult = r.generation;

    m_resumedFrom = r.resumedFromPassage;
    m_encodedChars = qint64(toDisplayText(r.readText).size());
    if (!r.notice.empty())
        Q_EMIT message(QString::fromStdString(r.notice));
    if (r.saveError) {
        const storage::StorageError saveError = *r.saveError;
        finishGeneration([this, saveError] {
            Q_EMIT failed(tr("Saving the generated text failed; the story shows what is saved"),
                          describeStorageError(saveError));
        });
        return;
    }
    const auto& g = r.generation;
    QString why;
    switch (g.reason) {
    case engine::StopReason::Cancelled:
        why = tr("stopped");
        break;
    case engine::StopReason::EndOfText:
        why = tr("the model ended the text");
        break;
    case engine::StopReason::StopString:
        why = tr("stop string");
        break;
    case engine::StopReason::BannedPhrase:
        why = tr("a banned phrase kept coming back");
        break;
    default:
        why = tr("max tokens");
        break;
    }
    const QString tokens =
        g.tokens.size() == 1 ? tr("1 token") : tr("%1 tokens").arg(g.tokens.size());
    const QString summary = tr("%1 in %2 s (%3 tokens/s), %4")
                                .arg(tokens)
                                .arg(g.seconds, 0, 'f', 1)
                                .arg(g.tokensPerSecond, 0, 'f', 1)
                                .arg(why);
    finishGeneration([this, summary] { Q_EMIT generationFinished(summary); });
}

void StorySession::finishGeneration(std::function<void()> report) {
    if (m_genStory != m_story.id) {
        // The story was closed meanwhile.
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

void StorySession::reloadPath(bool show, std::function<void()> then,
                              std::function<void()> storyChanged) {
    const qint64 id = m_story.id;
    m_storage.currentPath(
        id, this,
        [this, id, show, then, storyChanged](std::vector<storage::Passage> path) {
            if (id != m_story.id) {
                if (storyChanged)
                    storyChanged();
                return;
            }
            m_path = std::move(path);
            computeRetryPoint(m_path);
            nameFromOpening();
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

void StorySession::nameFromOpening() {
    if (!isOpen() || !story::isUntitled(m_story.title))
        return;
    std::string opening;
    for (size_t i = 0; i < m_path.size() && opening.size() < 400; ++i)
        opening += m_path[i].text;
    const std::string title = story::titleFromText(opening);
    if (title.empty())
        return;
    m_story.title = title;
    storage::StoryChange change;
    change.title = title;
    m_writes.insert(m_storage.updateStory(m_story.id, change), tr("Naming the story"));
    Q_EMIT retitled(m_story.id, QString::fromStdString(title));
}

void StorySession::applyMove(qint64 leafId) {
    if (!isOpen())
        return;
    m_writes.insert(m_storage.setCurrentPassage(m_story.id, leafId), tr("Moving in the story"));
    reloadPath(true);
}

void StorySession::applyEdits(const std::vector<story::PassageEdit>& edits,
                              const std::shared_ptr<ReplacedPassages>& replaced) {
    replaced->clear();
    for (const auto& e : edits) {
        replaced->push_back(std::make_shared<storage::ReplacedPassage>());
        m_writes.insert(m_storage.editPassage(e.passageId, e.after, replaced->back()),
                        tr("Saving your edit"));
    }
}

void StorySession::undoEdits(const std::shared_ptr<ReplacedPassages>& replaced) {
    if (!isOpen())
        return;
    // Last first: an earlier edit's states include those of the passages after it.
    for (auto r = replaced->rbegin(); r != replaced->rend(); ++r)
        m_writes.insert(m_storage.undoEdit(*r), tr("Taking the edit back"));
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
    // The reply is the last generation; the action is the passage before it.
    const auto reply = story::retryTarget(m_path);
    const size_t first = reply ? reply->firstIndex : m_path.size();
    if (first == 0 || busy())
        return false;
    // m_path[first - 1] is the action; the turn ends before it.
    switchTo(first >= 2 ? m_path[first - 2].id : 0, tr("taking back a turn"));
    return true;
}

void StorySession::saveEdits(const std::vector<story::PassageEdit>& edits) {
    if (edits.empty() || !isOpen())
        return;
    // What the edits replace, states included, kept by the storage thread for Undo.
    auto replaced = std::make_shared<ReplacedPassages>();
    applyEdits(edits, replaced);
    m_undo->push(new StoryStep(
        tr("edit"), [this, replaced] { undoEdits(replaced); },
        [this, edits, replaced] {
            if (!isOpen())
                return;
            applyEdits(edits, replaced);
            reloadPath(true);
        }));
    reloadPath(false);
}

void StorySession::saveTyped(const QString& text) {
    if (text.isEmpty() || !isOpen() || busy())
        return;
    const qint64 before = leaf();
    // The step is on the stack at once (an Undo right away must find it); the new
    // passage's id arrives with the path, before any later request is answered. A
    // passage that is not saved has nothing to undo: its step does nothing and is
    // dropped (dropTypingStep).
    auto after = std::make_shared<qint64>(0);
    auto live = std::make_shared<bool>(true);
    m_undo->push(new StoryStep(
        tr("typing"), [this, before] { applyMove(before); },
        [this, after] {
            if (*after != 0)
                applyMove(*after);
        },
        live));
    sendTyped({m_story.id, text, live});
    reloadPath(true, [this, after] { *after = leaf(); });
}

void StorySession::dropTypingStep(const TypedWrite& write) {
    if (!write.step)
        return;
    *write.step = false;
    const int n = m_undo->count();
    const auto* last = n > 0 ? dynamic_cast<const StoryStep*>(m_undo->command(n - 1)) : nullptr;
    if (last && m_undo->index() == n && last->live() == write.step) {
        const_cast<StoryStep*>(last)->setObsolete(true);
        m_undo->undo(); // does nothing, and takes the obsolete step off the stack
    }
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
    storage::StoryChange change;
    change.memory = m;
    change.authorsNote = n;
    m_writes.insert(m_storage.updateStory(m_story.id, change),
                    tr("Saving the memory and author's note"));
}

void StorySession::onStorageFailed(quint64 request, const storage::StorageError& error) {
    if (request == m_loadRequest && request != 0) {
        m_loadRequest = 0;
        Q_EMIT failed(tr("The story could not be opened"), describeStorageError(error));
        return;
    }
    const auto it = m_writes.find(request);
    if (it == m_writes.end())
        return;
    const QString what = it.value();
    m_writes.erase(it);
    if (onTypedWriteFailed(request, error))
        return;
    Q_EMIT failed(tr("%1 failed; the story shows what is saved").arg(what),
                  describeStorageError(error));
    if (m_story.id != 0 && !busy())
        m_loadRequest = m_storage.loadStory(m_story.id);
}

void StorySession::stop() {
    if (m_phase == Phase::Generating && m_job) {
        m_engine.cancel(m_job);
        setPhase(Phase::Stopping);
    } else if (m_phase == Phase::Preparing) {
        m_pending.reset();
        m_flushRequest = 0;
        setPhase(Phase::Idle);
    }
}

void StorySession::saveSettings(const std::string& json) {
    if (!isOpen() || json == m_story.settingsJson)
        return;
    m_story.settingsJson = json;
    storage::StoryChange change;
    change.settingsJson = json;
    m_writes.insert(m_storage.updateStory(m_story.id, change), tr("Saving the settings"));
}

} // namespace baton::ui
