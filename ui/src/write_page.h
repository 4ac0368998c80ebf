// The Write page: the library on the left, the story in the centre (a notice while no
// model is loaded, the editor, the adventure bar, the window ruler), and its docks on
// the right of the main window (generation settings, branches, memory and note, world
// info, and the context viewer: write_page_docks.cpp). It
// owns the story's actions (new, undo/redo, generate, continue, retry, stop,
// alternatives, windows and loss) and wires the library, the editor and the story
// session together; the main window hosts it and shows what it reports.
#pragma once

#include "error_text.h"
#include "topics_panel.h"
#include "write_actions.h"

#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

class QAction;
class QDockWidget;
class QFrame;
class QLabel;
class QMainWindow;
class QTimer;

namespace baton::engine {
class ModelJobs;
struct ModelInfo;
} // namespace baton::engine

namespace baton::storage {
class StorageController;
struct StorageError;
struct Story;
} // namespace baton::storage

namespace baton::story {
struct ContextView;
struct StorySettings;
} // namespace baton::story

namespace baton::ui {

class AdventureBar;
class ContextPanel;
class GenerationSettingsPanel;
class LibraryPanel;
class LossView;
class NoticeBar;
class SaveRetry;
class StoryEditor;
class StoryImporter;
class StoryNotesPanel;
class StorySession;
class StoryTreePanel;
class WindowRuler;
class WorldInfoPanel;

class WritePage : public QWidget {
    Q_OBJECT
public:
    // Its docks are added to `window`, its actions too (for their shortcuts).
    WritePage(storage::StorageController& storage, engine::ModelJobs& engine, QMainWindow& window);
    // The session goes first, unheard: its last signals must not reach a page whose docks
    // the window has already deleted.
    ~WritePage() override;

    LibraryPanel* library() const { return m_library; }
    StoryEditor* editor() const { return m_editor; }
    StorySession* session() const { return m_session; }
    GenerationSettingsPanel* settingsPanel() const { return m_settings; }
    WindowRuler* ruler() const { return m_ruler; }
    StoryTreePanel* storyTree() const { return m_tree; }
    StoryNotesPanel* notesPanel() const { return m_notes; }
    WorldInfoPanel* worldInfoPanel() const { return m_worldInfo; }
    ContextPanel* contextPanel() const { return m_context; }
    AdventureBar* adventureBar() const { return m_adventure; }
    std::vector<QDockWidget*> docks() const {
        return {m_settingsDock, m_treeDock, m_notesDock, m_worldInfoDock, m_contextDock};
    }

    const WriteActions& actions() const { return m_actions; }

    // The open story's text ("" without one), for the Compare page.
    QString storyText() const;
    // The open story's saved text and latest generation, for the Topics page.
    std::optional<TopicsPanel::StoryText> topicsStory();

    void setDatabasePath(const QString& path);
    void onDatabaseOpened();
    void onModelLoaded(const engine::ModelInfo& info);
    void setModelLoading(bool loading);
    void setNoModelHint(const QString& text);
    // A new story from a book file, read off the GUI thread (File > Import story).
    void importStory(const QString& path);
    // Writes the open story's current branch to `path`: Markdown (a "# " title line) for
    // .md and .markdown, else plain text; what Import story reads back. False (with
    // `failed` emitted) when it cannot be written.
    bool exportStory(const QString& path);
    // The open story continues with this model from now on.
    void setStoryModel(const QString& folder);
    bool busy() const;
    // Before the window closes: stop and keep what is being generated, save what was
    // typed and edited, write a pending delete, and wait for the typed text's save to be
    // answered. False when some typed text could not be saved (it is in the editor, or
    // waits to be saved again to a story the writer left): closing now would lose it.
    bool prepareToClose();
    void updateActions();

Q_SIGNALS:
    void statusMessage(QString text, int milliseconds);
    // Which window is open and how full (the context view's, or the generation's as it
    // streams): what the status bar shows; "" without a story.
    void windowStatus(QString text);
    // How fast the last generation went ("" before one).
    void speedStatus(QString text);
    void titleChanged(QString title); // "" without a story
    void failed(QString what, baton::ui::ErrorText error);
    void openModelRequested();
    // The open story was written with this model (not the loaded one).
    void storyModelWanted(QString folder);

private:
    void createActions(QMainWindow& window);
    // The story open at the last close, with the caret where it was (QSettings
    // write/lastStory, write/caret): reopened once the library first lists it.
    void reopenLastStory();
    void rememberStory();
    void createDocks(QMainWindow& window);
    void connectParts();
    void connectSaving(); // write_page_saving.cpp
    // The memory, world info and context docks (write_page_docks.cpp).
    void connectDocks();
    // Saves at once what is being typed or set in the docks: the memory, the note,
    // world info and the generation settings (each saves by itself after a pause).
    void flushDocks();
    void saveSettings(); // the generation settings, with the story they were edited for
    // Lays out the next continuation again after a pause: the one source of "which
    // window, how full" (status bar, Context dock, ruler) and of what the memory, the
    // note and world info cost.
    void refreshContext();
    // Shows a context view everywhere it is shown.
    void showContext(const story::ContextView& view);
    void newStory(bool adventure);
    // Saves the edits of saved text the editor holds (before anything that reads or
    // moves the story).
    void commitEdits();
    // commitEdits(), and the typed text saved as the user's passage (autosave).
    void saveDraft();
    void loadStorySettings(const storage::Story& story);
    void sendTurn(int kind, const QString& input);
    void storyUndo();
    void storyRedo();
    void switchAlternative(int step);
    void generate();
    void continueStory();
    void retry();
    // The menu of the token alternatives at a character of a saved passage.
    void showTokenAlternatives(qint64 passageId, int offset, const QPoint& globalPos);
    // The window ruler and the per-token loss colours (Story > Show windows and loss).
    void showLoss(bool on);

    storage::StorageController& m_storage;
    engine::ModelJobs& m_engine;
    LibraryPanel* m_library = nullptr;
    StoryEditor* m_editor = nullptr;
    StorySession* m_session = nullptr;
    GenerationSettingsPanel* m_settings = nullptr;
    StoryTreePanel* m_tree = nullptr;
    StoryNotesPanel* m_notes = nullptr;
    WorldInfoPanel* m_worldInfo = nullptr;
    ContextPanel* m_context = nullptr;
    AdventureBar* m_adventure = nullptr;
    StoryImporter* m_importer = nullptr;
    WindowRuler* m_ruler = nullptr;
    LossView* m_loss = nullptr;
    NoticeBar* m_noModelBar = nullptr;
    QDockWidget* m_settingsDock = nullptr;
    QDockWidget* m_treeDock = nullptr;
    QDockWidget* m_notesDock = nullptr;
    QDockWidget* m_worldInfoDock = nullptr;
    QDockWidget* m_contextDock = nullptr;
    QTimer* m_contextTimer = nullptr;
    QTimer* m_settingsTimer = nullptr;   // saves the generation settings after a change
    qint64 m_settingsStory = 0;          // ... of this story
    std::vector<int64_t> m_windowStarts; // the last context view's (the ruler's windows)
    QTimer* m_editTimer = nullptr;
    SaveRetry* m_saveRetry = nullptr;
    WriteActions m_actions{};
    bool m_databaseOpen = false;
    bool m_reopened = false; // the last story was reopened (or there was none)
    qint64 m_caretStory = 0; // reopened at launch: its caret goes to m_caret
    QString m_wantedModel;   // the open story's model, asked for once the loading one is in
    int m_caret = 0;
    bool m_modelLoading = false;
};

} // namespace baton::ui
