#include <baton/ui/main_window.h>

#include "adventure_bar.h"
#include "app_icon.h"
#include "compare_panel.h"
#include "error_text.h"
#include "finetune_panel.h"
#include "generation_settings_panel.h"
#include "library_panel.h"
#include "model_catalog.h"
#include "models_panel.h"
#include "story_editor.h"
#include "story_notes_panel.h"
#include "story_session.h"
#include "story_tree_panel.h"
#include "topics_panel.h"
#include "window_ruler.h"

#include <baton/engine/engine_controller.h>
#include <baton/engine/model.h>
#include <baton/engine/windows.h>
#include <baton/storage/storage_controller.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextDocument>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#ifndef BATON_VERSION
#define BATON_VERSION "dev"
#endif

namespace baton::ui {

namespace {

QString noStoryHint() {
    return MainWindow::tr("Choose a story in the library, or start one with New story (Ctrl+N).");
}

QString formatCount(int64_t n) {
    if (n >= 1000000000)
        return QStringLiteral("%1 B").arg(double(n) / 1e9, 0, 'f', 1);
    if (n >= 1000000)
        return QStringLiteral("%1 M").arg(double(n) / 1e6, 0, 'f', 1);
    if (n >= 1000)
        return QStringLiteral("%1 k").arg(double(n) / 1e3, 0, 'f', 1);
    return QString::number(n);
}

} // namespace

MainWindow::MainWindow(storage::StorageController& storage, engine::EngineController& engine,
                       engine::EngineController& lab, const QStringList& bundledModels,
                       QWidget* parent)
    : QMainWindow(parent)
    , m_storage(storage)
    , m_engine(engine)
    , m_lab(lab)
    , m_bundledModels(bundledModels) {
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("Baton"));
    setWindowIcon(appIcon());
    m_catalog = new ModelCatalog(storage, bundledModels, this);
    m_session = new StorySession(storage, engine, this);
    m_library = new LibraryPanel(storage, this);
    m_editor = new StoryEditor;
    m_settings = new GenerationSettingsPanel;
    m_tree = new StoryTreePanel(storage);
    m_notes = new StoryNotesPanel;
    m_adventure = new AdventureBar;
    m_adventure->hide();
    m_editTimer = new QTimer(this);
    m_editTimer->setSingleShot(true);
    m_editTimer->setInterval(1200); // an edit is saved after a pause in typing

    // The centre: a notice while no model is loaded, then the story.
    m_noModelBar = new QFrame;
    m_noModelBar->setObjectName(QStringLiteral("noModelBar"));
    m_noModelBar->setAutoFillBackground(true);
    QPalette np = m_noModelBar->palette();
    np.setColor(QPalette::Window, QColor(0xfd, 0xf3, 0xd8));
    np.setColor(QPalette::WindowText, QColor(0x3a, 0x30, 0x18));
    m_noModelBar->setPalette(np);
    m_noModelLabel = new QLabel(tr("No model is loaded: open a Hugging Face GPT-2 folder with "
                                   "File > Open model…"));
    m_noModelLabel->setObjectName(QStringLiteral("noModelLabel"));
    m_noModelLabel->setWordWrap(true);
    auto* openModel = new QPushButton(tr("Open model…"));
    openModel->setObjectName(QStringLiteral("noModelOpen"));
    connect(openModel, &QPushButton::clicked, this, &MainWindow::openModelDialog);
    auto* nl = new QHBoxLayout(m_noModelBar);
    nl->setContentsMargins(16, 8, 12, 8);
    nl->addWidget(m_noModelLabel, 1);
    nl->addWidget(openModel);

    auto* centre = new QWidget;
    auto* cl = new QVBoxLayout(centre);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->setSpacing(0);
    cl->addWidget(m_noModelBar);
    cl->addWidget(m_editor, 1);
    cl->addWidget(m_adventure);
    m_ruler = new WindowRuler;
    cl->addWidget(m_ruler);
    connect(m_ruler, &WindowRuler::windowClicked, this, [this](int startChar) {
        QTextCursor c(m_editor->document());
        c.setPosition(std::min(startChar, m_editor->document()->characterCount() - 1));
        m_editor->setTextCursor(c);
        m_editor->ensureCursorVisible();
    });

    auto* splitter = new QSplitter;
    splitter->setObjectName(QStringLiteral("mainSplitter"));
    splitter->addWidget(m_library);
    splitter->addWidget(centre);
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({250, 800});
    splitter->setChildrenCollapsible(false);
    m_library->setMinimumWidth(190);

