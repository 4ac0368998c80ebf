// The open story and its generation (a presenter: no widgets), a thin Qt adapter of
// the story module: a generation is story::StoryService::continueStory run as one job
// of the writing model's queue (engine::ModelJobs::stream) over the session's own
// connection to the story database (story::StoryServiceOnFile), exactly what baton-cli
// runs. It saves the typed text, resumes from the latest saved state of the current
// path, and saves every chunk with the state after it as it streams, so a kill loses
// at most the chunk being generated. Retry rewrites exactly the last generation (the
// generations are recorded), also after the story was reopened. Before a generation
// starts, the storage thread's pending writes are flushed, so the continuation sees
// them; after it, the path is read again.
//
// The story's undo stack: a generation, a retry, a switch to another branch and an
// edit of saved text are each one step. Nothing is deleted: undoing a generation
// moves the current leaf back (the text stays in the tree, and redo moves forward
// again); undoing an edit writes the old text back (the states after it are
// recomputed when needed).
#pragma once

#include "error_text.h"
#include "story_editor.h"

#include <baton/engine/generation_stream.h>
#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/records.h>
#include <baton/story/context.h>
#include <baton/story/settings.h>
#include <baton/story/story_service.h>
#include <baton/story/token_choices.h>

#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QUndoStack;

namespace baton::ui {

class SaveRetry;

class StorySession : public QObject {
    Q_OBJECT
public:
    enum class Phase { Idle, Preparing, Generating, Stopping };

    StorySession(storage::StorageController& storage, engine::ModelJobs& engine,
                 QObject* parent = nullptr);

    // The story database's file: continuations open their own connection to it.
    void setDatabasePath(const QString& path);
    void open(qint64 storyId);
    void close();
    qint64 storyId() const { return m_story.id; }
    const storage::Story& story() const { return m_story; }
    bool isOpen() const { return m_story.id != 0; }
    Phase phase() const { return m_phase; }
    bool busy() const { return m_phase != Phase::Idle; }
    // A saveTyped write is not answered yet (or its failure not yet back in the editor).
    bool savingTyped() const { return !m_typedWrites.isEmpty() || m_typedRestoring > 0; }
    // Typed text of a story the writer left waits to be saved again.
    bool hasLeftBehindText() const { return !m_leftBehind.isEmpty(); }

    // Saves userText (when not empty) and continues the story. False (with `failed`
    // emitted when the reason is the user's to fix) when it cannot start.
    bool generate(const QString& userText, const story::StorySettings& settings);
    // True when the path ends with a generation that can be retried.
    bool canRetry() const { return isOpen() && m_retryChars >= 0; }
    void retry(const story::StorySettings& settings);
    void stop();
    // Saves the story's generation settings (when they changed).
    void saveSettings(const std::string& json);
    // Saves the memory and the author's note (when they changed; a new memory makes
    // the next generation encode the story again).
    void saveNotes(const QString& memory, const QString& authorsNote);
    // Saves edits of saved text (one undo step).
    void saveEdits(const std::vector<story::PassageEdit>& edits);
    // Saves typed text as a user passage at the end of the path without generating
    // (autosave of a draft; one undo step).
    void saveTyped(const QString& text);

    // The token alternatives recorded with a saved passage that still describe its text
    // (story/token_choices.h), for `done` on this thread (not called once context is
    // gone); `problem` says why there are none when they could not be read.
    using ChoicesDone =
        std::function<void(std::vector<story::TokenChoice> choices, QString problem)>;
    void loadChoices(qint64 passageId, QObject* context, ChoicesDone done);
    // Branches at a token of a passage on the current path with one of its alternatives
    // and continues from there (story::ContinueRequest::branch; one undo step): the
    // editor drops what follows the token and shows the alternative. `choices`: the
    // passage's, from loadChoices. False when it cannot start.
    bool branchAt(const story::TokenBranch& at, const std::vector<story::TokenChoice>& choices,
                  const story::StorySettings& settings);

    // The current path, as last read.
    const std::vector<storage::Passage>& path() const { return m_path; }
    // Makes leafId (0: an empty path) the end of the current path (one undo step).
    void switchTo(qint64 leafId, const QString& what);
    // Adventure: moves the current leaf to before the player's last action (the last
    // passage not written by the model) and the reply after it. False when there is
    // no such action.
    bool undoTurn();

    QUndoStack* undoStack() const { return m_undo; }
    bool canUndo() const;
    bool canRedo() const;
    void undo();
    void redo();
    void setChunkTokens(int tokens) { m_chunkTokens = tokens; }

    // Lays out what the next continuation reads, with pendingText sent along
    // (story/context.h: the plan continueStory runs), on the engine thread after the
    // storage thread's pending writes; answered by contextReady or contextFailed. Not
    // while a generation runs; a request made while one is computed runs after it.
    void requestContext(const story::StorySettings& settings, const QString& pendingText);

