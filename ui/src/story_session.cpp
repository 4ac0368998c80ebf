#include "story_session.h"

#include "story_editor.h"

#include <baton/engine/generator.h>
#include <baton/engine/windows.h>

namespace baton::ui {

namespace {

int displayLength(const std::vector<storage::Passage>& path, size_t count) {
    int n = 0;
    for (size_t i = 0; i < count && i < path.size(); ++i)
        n += int(toDisplayText(path[i].text).size());
    return n;
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
    using SC = storage::StorageController;
    using EC = engine::EngineController;
    connect(&m_storage, &SC::storyLoaded, this,
            [this](quint64 request, const storage::Story& story,
                   const std::vector<storage::Passage>& path) {
                if (request != m_loadRequest)
                    return;
                m_loadRequest = 0;
                m_story = story;
                computeRetryPoint(path);
                Q_EMIT opened(story, path);
            });
    connect(&m_storage, &SC::resumePointReady, this, &StorySession::onResumePoint);
    auto done = [this](quint64 request) { m_writes.remove(request); };
    connect(&m_storage, &SC::passageAppended, this, [done](quint64 r, qint64) { done(r); });
    connect(&m_storage, &SC::currentPassageSet, this,
            [done](quint64 r, qint64, qint64) { done(r); });
    connect(&m_storage, &SC::storyUpdated, this, [done](quint64 r, qint64) { done(r); });
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
    m_retryParent = -1;
    Q_EMIT closed();
}

void StorySession::computeRetryPoint(const std::vector<storage::Passage>& path) {
    // The trailing run of model passages is what a retry replaces.
    size_t first = path.size();
    while (first > 0 && path[first - 1].author == storage::PassageAuthor::Model)
        --first;
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
    if (point.hasState())
        r.state = point.state.blob;
    r.text = point.textAfterState();
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
        r.text.clear();
        for (const auto& p : m_genPath)
            r.text += p.text;
        m_resumedFrom = 0;
        m_encodedChars = qint64(toDisplayText(r.text).size());
        Q_EMIT message(tr("The saved state could not be used (%1); encoding the story's text.")
                           .arg(QString::fromStdString(error.message)));
        startGeneration(r);
        return;
    }
    setPhase(Phase::Idle);
    if (!ok) {
        if (error.code != engine::ErrorCode::Cancelled)
            Q_EMIT failed(tr("The model could not continue the story"), describeEngineError(error));
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
    Q_EMIT generationFinished(tr("%1 in %2 s (%3 tokens/s), %4")
                                  .arg(tokens)
                                  .arg(r.seconds, 0, 'f', 1)
                                  .arg(r.tokensPerSecond, 0, 'f', 1)
                                  .arg(why));
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