    m_models = new ModelsPanel(*m_catalog, m_lab);
    m_compare = new ComparePanel(*m_catalog, m_lab, m_storage);
    m_compare->setStoryTextProvider(
        [this] { return m_session->isOpen() ? m_editor->storyText() : QString(); });
    m_fineTune = new FineTunePanel(*m_catalog, m_lab, m_storage);
    m_pages = new QTabWidget;
    m_pages->setObjectName(QStringLiteral("pages"));
    m_pages->setDocumentMode(true);
    m_pages->addTab(splitter, tr("Write"));
    m_pages->addTab(m_compare, tr("Compare overlaps"));
    m_pages->addTab(m_fineTune, tr("Fine-tune"));
    m_pages->addTab(m_models, tr("Models"));
    m_topics = new TopicsPanel(m_storage, m_engine, m_lab);
    m_topics->setStoryProvider([this]() -> std::optional<TopicsPanel::StoryText> {
        if (!m_session->isOpen())
            return std::nullopt;
        saveDraft();
        const QString text = m_editor->storyText().left(m_editor->savedLength());
        if (text.isEmpty())
            return std::nullopt;
        // The latest generation: the model's text at the end of the story, after text
        // of the user's.
        int begin = int(text.size());
        while (begin > 0 && m_editor->authorAt(begin - 1) == storage::PassageAuthor::Model)
            --begin;
        TopicsPanel::StoryText s;
        s.text = text.toStdString();
        s.continuationByte = begin > 0 && begin < text.size()
                                 ? int64_t(text.left(begin).toUtf8().size())
                                 : int64_t(-1);
        s.windows = m_settings->settings().windows;
        return s;
    });
    m_pages->addTab(m_topics, tr("Topics"));
    connect(m_topics, &TopicsPanel::failed, this, &MainWindow::showError);
    connect(m_fineTune, &FineTunePanel::topicsRequested, this, [this] {
        showPage(Page::Topics);
        m_topics->focusFit();
    });
    setCentralWidget(m_pages);
    connect(m_models, &ModelsPanel::useRequested, this, &MainWindow::useModelForWriting);
    connect(m_fineTune, &FineTunePanel::useRequested, this, &MainWindow::useModelForWriting);
    connect(m_models, &ModelsPanel::failed, this, &MainWindow::showError);
    connect(m_compare, &ComparePanel::failed, this, &MainWindow::showError);
    connect(m_fineTune, &FineTunePanel::failed, this, &MainWindow::showError);
    connect(m_catalog, &ModelCatalog::failed, this, &MainWindow::showStorageError);
    connect(m_catalog, &ModelCatalog::changed, this, [this] {
        if (!m_loadDefault)
            return;
        m_loadDefault = false;
        if (auto m = m_catalog->defaultModel())
            loadModel(m->path);
        else
            setNoModelHint(tr("No model: the bundled models are not installed. Import a Hugging "
                              "Face GPT-2 folder in Models."));
    });
    // The docks belong to the Write page: hidden on the others, back as they were.
    connect(m_pages, &QTabWidget::currentChanged, this, [this](int index) {
        for (QDockWidget* dock : {m_settingsDock, m_treeDock, m_notesDock}) {
            if (index == 0) {
                if (dock->property("visibleOnWrite").toBool())
                    dock->show();
            } else if (dock->isVisible() || !dock->property("visibleOnWrite").isValid()) {
                dock->setProperty("visibleOnWrite", dock->isVisible());
                dock->hide();
            }
        }
        updateActions();
    });

