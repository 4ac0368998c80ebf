// Baton's main window: the library on the left, the story in the centre, the
// generation settings in a dock on the right, the model and the generation's speed
// and window position in the status bar. It works through the two facades only
// (EngineController, StorageController), which the composition root owns.
#pragma once

#include <QMainWindow>

#include <optional>

class QAction;
class QDockWidget;
class QFrame;
class QLabel;

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

namespace baton::ui {

class GenerationSettingsPanel;
class LibraryPanel;
class StoryEditor;
class StorySession;
struct ErrorText;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(storage::StorageController& storage, engine::EngineController& engine,
               QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens the story database (the library lists it once open).
    void openDatabase(const QString& path);
    // Loads a model folder on the engine thread (the current one stays until it is
    // replaced; a failure is reported).
    void loadModel(const QString& folder);
    // Shown while no model is loaded.
    void setNoModelHint(const QString& text);

    LibraryPanel* library() const { return m_library; }
    StoryEditor* editor() const { return m_editor; }
    StorySession* session() const { return m_session; }
    GenerationSettingsPanel* settingsPanel() const { return m_settings; }

Q_SIGNALS:
    void databaseOpened();
    void modelReady();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createMenus();
    void openModelDialog();
    void newStory();
    void generate();
    void continueStory();
    void retry();
    void updateActions();
    void updateModelLabel();
    void showError(const QString& what, const ErrorText& error);
    void showStorageError(const QString& what, const storage::StorageError& error);
    void about();

    storage::StorageController& m_storage;
    engine::EngineController& m_engine;
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
    QDockWidget* m_settingsDock = nullptr;
    quint64 m_openRequest = 0;
    quint64 m_loadJob = 0;
    bool m_databaseOpen = false;
};

} // namespace baton::ui