    // The passage whose saved state the last generation continued from (0: none, the
    // text was encoded), and how many characters of text it encoded after it.
    qint64 resumedFromPassage() const { return m_resumedFrom; }
    qint64 encodedChars() const { return m_encodedChars; }
    const engine::GenerationResult& lastResult() const { return m_lastResult; }

Q_SIGNALS:
    void opened(baton::storage::Story story, std::vector<baton::storage::Passage> path);
    // The current path was read again (after a generation, an undo, a switch): the
    // editor shows it.
    void pathChanged(std::vector<baton::storage::Passage> path);
    void closed();
    void phaseChanged(baton::ui::StorySession::Phase phase);
    // The editor drops everything from this character on (a retry).
    void truncated(int chars);
    // Generated text, as it streams.
    void streamed(QString text);
    // The open window while generating: its 0-based index, tokens in it, T.
    void windowProgress(qint64 window, int fill, int size, double tokensPerSecond);
    void generationFinished(QString summary);
    // A failure for the user: what failed and why.
    void failed(QString what, baton::ui::ErrorText error);
    void message(QString text);
    void contextReady(baton::story::ContextView view);
    // An untitled story was named from its opening words (story/title.h).
    void retitled(qint64 storyId, QString title);
    void contextFailed(QString message);
    // Typed text that saveTyped could not save (a full disk, an I/O error): the path
    // without it has been shown; the editor takes the text back as typed text, and the
    // owner saves it again later.
    void typedTextNotSaved(QString text, baton::ui::ErrorText error);
    // A saveTyped write went in.
    void typedTextSaved();

private:
    // A saveTyped write: the story and the text, and the flag that keeps its "Typing"
    // undo step live (none once it is saved again after a failure).
    struct TypedWrite {
        qint64 story = 0;
        QString text;
        std::shared_ptr<bool> step;
    };

    void setPhase(Phase phase);
    // Checks the model and the windows before a generation starts.
    bool begin(const story::StorySettings& settings);
    // A continuation of the open story with these settings (what generate, retry and
    // branchAt then add to).
    story::ContinueRequest continuation(const story::StorySettings& settings) const;
    // Flushes the storage thread's writes, then runs the continuation.
    void start(story::ContinueRequest request, const QString& stepName);
    // Runs the continuation as one job of the model's queue.
    void startGeneration(story::ContinueRequest request);
    void onGenerationDone(const story::Result<story::ContinueResult>& done);
    void runContextJob();
    void contextDone();
    // Names an untitled story from its opening words once it has some.
    void nameFromOpening();
    void onStorageFailed(quint64 request, const storage::StorageError& error);
    void computeRetryPoint(const std::vector<storage::Passage>& path);
    qint64 leaf() const { return m_path.empty() ? 0 : m_path.back().id; }
    // Reads the current path (after every request before it); with show, the editor
    // shows it (pathChanged). `then` runs after, or storyChanged instead when another
    // story was opened meanwhile.
    void reloadPath(bool show, std::function<void()> then = {},
                    std::function<void()> storyChanged = {});
    // The generation ended: read what was saved, record the undo step, go idle.
    void finishGeneration(std::function<void()> report);
    void applyMove(qint64 leafId);
    // Sends the save of typed text (saveTyped, and again for m_leftBehind).
    void sendTyped(const TypedWrite& write);
    void retryLeftBehind();
    void leaveBehind(const TypedWrite& write, const ErrorText& why);
    void onTypedWriteSaved(quint64 request);
    // A typed passage was not saved: its "Typing" step undoes nothing, and leaves the
    // stack when nothing came after it.
    void dropTypingStep(const TypedWrite& write);
    // A typed write failed (story_session_typing.cpp): false when `request` is not one.
    bool onTypedWriteFailed(quint64 request, const storage::StorageError& error);
    // Records a move of the current leaf that has happened (undo goes back to before).
    void pushMove(const QString& name, qint64 before, qint64 after);
    // Saves edits, keeping in `replaced` what each replaced (states included);
    // undoEdits puts it back.
    using ReplacedPassages = std::vector<std::shared_ptr<storage::ReplacedPassage>>;
    void applyEdits(const std::vector<story::PassageEdit>& edits,
                    const std::shared_ptr<ReplacedPassages>& replaced);
    void undoEdits(const std::shared_ptr<ReplacedPassages>& replaced);

    storage::StorageController& m_storage;
    engine::ModelJobs& m_engine;
    std::shared_ptr<story::StoryServiceOnFile> m_stories;
    storage::Story m_story;
    Phase m_phase = Phase::Idle;
    qint64 m_genStory = 0;            // the story the running generation writes to
    engine::WindowSettings m_windows; // what it asked for (0: the model's)
    engine::JobId m_job = 0;
    quint64 m_loadRequest = 0;
    quint64 m_flushRequest = 0;
    std::optional<story::ContinueRequest> m_pending; // waits for the flush
    QHash<quint64, QString> m_writes;                // pending writes -> what they do, for errors
    QHash<quint64, TypedWrite> m_typedWrites;        // pending saveTyped writes
    // Typed text of a story the writer has left (opened another, or closed it) whose
    // save failed: saved again to that story, after SaveRetry's delays, until it goes in.
    QList<TypedWrite> m_leftBehind;
    SaveRetry* m_leftBehindRetry = nullptr;
    int m_typedRestoring = 0; // failed typed saves on their way back to the editor
    int m_retryChars = -1;    // editor characters before the last generation; -1: none
    qint64 m_resumedFrom = 0;
    qint64 m_encodedChars = 0;
    int m_chunkTokens = 16;
    engine::GenerationResult m_lastResult;
    std::vector<storage::Passage> m_path; // the current path, as last read
    QUndoStack* m_undo = nullptr;
    qint64 m_leafBefore = 0; // the current leaf when the generation began
    QString m_stepName;      // what the generation is called in the undo history
    // The context view: the request waiting for the flush or for the running one.
    struct ContextRequest {
        story::StorySettings settings;
        std::string pending;
    };
    std::optional<ContextRequest> m_contextWanted;
    quint64 m_contextFlush = 0;
    engine::JobId m_contextJob = 0;
};

} // namespace baton::ui