    m_settingsDock = new QDockWidget(tr("Generation"), this);
    m_settingsDock->setObjectName(QStringLiteral("generationDock"));
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_settings);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_settingsDock->setWidget(scroll);
    m_settingsDock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);
    m_settings->setMinimumWidth(240);
    addDockWidget(Qt::RightDockWidgetArea, m_settingsDock);
    m_treeDock = new QDockWidget(tr("Branches"), this);
    m_treeDock->setObjectName(QStringLiteral("branchesDock"));
    m_treeDock->setWidget(m_tree);
    m_treeDock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);
    addDockWidget(Qt::RightDockWidgetArea, m_treeDock);
    m_notesDock = new QDockWidget(tr("Memory and note"), this);
    m_notesDock->setObjectName(QStringLiteral("notesDock"));
    m_notesDock->setWidget(m_notes);
    m_notesDock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);
    addDockWidget(Qt::RightDockWidgetArea, m_notesDock);
    tabifyDockWidget(m_treeDock, m_notesDock);
    m_treeDock->raise();
    resizeDocks({m_settingsDock, m_treeDock}, {500, 280}, Qt::Vertical);

    m_modelLabel = new QLabel;
    m_modelLabel->setObjectName(QStringLiteral("modelLabel"));
    m_speedLabel = new QLabel;
    m_speedLabel->setObjectName(QStringLiteral("speedLabel"));
    m_windowLabel = new QLabel;
    m_windowLabel->setObjectName(QStringLiteral("windowLabel"));
    for (auto* l : {m_windowLabel, m_speedLabel, m_modelLabel}) {
        l->setContentsMargins(8, 0, 8, 0);
        statusBar()->addPermanentWidget(l);
    }

    createActions();
    createMenus();
    m_library->setActions(m_newAction, m_renameAction, m_deleteAction, m_undoDeleteAction);

    // Library -> session.
    connect(m_library, &LibraryPanel::storyActivated, this, [this](qint64 id) {
        if (id != m_session->storyId()) {
            saveDraft();
            m_notes->flush();
            m_session->open(id);
        }
    });
    connect(m_library, &LibraryPanel::storyRemoved, this, [this](qint64 id) {
        if (id == m_session->storyId())
            m_session->close();
    });
    connect(m_library, &LibraryPanel::storyRenamed, this, [this](qint64 id, const QString& t) {
        if (id == m_session->storyId())
            setWindowTitle(tr("%1 — Baton").arg(t));
    });
    connect(m_library, &LibraryPanel::selectionChanged, this, &MainWindow::updateActions);
    connect(m_library, &LibraryPanel::pendingDeleteChanged, this, &MainWindow::updateActions);
    connect(m_library, &LibraryPanel::storageFailed, this, &MainWindow::showStorageError);

    // Session -> editor and status.
    connect(m_session, &StorySession::opened, this,
            [this](const storage::Story& story, const std::vector<storage::Passage>& path) {
                dropLoss(QString());
                m_editTimer->stop();
                m_editor->setPassages(path);
                m_notes->setNotes(QString::fromStdString(story.memory),
                                  QString::fromStdString(story.authorsNote));
                m_tree->showStory(story.id, path);
                const bool adventure = story.mode == storage::StoryMode::Adventure;
                m_adventure->setVisible(adventure);
                m_editor->setEnabled(true);
                m_editor->setPlaceholderText(
                    adventure ? tr("Say what you do in the line below, or set the scene here "
                                   "and press Ctrl+Enter.")
                              : tr("Begin your story here, then press Ctrl+Enter to let the "
                                   "model continue it."));
                if (adventure)
                    m_adventure->focusInput();
                else
                    m_editor->setFocus();
                loadStorySettings(story);
                setWindowTitle(tr("%1 — Baton").arg(QString::fromStdString(story.title)));
                // The story continues with the model it was written with.
                const QString storyModel = QString::fromStdString(story.modelPath);
                const QString current =
                    m_engine.model() ? QString::fromStdString(m_engine.model()->path) : QString();
                if (!storyModel.isEmpty() && storyModel != current && m_loadJob == 0 &&
                    QFileInfo::exists(storyModel + QStringLiteral("/config.json"))) {
                    statusBar()->showMessage(tr("Switching to this story's model, %1")
                                                 .arg(QFileInfo(storyModel).fileName()));
                    loadModel(storyModel);
                }
                m_windowLabel->clear();
                m_speedLabel->clear();
                updateActions();
            });
    connect(m_session, &StorySession::pathChanged, this,
            [this](const std::vector<storage::Passage>& path) {
                m_editor->showPath(path);
                m_tree->showStory(m_session->storyId(), path);
                updateActions();
            });
    connect(m_session->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::updateActions);
    connect(m_tree, &StoryTreePanel::switchRequested, this,
            [this](qint64 leaf, const QString& what) {
                saveDraft();
                m_session->switchTo(leaf, what);
            });
    connect(m_tree, &StoryTreePanel::refreshed, this, &MainWindow::updateActions);
    connect(m_tree, &StoryTreePanel::storageFailed, this, &MainWindow::showStorageError);
    connect(
        m_notes, &StoryNotesPanel::notesChanged, this,
        [this](const QString& memory, const QString& note) { m_session->saveNotes(memory, note); });
    connect(m_adventure, &AdventureBar::sendRequested, this,
            [this](TurnKind kind, const QString& input) { sendTurn(int(kind), input); });
    connect(m_adventure, &AdventureBar::undoTurnRequested, this, [this] {
        saveDraft();
        m_session->undoTurn();
    });
    connect(m_adventure, &AdventureBar::retryTurnRequested, this, &MainWindow::retry);
    connect(m_editTimer, &QTimer::timeout, this, &MainWindow::saveDraft);
    connect(m_editor, &StoryEditor::savedTextEdited, this, [this] {
        m_editTimer->start();
        updateActions();
    });
    connect(m_editor, &StoryEditor::storyUndoRequested, this, &MainWindow::storyUndo);
    connect(m_editor, &StoryEditor::storyRedoRequested, this, &MainWindow::storyRedo);
    connect(m_session, &StorySession::closed, this, [this] {
        m_editTimer->stop();
        m_tree->clear();
        m_notes->setNotes(QString(), QString());
        m_adventure->hide();
        m_editor->clearStory();
        m_editor->setEnabled(false);
        m_editor->setPlaceholderText(noStoryHint());
        setWindowTitle(tr("Baton"));
        updateActions();
    });
    connect(m_session, &StorySession::phaseChanged, this, [this](StorySession::Phase phase) {
        m_editor->setReadOnly(phase != StorySession::Phase::Idle);
        if (phase == StorySession::Phase::Idle) {
            if (m_adventure->isVisible())
                m_adventure->focusInput();
            else
                m_editor->setFocus();
        }
        updateActions();
    });
    connect(m_session, &StorySession::truncated, m_editor, &StoryEditor::truncate);
    connect(m_session, &StorySession::streamed, this, [this](const QString& text) {
        m_editor->appendSaved(text, storage::PassageAuthor::Model);
    });
    connect(m_editor->document(), &QTextDocument::contentsChanged, this, [this] {
        if (!m_lossText.isNull() && m_editor->storyText() != m_lossText)
            dropLoss(tr("The text changed: Ctrl+L measures it again"));
    });
    connect(&m_engine, &engine::EngineController::tokenLosses, this,
            [this](engine::JobId job, const engine::TokenLosses& l) {
                onTokenLosses(job, l.byteEnd, l.nll, l.windows.window, l.windows.overlap,
                              l.withState && m_engine.model() && m_engine.model()->recurrence);
            });
    connect(m_session, &StorySession::windowProgress, this,
            [this](qint64 window, int fill, int size, double tps) {
                m_windowLabel->setText(tr("window %1 · %2/%3").arg(window + 1).arg(fill).arg(size));
                m_speedLabel->setText(tr("%1 tokens/s").arg(tps, 0, 'f', 1));
            });
    connect(m_session, &StorySession::generationFinished, this,
            [this](const QString& summary) { statusBar()->showMessage(summary, 10000); });
    connect(m_session, &StorySession::message, this,
            [this](const QString& text) { statusBar()->showMessage(text, 10000); });
    connect(m_session, &StorySession::failed, this, &MainWindow::showError);
    connect(m_editor, &StoryEditor::typedTextChanged, this, [this] {
        if (!m_editor->typedText().isEmpty())
            m_editTimer->start(); // autosave after a pause in typing
        updateActions();
    });

    // Storage: the database.
    connect(&m_storage, &storage::StorageController::opened, this, [this](quint64 request, int) {
        if (request != m_openRequest)
            return;
        m_databaseOpen = true;
        m_library->refresh();
        m_catalog->refresh();
        m_fineTune->refresh();
        m_topics->refresh();
        updateActions();
        Q_EMIT databaseOpened();
    });
    connect(&m_storage, &storage::StorageController::failed, this,
            [this](quint64 request, const storage::StorageError& error) {
                if (request != m_openRequest)
                    return;
                showStorageError(tr("The story database could not be opened"), error);
                // Writing still works with a model, without saving: load the bundled one.
                if (m_loadDefault && !m_catalog->loaded()) {
                    m_loadDefault = false;
                    const QStringList bundled = m_bundledModels;
                    if (!bundled.isEmpty())
                        loadModel(bundled.front());
                }
            });

    // Engine: the model.
    connect(&m_engine, &engine::EngineController::jobProgress, this,
            [this](engine::JobId job, double fraction, const QString& message) {
                if (job == m_loadJob)
                    statusBar()->showMessage(
                        tr("Loading the model… %1% %2").arg(int(fraction * 100)).arg(message));
            });
    connect(&m_engine, &engine::EngineController::modelLoaded, this,
            [this](engine::JobId, const engine::ModelInfo& info) {
                QSettings().setValue(QStringLiteral("model/path"),
                                     QString::fromStdString(info.path));
                m_settings->setModel(info);
                if (m_session->isOpen())
                    loadStorySettings(m_session->story());
                m_models->setActivePath(QString::fromStdString(info.path));
                updateModelLabel();
                statusBar()->showMessage(tr("Model loaded"), 5000);
                Q_EMIT modelReady();
            });
    connect(&m_engine, &engine::EngineController::jobFinished, this,
            [this](engine::JobId job, bool ok, const engine::Error& error) {
                if (job == m_lossJob && !ok) {
                    dropLoss(QString());
                    if (error.code != engine::ErrorCode::Cancelled)
                        showError(tr("The story could not be scored"), describeEngineError(error));
                    return;
                }
                if (job != m_loadJob)
                    return;
                m_loadJob = 0;
                updateActions();
                if (!ok) {
                    statusBar()->clearMessage();
                    showError(tr("The model could not be opened"), describeEngineError(error));
                }
            });

    m_editor->setEnabled(false);
    m_editor->setPlaceholderText(noStoryHint());
    updateModelLabel();
    updateActions();
    resize(1280, 820);
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions() {
    auto make = [this](const QString& text, const QString& name, const QKeySequence& key,
                       auto slot) {
        auto* a = new QAction(text, this);
        a->setObjectName(name);
        if (!key.isEmpty())
            a->setShortcut(key);
        connect(a, &QAction::triggered, this, slot);
        addAction(a);
        return a;
    };
    m_newAction = make(tr("&New story"), QStringLiteral("actionNewStory"), QKeySequence::New,
                       [this] { newStory(false); });
    m_newAdventureAction =
        make(tr("New &adventure"), QStringLiteral("actionNewAdventure"),
             QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N), [this] { newStory(true); });
    m_newAdventureAction->setToolTip(tr("A text adventure: you act and speak, the model tells "
                                        "what happens (Ctrl+Shift+N)"));
    m_undoAction =
        make(tr("&Undo"), QStringLiteral("actionUndo"), QKeySequence::Undo, &MainWindow::storyUndo);
    m_redoAction =
        make(tr("&Redo"), QStringLiteral("actionRedo"), QKeySequence::Redo, &MainWindow::storyRedo);
    m_prevAltAction = make(tr("&Previous alternative"), QStringLiteral("actionPreviousAlternative"),
                           QKeySequence(Qt::ALT | Qt::Key_Left), [this] { switchAlternative(-1); });
    m_nextAltAction = make(tr("&Next alternative"), QStringLiteral("actionNextAlternative"),
                           QKeySequence(Qt::ALT | Qt::Key_Right), [this] { switchAlternative(1); });
    m_undoTurnAction =
        make(tr("Undo &turn"), QStringLiteral("actionUndoTurn"), QKeySequence(), [this] {
            saveDraft();
            m_session->undoTurn();
        });
    m_openModelAction = make(tr("Open &model…"), QStringLiteral("actionOpenModel"),
                             QKeySequence::Open, &MainWindow::openModelDialog);
    m_quitAction =
        make(tr("&Quit"), QStringLiteral("actionQuit"), QKeySequence::Quit, &MainWindow::close);
    m_renameAction = make(tr("&Rename"), QStringLiteral("actionRenameStory"),
                          QKeySequence(Qt::Key_F2), [this] { m_library->renameSelected(); });
    m_deleteAction = make(tr("&Delete"), QStringLiteral("actionDeleteStory"), QKeySequence(),
                          [this] { m_library->deleteSelected(); });
    m_deleteAction->setShortcut(QKeySequence::Delete);
    m_deleteAction->setShortcutContext(Qt::WidgetShortcut); // on the list only
    m_renameAction->setShortcutContext(Qt::WidgetShortcut);
    m_undoDeleteAction = make(tr("&Undo delete"), QStringLiteral("actionUndoDelete"),
                              QKeySequence(), [this] { m_library->undoDelete(); });
    m_generateAction = make(tr("&Generate"), QStringLiteral("actionGenerate"),
                            QKeySequence(Qt::CTRL | Qt::Key_Return), &MainWindow::generate);
    m_generateAction->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    m_generateAction->setToolTip(tr("Save what you typed and let the model continue "
                                    "(Ctrl+Enter)"));
    m_continueAction =
        make(tr("&Continue"), QStringLiteral("actionContinue"),
             QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Return), &MainWindow::continueStory);
    m_continueAction->setToolTip(tr("Let the model write more (Ctrl+Shift+Enter)"));
    m_retryAction = make(tr("&Retry"), QStringLiteral("actionRetry"),
                         QKeySequence(Qt::CTRL | Qt::Key_R), &MainWindow::retry);
    m_retryAction->setToolTip(tr("Write a new alternative to the last generation (Ctrl+R); "
                                 "the old one is kept"));
    m_stopAction = make(tr("&Stop"), QStringLiteral("actionStop"), QKeySequence(Qt::Key_Escape),
                        [this] { m_session->stop(); });
    m_stopAction->setToolTip(tr("Stop generating; what was written is kept (Esc)"));
    m_aboutAction =
        make(tr("&About Baton"), QStringLiteral("actionAbout"), QKeySequence(), &MainWindow::about);
    m_lossAction = make(tr("Show &windows and loss"), QStringLiteral("actionShowLoss"),
                        QKeySequence(Qt::CTRL | Qt::Key_L), [this](bool on) { showLoss(on); });
    m_lossAction->setCheckable(true);
    m_lossAction->setToolTip(tr("Score the story in windows: draw the windows under the text and "
                                "colour each token by how surprised the model was (Ctrl+L)"));
    m_duplicateAction = make(tr("D&uplicate"), QStringLiteral("actionDuplicateStory"),
                             QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D),
                             [this] { m_library->duplicateSelected(); });
    m_duplicateAction->setToolTip(tr("Copy the story with all its branches (Ctrl+Shift+D)"));
    const char* pageNames[5] = {"actionPageWrite", "actionPageCompare", "actionPageFineTune",
                                "actionPageModels", "actionPageTopics"};
    const QString pageTitles[5] = {tr("&Write"), tr("&Compare overlaps"), tr("&Fine-tune"),
                                   tr("&Models"), tr("&Topics")};
    for (int i = 0; i < 5; ++i)
        m_pageActions[i] =
            make(pageTitles[i], QLatin1String(pageNames[i]),
                 QKeySequence(Qt::CTRL | (Qt::Key_1 + i)), [this, i] { showPage(Page(i)); });
}

