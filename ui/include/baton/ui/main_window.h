// Baton's main window, in pages: Write (the library on the left, the story in the
// centre, the generation settings in a dock on the right), Compare overlaps,
// Fine-tune and Models; the model and the generation's speed and window position in
// the status bar. It works through the facades only, which the composition root
// owns: the storage, the writing engine (the story's model) and the lab engine
// (evaluations, fine-tuning and model checks, so they never replace the model a
// story is written with).
#pragma once

#include <QMainWindow>
#include <QStringList>

#include <optional>

class QAction;
class QDockWidget;
class QFrame;
class QLabel;
class QTabWidget;
class QTimer;

namespace baton::engine {
class EngineController;
struct ModelInfo;
struct Error;
} // namespace baton::engine

namespace baton::storage {
class StorageController;
struct StorageError;
struct Story;
} // namespace baton::storage

namespace baton::story {
struct StorySettings;
}

namespace baton::ui {

class ComparePanel;
class FineTunePanel;
class GenerationSettingsPanel;
class LibraryPanel;
class ModelCatalog;
class ModelsPanel;
class AdventureBar;
class StoryEditor;
class StoryNotesPanel;
class StorySession;
class StoryTreePanel;
class TopicsPanel;
class WindowRuler;
struct ErrorText;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // bundledModels: the folders of the bundled models (always in the model list; the
    // first is the default until the user chooses another).
    MainWindow(storage::StorageController& storage, engine::EngineController& engine,
               engine::EngineController& lab, const QStringList& bundledModels = {},
               QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens the story database (the library lists it once open).
    void openDatabase(const QString& path);
    // Loads a model folder on the engine thread (the current one stays until it is
    // replaced; a failure is reported).
    void loadModel(const QString& folder);
    // Shown while no model is loaded.
    void setNoModelHint(const QString& text);
    // With true, the default model of the model list is loaded once the database is
    // open (main() does this when no --model is given).
    void setLoadDefaultModel(bool load) { m_loadDefault = load; }
    enum class Page { Write, Compare, FineTune, Models, Topics };
    void showPage(Page page);

    LibraryPanel* library() const { return m_library; }
    StoryEditor* editor() const { return m_editor; }
    StorySession* session() const { return m_session; }
    GenerationSettingsPanel* settingsPanel() const { return m_settings; }
    ModelCatalog* catalog() const { return m_catalog; }
    WindowRuler* ruler() const { return m_ruler; }
    ModelsPanel* modelsPanel() const { return m_models; }
    ComparePanel* comparePanel() const { return m_compare; }
    FineTunePanel* fineTunePanel() const { return m_fineTune; }
    StoryTreePanel* storyTree() const { return m_tree; }
    StoryNotesPanel* notesPanel() const { return m_notes; }
    AdventureBar* adventureBar() const { return m_adventure; }
    TopicsPanel* topicsPanel() const { return m_topics; }

Q_SIGNALS:
    void databaseOpened();
    void modelReady();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createMenus();
    void openModelDialog();
    void newStory(bool adventure);
    // Saves the edits of saved text the editor holds (before anything that reads or
    // moves the story).
    void commitEdits();
    // commitEdits(), and the typed text saved as the user's passage (autosave).
    void saveDraft();
    // The panel's settings, with an adventure's stop string.
    story::StorySettings generationSettings() const;
    void loadStorySettings(const storage::Story& story);
    void sendTurn(int kind, const QString& input);
    void storyUndo();
    void storyRedo();
    void switchAlternative(int step);
    void generate();
    void continueStory();
    void retry();
    void updateActions();
    void updateModelLabel();
    void showError(const QString& what, const ErrorText& error);
    void showStorageError(const QString& what, const storage::StorageError& error);
    void about();

    void useModelForWriting(const QString& folder);
    // The window ruler and the per-token loss colours (Story > Show windows and loss).
    void showLoss(bool on);
    void onTokenLosses(quint64 job, const std::vector<int64_t>& byteEnd,
                       const std::vector<float>& nll, int window, int overlap, bool state);
    void dropLoss(const QString& why);

    storage::StorageController& m_storage;
    engine::EngineController& m_engine;
    engine::EngineController& m_lab;
    ModelCatalog* m_catalog = nullptr;
    QTabWidget* m_pages = nullptr;
    ModelsPanel* m_models = nullptr;
    ComparePanel* m_compare = nullptr;
    FineTunePanel* m_fineTune = nullptr;
    bool m_loadDefault = false;
    QStringList m_bundledModels;
    QString m_databasePath;
    LibraryPanel* m_library = nullptr;
    StoryEditor* m_editor = nullptr;
    StorySession* m_session = nullptr;
    GenerationSettingsPanel* m_settings = nullptr;
    QFrame* m_noModelBar = nullptr;
    QLabel* m_noModelLabel = nullptr;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_speedLabel = nullptr;
    QLabel* m_windowLabel = nullptr;
    QAction* m_newAction = nullptr;
    QAction* m_newAdventureAction = nullptr;
    QAction* m_undoAction = nullptr;
    QAction* m_redoAction = nullptr;
    QAction* m_prevAltAction = nullptr;
    QAction* m_nextAltAction = nullptr;
    QAction* m_undoTurnAction = nullptr;
    StoryTreePanel* m_tree = nullptr;
    TopicsPanel* m_topics = nullptr;
    StoryNotesPanel* m_notes = nullptr;
    AdventureBar* m_adventure = nullptr;
    QDockWidget* m_treeDock = nullptr;
    QDockWidget* m_notesDock = nullptr;
    QTimer* m_editTimer = nullptr;
    QAction* m_openModelAction = nullptr;
    QAction* m_quitAction = nullptr;
    QAction* m_renameAction = nullptr;
    QAction* m_deleteAction = nullptr;
    QAction* m_undoDeleteAction = nullptr;
    QAction* m_generateAction = nullptr;
    QAction* m_continueAction = nullptr;
    QAction* m_retryAction = nullptr;
    QAction* m_stopAction = nullptr;
    QAction* m_aboutAction = nullptr;
    QAction* m_duplicateAction = nullptr;
    QAction* m_lossAction = nullptr;
    WindowRuler* m_ruler = nullptr;
    quint64 m_lossJob = 0;
    QString m_lossText; // the text the shown losses belong to
    QAction* m_pageActions[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
    QDockWidget* m_settingsDock = nullptr;
    quint64 m_openRequest = 0;
    quint64 m_loadJob = 0;
    bool m_databaseOpen = false;
};

} // namespace baton::ui
