// Baton's main window, in pages: Write (the library on the left, the story in the
// centre, the generation settings in a dock on the right), Compare overlaps,
// Fine-tune, Models, Topics and Server; the model and the generation's speed and window position in
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
class ModelJobs;
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
class LabBackend;
class LibraryPanel;
class ModelCatalog;
class ModelsPanel;
class AdventureBar;
class StoryEditor;
class StoryNotesPanel;
class StorySession;
class StoryTreePanel;
class ServerPanel;
class TopicsPanel;
class WindowRuler;
class WritePage;
struct ErrorText;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // bundledModels: the folders of the bundled models (always in the model list; the
    // first is the default until the user chooses another).
    MainWindow(storage::StorageController& storage, engine::ModelJobs& engine,
               engine::ModelJobs& lab, const QStringList& bundledModels = {},
               QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens the story database (the library lists it once open).
    void openDatabase(const QString& path);
    // Loads a model folder on the engine thread (the current one stays until it is
    // replaced; a failure is reported).
    // Loads a catalog path in the writing engine (an adapter onto its base).
    void loadModel(const QString& path);
    // Reloads the writing model when it holds its weights in another format than the
    // Models page's choice (after a load in progress; not while generating).
    void applyWeights();
    // Shown while no model is loaded.
    void setNoModelHint(const QString& text);
    // With true, the default model of the model list is loaded once the database is
    // open (main() does this when no --model is given).
    void setLoadDefaultModel(bool load) { m_loadDefault = load; }
    enum class Page { Write, Compare, FineTune, Models, Topics, Server };
    void showPage(Page page);

    // The Write page's parts (tests drive them).
    LibraryPanel* library() const;
    StoryEditor* editor() const;
    StorySession* session() const;
    GenerationSettingsPanel* settingsPanel() const;
    ModelCatalog* catalog() const { return m_catalog; }
    WindowRuler* ruler() const;
    ModelsPanel* modelsPanel() const { return m_models; }
    ComparePanel* comparePanel() const { return m_compare; }
    FineTunePanel* fineTunePanel() const { return m_fineTune; }
    StoryTreePanel* storyTree() const;
    StoryNotesPanel* notesPanel() const;
    AdventureBar* adventureBar() const;
    TopicsPanel* topicsPanel() const { return m_topics; }
    ServerPanel* serverPanel() const { return m_server; }

Q_SIGNALS:
    void databaseOpened();
    void modelReady();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createMenus();
    void openModelDialog();
    void updateModelLabel();
    void showError(const QString& what, const ErrorText& error);
    // Typed text could not be saved and the window is closing: true to close anyway.
    bool confirmLosingText();
    void about();
    void useModelForWriting(const QString& folder);

    storage::StorageController& m_storage;
    engine::ModelJobs& m_engine; // the writing model's queue (the story, the Server page)
    engine::ModelJobs& m_lab;    // the lab's (evaluations, fine-tuning, model checks)
    ModelCatalog* m_catalog = nullptr;
    LabBackend* m_labBackend = nullptr;
    WritePage* m_write = nullptr;
    QTabWidget* m_pages = nullptr;
    ModelsPanel* m_models = nullptr;
    ComparePanel* m_compare = nullptr;
    FineTunePanel* m_fineTune = nullptr;
    TopicsPanel* m_topics = nullptr;
    ServerPanel* m_server = nullptr;
    bool m_loadDefault = false;
    QStringList m_bundledModels;
    QString m_databasePath;
    QLabel* m_modelLabel = nullptr;
    QLabel* m_speedLabel = nullptr;
    QLabel* m_windowLabel = nullptr;
    QAction* m_openModelAction = nullptr;
    QAction* m_quitAction = nullptr;
    QAction* m_aboutAction = nullptr;
    QAction* m_pageActions[6] = {};
    quint64 m_openRequest = 0;
    quint64 m_loadJob = 0;
    QString m_loadingPath;    // the folder m_loadJob loads
    quint64 m_loadTicket = 0; // counts loads: only the latest one's end is reported
};

} // namespace baton::ui