void MainWindow::showLoss(bool on) {
    if (!on) {
        dropLoss(QString());
        return;
    }
    const QString text = m_editor->storyText();
    if (!m_session->isOpen() || !m_engine.model() || m_session->busy() || text.isEmpty()) {
        m_lossAction->setChecked(false);
        statusBar()->showMessage(tr("Open a story with some text, with a model loaded and "
                                    "nothing generating, to see its windows and loss."),
                                 8000);
        return;
    }
    engine::EvaluateRequest req;
    req.text = text.toStdString();
    req.settings = {m_settings->settings().windows};
    req.keepPerToken = true;
    m_lossText = text;
    m_lossJob = m_engine.evaluate(req);
    m_ruler->clear(tr("Scoring the story in windows…"));
    updateActions();
}

void MainWindow::dropLoss(const QString& why) {
    m_lossText = QString();
    if (m_lossJob)
        m_engine.cancel(m_lossJob);
    m_lossJob = 0;
    m_editor->clearLossRanges();
    m_ruler->clear(why.isEmpty() ? tr("Window ruler: Story > Show windows and loss (Ctrl+L)")
                                 : why);
    m_lossAction->setChecked(false);
}

void MainWindow::onTokenLosses(quint64 job, const std::vector<int64_t>& byteEnd,
                               const std::vector<float>& nll, int window, int overlap, bool state) {
    if (job != m_lossJob)
        return;
    m_lossJob = 0;
    // Byte offsets of the UTF-8 text -> character positions in the editor.
    const QString& text = m_lossText;
    std::vector<int> charAt; // charAt[b] = the character that byte b starts
    charAt.reserve(size_t(text.size()) * 2 + 1);
    for (int i = 0; i < text.size(); ++i) {
        const char32_t c = text.at(i).unicode();
        int bytes = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
        if (text.at(i).isHighSurrogate() && i + 1 < text.size()) {
            bytes = 4;
            charAt.insert(charAt.end(), size_t(bytes), i);
            ++i;
            continue;
        }
        charAt.insert(charAt.end(), size_t(bytes), i);
    }
    charAt.push_back(int(text.size()));
    auto charOf = [&](int64_t byte) {
        return charAt[size_t(std::clamp<int64_t>(byte, 0, int64_t(charAt.size()) - 1))];
    };
    std::vector<StoryEditor::LossRange> ranges;
    ranges.reserve(byteEnd.size());
    int64_t begin = 0;
    for (size_t i = 0; i < byteEnd.size(); ++i) {
        ranges.push_back({charOf(begin), charOf(byteEnd[i]), nll[i]});
        begin = byteEnd[i];
    }
    m_editor->setLossRanges(ranges);
    std::vector<RulerWindow> windows;
    const engine::WindowSettings ws{window, overlap};
    for (const engine::WindowSpan& span : engine::planWindows(int64_t(byteEnd.size()), ws)) {
        RulerWindow w;
        w.firstToken = span.start;
        w.lastToken = span.start + span.length - 1;
        w.overlap = span.index > 0 ? int(std::min<int64_t>(overlap, span.length)) : 0;
        double sum = 0;
        int n = 0;
        for (int64_t t = span.firstScored; t <= span.lastScored && t < int64_t(nll.size()); ++t)
            if (nll[size_t(t)] >= 0) {
                sum += nll[size_t(t)];
                ++n;
            }
        w.meanLoss = n ? sum / n : 0;
        w.startChar = span.start > 0 ? charOf(byteEnd[size_t(span.start - 1)]) : 0;
        windows.push_back(w);
    }
    m_ruler->setWindows(std::move(windows), int64_t(byteEnd.size()), state);
    double total = 0;
    int scored = 0;
    for (float v : nll)
        if (v >= 0) {
            total += v;
            ++scored;
        }
    statusBar()->showMessage(tr("%1 tokens in windows of %2 (overlap %3): perplexity %4")
                                 .arg(byteEnd.size())
                                 .arg(window)
                                 .arg(overlap)
                                 .arg(scored ? std::exp(total / scored) : 0.0, 0, 'f', 2),
                             15000);
}

void MainWindow::showPage(Page page) {
    m_pages->setCurrentIndex(int(page));
}

void MainWindow::useModelForWriting(const QString& folder) {
    if (m_session->busy()) {
        statusBar()->showMessage(tr("Stop the generation before changing the model."), 8000);
        return;
    }
    loadModel(folder);
    // The open story continues with it from now on.
    if (m_session->isOpen()) {
        storage::StoryChange change;
        change.modelPath = QDir(folder).absolutePath().toStdString();
        m_storage.updateStory(m_session->storyId(), change);
    }
    showPage(Page::Write);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_newAction);
    file->addAction(m_openModelAction);
    file->addSeparator();
    file->addAction(m_quitAction);
    file->insertAction(m_openModelAction, m_newAdventureAction);
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(m_undoAction);
    edit->addAction(m_redoAction);
    edit->addSeparator();
    edit->addAction(m_renameAction);
    edit->addAction(m_duplicateAction);
    edit->addAction(m_deleteAction);
    edit->addAction(m_undoDeleteAction);
    QMenu* story = menuBar()->addMenu(tr("&Story"));
    story->addAction(m_generateAction);
    story->addAction(m_continueAction);
    story->addAction(m_retryAction);
    story->addAction(m_stopAction);
    story->addSeparator();
    story->addAction(m_prevAltAction);
    story->addAction(m_nextAltAction);
    story->addAction(m_undoTurnAction);
    story->addSeparator();
    story->addAction(m_lossAction);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QAction* a : m_pageActions)
        view->addAction(a);
    view->addSeparator();
    view->addAction(m_settingsDock->toggleViewAction());
    view->addAction(m_treeDock->toggleViewAction());
    view->addAction(m_notesDock->toggleViewAction());
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(m_aboutAction);

    QToolBar* bar = addToolBar(tr("Story"));
    bar->setObjectName(QStringLiteral("storyToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->addAction(m_newAction);
    bar->addSeparator();
    bar->addAction(m_generateAction);
    bar->addAction(m_continueAction);
    bar->addAction(m_retryAction);
    bar->addAction(m_stopAction);
    bar->addSeparator();
    bar->addAction(m_undoAction);
    bar->addAction(m_redoAction);
}

void MainWindow::openDatabase(const QString& path) {
    m_databaseOpen = false;
    m_databasePath = path;
    m_session->setDatabasePath(path);
    // Fine-tuned models and their runs live beside the database.
    m_fineTune->setRunsFolder(QFileInfo(path).absolutePath() + QStringLiteral("/runs"));
    m_topics->setTopicsFolder(QFileInfo(path).absolutePath() + QStringLiteral("/topics"));
    m_openRequest = m_storage.open(path);
    updateActions();
}

void MainWindow::loadModel(const QString& folder) {
    m_loadJob = m_engine.loadModel(folder);
    statusBar()->showMessage(tr("Loading the model from %1…").arg(folder));
    updateActions();
}

void MainWindow::setNoModelHint(const QString& text) {
    m_noModelLabel->setText(text);
}

void MainWindow::openModelDialog() {
    const QString start =
        m_engine.model() ? QString::fromStdString(m_engine.model()->path) : QDir::homePath();
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open a Hugging Face GPT-2 model folder"), start);
    if (!dir.isEmpty())
        loadModel(dir);
}

void MainWindow::newStory(bool adventure) {
    if (!m_databaseOpen || m_session->busy())
        return;
    saveDraft();
    m_notes->flush();
    storage::Story s;
    s.title = (adventure ? tr("Untitled adventure") : tr("Untitled story")).toStdString();
    s.mode = adventure ? storage::StoryMode::Adventure : storage::StoryMode::Story;
    if (m_engine.model())
        s.modelPath = m_engine.model()->path;
    s.settingsJson = m_settings->toJson();
    m_library->createStory(s);
}

void MainWindow::loadStorySettings(const storage::Story& story) {
    auto parsed = story::parseSettings(story.settingsJson);
    if (!parsed) {
        // The story opens with the default settings; saving replaces the damaged ones.
        statusBar()->showMessage(tr("The story's generation settings could not be read (%1); "
                                    "the defaults are shown")
                                     .arg(QString::fromStdString(parsed.error().message)),
                                 10000);
        m_settings->load(story::defaultSettings());
        return;
    }
    m_settings->load(*parsed);
}

story::StorySettings MainWindow::generationSettings() const {
    story::StorySettings s = m_settings->settings();
    // An adventure's reply ends where the player's next action would begin.
    if (m_session->isOpen() && m_session->story().mode == storage::StoryMode::Adventure)
        s.sampling.stopStrings.push_back(adventureStopString());
    return s;
}

void MainWindow::commitEdits() {
    m_editTimer->stop();
    if (!m_editor->hasPendingEdits())
        return;
    const auto edits = m_editor->pendingEdits();
    if (m_session->isOpen())
        m_session->saveEdits(edits);
    m_editor->acceptEdits();
    if (!edits.empty())
        statusBar()->showMessage(tr("Edit saved; the model reads the story again from the "
                                    "edit on (Ctrl+Z undoes it)."),
                                 6000);
}

void MainWindow::saveDraft() {
    commitEdits();
    const QString typed = m_editor->typedText();
    if (typed.isEmpty() || !m_session->isOpen() || m_session->busy() || m_editor->isReadOnly())
        return;
    m_session->saveTyped(typed);
    m_editor->commitTypedText();
}

void MainWindow::storyUndo() {
    // The typing since the last save first (the editor's own undo), then the story's.
    if (m_editor->hasFocus() && m_editor->document()->isUndoAvailable() &&
        !m_editor->isReadOnly()) {
        m_editor->undo();
        return;
    }
    saveDraft();
    if (m_session->canUndo()) {
        statusBar()->showMessage(tr("Undo: %1").arg(m_session->undoStack()->undoText()), 5000);
        m_session->undo();
    }
}

void MainWindow::storyRedo() {
    if (m_editor->hasFocus() && m_editor->document()->isRedoAvailable() &&
        !m_editor->isReadOnly()) {
        m_editor->redo();
        return;
    }
    saveDraft();
    if (m_session->canRedo()) {
        statusBar()->showMessage(tr("Redo: %1").arg(m_session->undoStack()->redoText()), 5000);
        m_session->redo();
    }
}

void MainWindow::switchAlternative(int step) {
    if (!m_session->isOpen() || m_session->busy())
        return;
    const auto leaf = m_tree->alternative(step);
    if (!leaf)
        return;
    saveDraft();
    m_session->switchTo(*leaf, tr("Switch alternative"));
}

void MainWindow::sendTurn(int kind, const QString& input) {
    if (!m_generateAction->isEnabled())
        return;
    const QString framed = frameTurn(TurnKind(kind), input, m_editor->storyText().right(2));
    if (framed.isEmpty())
        return;
    m_editor->appendTyped(framed);
    m_adventure->clearInput();
    generate();
}

void MainWindow::generate() {
    if (!m_generateAction->isEnabled())
        return;
    commitEdits();
    m_notes->flush();
    const story::StorySettings s = generationSettings();
    m_session->saveSettings(m_settings->toJson());
    // The typed text becomes saved text only when the generation starts.
    if (m_session->generate(m_editor->typedText(), s))
        m_editor->commitTypedText();
}

void MainWindow::continueStory() {
    if (!m_continueAction->isEnabled())
        return;
    commitEdits();
    m_notes->flush();
    m_session->saveSettings(m_settings->toJson());
    m_session->generate(QString(), generationSettings());
}

void MainWindow::retry() {
    if (!m_retryAction->isEnabled())
        return;
    commitEdits();
    m_notes->flush();
    m_session->saveSettings(m_settings->toJson());
    m_session->retry(generationSettings());
}

void MainWindow::updateActions() {
    const bool open = m_session->isOpen();
    const bool busy = m_session->busy();
    const bool model = m_engine.model().has_value() && m_loadJob == 0;
    const bool typed = !m_editor->typedText().isEmpty();
    m_newAction->setEnabled(m_databaseOpen && !busy);
    m_newAdventureAction->setEnabled(m_databaseOpen && !busy);
    const bool editing = m_editor->hasPendingEdits();
    m_undoAction->setEnabled(open && !busy && (m_session->canUndo() || editing));
    m_redoAction->setEnabled(open && !busy && m_session->canRedo());
    m_undoAction->setText(m_session->canUndo() && !editing
                              ? tr("&Undo %1").arg(m_session->undoStack()->undoText())
                              : tr("&Undo"));
    m_redoAction->setText(m_session->canRedo()
                              ? tr("&Redo %1").arg(m_session->undoStack()->redoText())
                              : tr("&Redo"));
    const bool alternatives = open && !busy && m_tree->alternative(1).has_value();
    m_prevAltAction->setEnabled(alternatives);
    m_nextAltAction->setEnabled(alternatives);
    m_undoTurnAction->setEnabled(open && !busy && m_session->canRetry());
    m_adventure->setReady(open && model && !busy, m_session->canRetry(),
                          m_session->canRetry() && model);
    m_renameAction->setEnabled(m_library->selectedStory() != 0);
    m_duplicateAction->setEnabled(m_library->selectedStory() != 0 && !busy);
    m_deleteAction->setEnabled(m_library->selectedStory() != 0 && !busy);
    m_undoDeleteAction->setEnabled(m_library->hasPendingDelete());
    m_generateAction->setEnabled(open && model && !busy);
    m_continueAction->setEnabled(open && model && !busy && !typed && m_editor->savedLength() > 0);
    m_retryAction->setEnabled(open && model && !busy && !typed && m_session->canRetry());
    m_lossAction->setEnabled(open && model && !busy);
    m_stopAction->setEnabled(busy);
    m_library->setEnabled(!busy);
    // The memory is read at the start of a generation: it changes between them.
    m_notes->setEnabled(open && !busy);
    m_openModelAction->setEnabled(!busy && m_loadJob == 0);
    m_noModelBar->setVisible(!m_engine.model().has_value());
}

void MainWindow::updateModelLabel() {
    const auto& m = m_engine.model();
    if (!m) {
        m_modelLabel->setText(tr("No model"));
        m_modelLabel->setToolTip(tr("Open a model with File > Open model…"));
        updateActions();
        return;
    }
    const QString name = QFileInfo(QString::fromStdString(m->path)).fileName();
    m_modelLabel->setText(tr("%1 · %2 parameters%3")
                              .arg(name, formatCount(m->parameterCount),
                                   m->recurrence ? tr(" · recurrent") : QString()));
    m_modelLabel->setToolTip(tr("%1\n%2 layers, %3 wide, %4 heads, %5 positions; identity %6")
                                 .arg(QString::fromStdString(m->path))
                                 .arg(m->config.nLayer)
                                 .arg(m->config.nEmbd)
                                 .arg(m->config.nHead)
                                 .arg(m->config.nPositions)
                                 .arg(QString::fromStdString(m->identity)));
    updateActions();
}

void MainWindow::showError(const QString& what, const ErrorText& error) {
    // Not modal-blocking: the event loop (and the engine's and storage's answers)
    // keep running while it is shown.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Baton"), what, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setInformativeText(error.message);
    if (!error.detail.isEmpty())
        box->setDetailedText(error.detail);
    box->open();
    statusBar()->showMessage(what, 10000);
}

void MainWindow::showStorageError(const QString& what, const storage::StorageError& error) {
    showError(what, describeStorageError(error));
}

void MainWindow::about() {
    QMessageBox::about(
        this, tr("About Baton"),
        tr("<h3>Baton %1</h3><p>A studio for writing long interactive stories with a language "
           "model that carries a state from one window to the next.</p><p>Qt %2 (built with "
           "%3)<br>%4<br>SQLite %5, story database schema %6</p>")
            .arg(QStringLiteral(BATON_VERSION), QString::fromLatin1(qVersion()),
                 QStringLiteral(QT_VERSION_STR), QString::fromStdString(engine::runtimeVersions()),
                 QString::fromStdString(storage::StorageController::sqliteVersion()))
            .arg(storage::StorageController::schemaVersion()));
}

void MainWindow::closeEvent(QCloseEvent* event) {
    // Keep what is being generated: stop, and wait for the last chunk to be handed to
    // the storage (whose controller writes everything queued before it closes).
    if (m_session->busy()) {
        m_session->stop();
        QElapsedTimer t;
        t.start();
        while (m_session->busy() && t.elapsed() < 10000)
            QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    }
    saveDraft();
    m_notes->flush();
    m_library->commitPendingDelete();
    // The docks are saved as the Write page shows them (other pages hide them).
    m_pages->setCurrentIndex(int(Page::Write));
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

} // namespace baton::ui
