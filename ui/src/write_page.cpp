#include "write_page.h"

#include "adventure_bar.h"
#include "context_panel.h"
#include "generation_settings_panel.h"
#include "library_panel.h"
#include "loss_view.h"
#include "model_catalog.h"
#include "notice_bar.h"
#include "story_editor.h"
#include "story_importer.h"
#include "story_notes_panel.h"
#include "story_session.h"
#include "story_tree_panel.h"
#include "window_ruler.h"
#include "world_info_panel.h"
#include "write_actions.h"

#include <baton/engine/qt/model_jobs.h>
#include <baton/engine/windows.h>
#include <baton/storage/qt/storage_controller.h>

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QLabel>
#include <QMainWindow>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>
#include <QTextDocument>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

namespace baton::ui {

namespace {

QString noStoryHint() {
    return WritePage::tr("Choose a story in the library, or start one with New story (Ctrl+N).");
}

} // namespace

WritePage::WritePage(storage::StorageController& storage, engine::ModelJobs& engine,
                     QMainWindow& window)
    : QWidget(&window)
    , m_storage(storage)
    , m_engine(engine) {
    m_session = new StorySession(storage, engine, this);
    m_library = new LibraryPanel(storage, this);
    m_editor = new StoryEditor;
    m_settings = new GenerationSettingsPanel;
    m_tree = new StoryTreePanel(storage);
    m_notes = new StoryNotesPanel;
    m_importer = new StoryImporter(m_engine, this);
    m_worldInfo = new WorldInfoPanel(storage);
    m_context = new ContextPanel;
    m_adventure = new AdventureBar;
    m_adventure->hide();
    m_editTimer = new QTimer(this);
    m_editTimer->setSingleShot(true);
    m_editTimer->setInterval(1200); // an edit is saved after a pause in typing

    // The centre: a notice while no model is loaded, then the story.
    m_noModelBar = new NoticeBar(tr("No model is loaded: open a Hugging Face GPT-2 folder with "
                                    "File > Open model…"),
                                 tr("Open model…"));
    m_noModelBar->setObjectName(QStringLiteral("noModelBar"));
    connect(m_noModelBar, &NoticeBar::clicked, this, &WritePage::openModelRequested);

    auto* centre = new QWidget;
    auto* cl = new QVBoxLayout(centre);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->setSpacing(0);
    cl->addWidget(m_noModelBar);
    cl->addWidget(m_editor, 1);
    cl->addWidget(m_adventure);
    m_ruler = new WindowRuler;
    cl->addWidget(m_ruler);
    m_loss = new LossView(engine, *m_editor, *m_ruler, this);
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
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter);

    createDocks(window);
    createActions(window);
    m_library->setActions(m_actions.newStory, m_actions.rename, m_actions.remove,
                          m_actions.undoRemove);
    connectParts();
    connectDocks();
    m_editor->setEnabled(false);
    m_editor->setPlaceholderText(noStoryHint());
}

WritePage::~WritePage() {
    m_session->undoStack()->disconnect(this);
    m_session->disconnect(this);
    delete m_session;
}

void WritePage::createActions(QMainWindow& window) {
    m_actions = WriteActions::create(this, window);
    const WriteActions& a = m_actions;
    auto on = [this](QAction* action, auto slot) {
        connect(action, &QAction::triggered, this, slot);
    };
    on(a.newStory, [this] { newStory(false); });
    on(a.newAdventure, [this] { newStory(true); });
    on(a.importStory, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Import a story"), QString(),
                                         tr("Books (*.txt *.md *.markdown *.epub);;All files (*)"));
        if (!path.isEmpty())
            importStory(path);
    });
    on(a.exportStory, [this] {
        if (!m_session->isOpen())
            return;
        QString name = QString::fromStdString(m_session->story().title).simplified();
        name.replace(QRegularExpression(QStringLiteral("[/\\\\:*?\"<>|]")), QStringLiteral("-"));
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export the story"),
            QDir::home().filePath((name.isEmpty() ? tr("Story") : name) + QStringLiteral(".md")),
            tr("Markdown (*.md);;Plain text (*.txt)"));
        if (!path.isEmpty() && exportStory(path))
            Q_EMIT statusMessage(tr("Exported to %1").arg(QFileInfo(path).fileName()), 5000);
    });
    on(a.undo, &WritePage::storyUndo);
    on(a.redo, &WritePage::storyRedo);
    on(a.previousAlternative, [this] { switchAlternative(-1); });
    on(a.nextAlternative, [this] { switchAlternative(1); });
    on(a.undoTurn, [this] {
        saveDraft();
        m_session->undoTurn();
    });
    on(a.rename, [this] { m_library->renameSelected(); });
    on(a.remove, [this] { m_library->deleteSelected(); });
    on(a.undoRemove, [this] { m_library->undoDelete(); });
    on(a.duplicate, [this] { m_library->duplicateSelected(); });
    on(a.generate, &WritePage::generate);
    on(a.continueStory, &WritePage::continueStory);
    on(a.retry, &WritePage::retry);
    on(a.stop, [this] { m_session->stop(); });
    on(a.loss, [this](bool shown) { showLoss(shown); });
    connect(m_loss, &LossView::shownChanged, a.loss, &QAction::setChecked);
    connect(m_loss, &LossView::statusMessage, this, &WritePage::statusMessage);
    connect(m_loss, &LossView::failed, this, &WritePage::failed);
}

void WritePage::connectParts() {
    // Library -> session.
    connect(m_library, &LibraryPanel::storyActivated, this, [this](qint64 id) {
        if (id != m_session->storyId()) {
            saveDraft();
            flushDocks();
            m_session->open(id);
        }
    });
    connect(m_library, &LibraryPanel::storyRemoved, this, [this](qint64 id) {
        if (id == m_session->storyId())
            m_session->close();
    });
    connect(m_library, &LibraryPanel::storyRenamed, this, [this](qint64 id, const QString& t) {
        if (id == m_session->storyId())
            Q_EMIT titleChanged(t);
    });
    connect(m_session, &StorySession::retitled, this, [this](qint64, const QString& title) {
        m_library->refresh(); // after the rename: requests run in order
        Q_EMIT titleChanged(title);
    });
    connect(m_importer, &StoryImporter::imported, this,
            [this](const QString& title, const std::string& text, const QString& path) {
                storage::Story s;
                s.title = title.toStdString();
                if (m_engine.model())
                    s.modelPath = catalogPath(*m_engine.model()).toStdString();
                s.settingsJson = m_settings->toJson();
                m_library->createStory(s, text);
                Q_EMIT statusMessage(tr("Imported %1").arg(QFileInfo(path).fileName()), 5000);
            });
    connect(m_importer, &StoryImporter::failed, this, &WritePage::failed);
    connect(m_library, &LibraryPanel::selectionChanged, this, &WritePage::updateActions);
    connect(m_library, &LibraryPanel::listed, this, &WritePage::reopenLastStory);
    connect(m_library, &LibraryPanel::pendingDeleteChanged, this, &WritePage::updateActions);
    connect(m_library, &LibraryPanel::storageFailed, this,
            [this](const QString& what, const storage::StorageError& e) {
                Q_EMIT failed(what, describeStorageError(e));
            });

    // Session -> editor and status.
    connect(m_session, &StorySession::opened, this,
            [this](const storage::Story& story, const std::vector<storage::Passage>& path) {
                m_loss->drop(QString());
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
                if (story.id == m_caretStory) { // reopened at launch: the caret as it was
                    QTextCursor c = m_editor->textCursor();
                    c.setPosition(std::clamp(m_caret, 0, int(m_editor->storyText().size())));
                    m_editor->setTextCursor(c);
                    m_editor->ensureCursorVisible();
                    m_caretStory = 0;
                }
                rememberStory();
                Q_EMIT titleChanged(QString::fromStdString(story.title));
                // The story continues with the model it was written with.
                const QString storyModel = QString::fromStdString(story.modelPath);
                const QString current =
                    m_engine.model() ? catalogPath(*m_engine.model()) : QString();
                if (!storyModel.isEmpty() && storyModel != current &&
                    (QFileInfo::exists(storyModel + QStringLiteral("/config.json")) ||
                     QFileInfo::exists(storyModel + QStringLiteral("/adapter.json")))) {
                    if (m_modelLoading)
                        m_wantedModel = storyModel; // once the one loading is there
                    else
                        Q_EMIT storyModelWanted(storyModel);
                }
                Q_EMIT windowStatus(QString());
                Q_EMIT speedStatus(QString());
                updateActions();
            });
    connect(m_session, &StorySession::pathChanged, this,
            [this](const std::vector<storage::Passage>& path) {
                m_editor->showPath(path);
                m_tree->showStory(m_session->storyId(), path);
                updateActions();
            });
    connect(m_session->undoStack(), &QUndoStack::indexChanged, this, &WritePage::updateActions);
    connect(m_tree, &StoryTreePanel::switchRequested, this,
            [this](qint64 leaf, const QString& what) {
                saveDraft();
                m_session->switchTo(leaf, what);
            });
    connect(m_tree, &StoryTreePanel::refreshed, this, &WritePage::updateActions);
    connect(m_tree, &StoryTreePanel::storageFailed, this,
            [this](const QString& what, const storage::StorageError& e) {
                Q_EMIT failed(what, describeStorageError(e));
            });
    connect(
        m_notes, &StoryNotesPanel::notesChanged, this,
        [this](const QString& memory, const QString& note) { m_session->saveNotes(memory, note); });
    connect(m_adventure, &AdventureBar::sendRequested, this,
            [this](TurnKind kind, const QString& input) { sendTurn(int(kind), input); });
    connect(m_adventure, &AdventureBar::undoTurnRequested, this, [this] {
        saveDraft();
        m_session->undoTurn();
    });
    connect(m_adventure, &AdventureBar::retryTurnRequested, this, &WritePage::retry);
    connect(m_editTimer, &QTimer::timeout, this, &WritePage::saveDraft);
    connect(m_editor, &StoryEditor::savedTextEdited, this, [this] {
        m_editTimer->start();
        updateActions();
    });
    connect(m_editor, &StoryEditor::alternativesRequested, this, &WritePage::showTokenAlternatives);
    connect(m_editor, &StoryEditor::storyUndoRequested, this, &WritePage::storyUndo);
    connect(m_editor, &StoryEditor::storyRedoRequested, this, &WritePage::storyRedo);
    connect(m_session, &StorySession::closed, this, [this] {
        m_editTimer->stop();
        m_tree->clear();
        m_notes->setNotes(QString(), QString());
        m_adventure->hide();
        m_editor->clearStory();
        m_editor->setEnabled(false);
        m_editor->setPlaceholderText(noStoryHint());
        Q_EMIT titleChanged(QString());
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
    connect(m_session, &StorySession::windowProgress, this,
            [this](qint64 window, int fill, int size, double tps) {
                Q_EMIT windowStatus(windowCaption(window, fill, size));
                Q_EMIT speedStatus(tr("%1 tokens/s").arg(tps, 0, 'f', 1));
            });
    connect(m_session, &StorySession::generationFinished, this,
            [this](const QString& summary) { Q_EMIT statusMessage(summary, 10000); });
    connect(m_session, &StorySession::message, this,
            [this](const QString& text) { Q_EMIT statusMessage(text, 10000); });
    connect(m_session, &StorySession::failed, this, &WritePage::failed);
    connectSaving();
}

QString WritePage::storyText() const {
    return m_session->isOpen() ? m_editor->storyText() : QString();
}

std::optional<TopicsPanel::StoryText> WritePage::topicsStory() {
    if (!m_session->isOpen())
        return std::nullopt;
    saveDraft();
    const QString text = m_editor->storyText().left(m_editor->savedLength());
    if (text.isEmpty())
        return std::nullopt;
    // The latest generation: the model's text at the end of the story, after text of
    // the user's.
    int begin = int(text.size());
    while (begin > 0 && m_editor->authorAt(begin - 1) == storage::PassageAuthor::Model)
        --begin;
    TopicsPanel::StoryText s;
    s.text = text.toStdString();
    s.continuationByte =
        begin > 0 && begin < text.size() ? int64_t(text.left(begin).toUtf8().size()) : int64_t(-1);
    s.windows = m_settings->settings().windows;
    // The windows the ruler shows (the memory and the guidance counted), over the saved
    // text: the Topics page numbers them alike.
    for (int64_t b : m_windowStarts)
        if (b < int64_t(s.text.size()))
            s.windowStarts.push_back(b);
    return s;
}

void WritePage::setDatabasePath(const QString& path) {
    m_databaseOpen = false;
    m_session->setDatabasePath(path);
    updateActions();
}

void WritePage::onDatabaseOpened() {
    m_databaseOpen = true;
    m_library->refresh();
    updateActions();
}

void WritePage::onModelLoaded(const engine::ModelInfo& info) {
    flushDocks(); // the settings changed for the story, before they are shown again
    m_settings->setModel(info);
    if (m_session->isOpen())
        loadStorySettings(m_session->story());
    // A story opened while another model was loading (the one reopened at launch) asks
    // for its own now.
    const QString wanted = std::exchange(m_wantedModel, QString());
    if (m_session->isOpen() && !wanted.isEmpty() &&
        wanted == QString::fromStdString(m_session->story().modelPath) &&
        wanted != catalogPath(info))
        Q_EMIT storyModelWanted(wanted);
    updateActions();
}

void WritePage::setModelLoading(bool loading) {
    m_modelLoading = loading;
    updateActions();
}

void WritePage::setNoModelHint(const QString& text) {
    m_noModelBar->setText(text);
}

void WritePage::setStoryModel(const QString& folder) {
    if (!m_session->isOpen())
        return;
    storage::StoryChange change;
    change.modelPath = QDir(folder).absolutePath().toStdString();
    m_storage.updateStory(m_session->storyId(), change);
}

bool WritePage::busy() const {
    return m_session->busy();
}

void WritePage::reopenLastStory() {
    if (std::exchange(m_reopened, true) || m_session->isOpen())
        return;
    const QSettings settings;
    const qint64 id = settings.value(QStringLiteral("write/lastStory")).toLongLong();
    if (id <= 0)
        return;
    m_caretStory = id;
    m_caret = settings.value(QStringLiteral("write/caret")).toInt();
    m_library->select(id); // opens it, when it is still there
}

void WritePage::rememberStory() {
    QSettings settings;
    settings.setValue(QStringLiteral("write/lastStory"), m_session->storyId());
    settings.setValue(QStringLiteral("write/caret"), m_editor->textCursor().position());
}

bool WritePage::prepareToClose() {
    // Runs the event loop while `pending` holds, for at most 10 s.
    auto waitWhile = [](const std::function<bool()>& pending) {
        QElapsedTimer t;
        t.start();
        while (pending() && t.elapsed() < 10000)
            QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    };
    // Keep what is being generated: stop, and wait until the continuation has saved its
    // last chunk.
    if (m_session->busy()) {
        m_session->stop();
        waitWhile([this] { return m_session->busy(); });
    }
    saveDraft();
    flushDocks();
    m_library->commitPendingDelete();
    rememberStory();
    waitWhile([this] { return m_session->savingTyped(); });
    return !m_session->savingTyped() && m_editor->typedText().isEmpty() &&
           !m_session->hasLeftBehindText();
}

void WritePage::showLoss(bool on) {
    if (!on) {
        m_loss->drop(QString());
        return;
    }
    const QString text = m_editor->storyText();
    if (!m_session->isOpen() || !m_engine.model() || m_session->busy() || text.isEmpty()) {
        m_actions.loss->setChecked(false);
        Q_EMIT statusMessage(tr("Open a story with some text, with a model loaded and "
                                "nothing generating, to see its windows and loss."),
                             8000);
        return;
    }
    m_loss->measure(text, m_settings->settings().windows);
    updateActions();
}

void WritePage::updateActions() {
    const bool open = m_session->isOpen();
    const bool busy = m_session->busy();
    const bool model = m_engine.model().has_value() && !m_modelLoading;
    const bool typed = !m_editor->typedText().isEmpty();
    m_actions.newStory->setEnabled(m_databaseOpen && !busy);
    m_actions.newAdventure->setEnabled(m_databaseOpen && !busy);
    m_actions.importStory->setEnabled(m_databaseOpen && !busy);
    m_actions.exportStory->setEnabled(open && !busy);
    const bool editing = m_editor->hasPendingEdits();
    m_actions.undo->setEnabled(open && !busy && (m_session->canUndo() || editing));
    m_actions.redo->setEnabled(open && !busy && m_session->canRedo());
    m_actions.undo->setText(m_session->canUndo() && !editing
                                ? tr("&Undo %1").arg(m_session->undoStack()->undoText())
                                : tr("&Undo"));
    m_actions.redo->setText(m_session->canRedo()
                                ? tr("&Redo %1").arg(m_session->undoStack()->redoText())
                                : tr("&Redo"));
    const bool alternatives = open && !busy && m_tree->alternative(1).has_value();
    m_actions.previousAlternative->setEnabled(alternatives);
    m_actions.nextAlternative->setEnabled(alternatives);
    const bool adventure = open && m_session->story().mode == storage::StoryMode::Adventure;
    m_actions.undoTurn->setEnabled(adventure && !busy && m_session->canRetry());
    m_actions.undoTurn->setVisible(!open || adventure);
    m_adventure->setReady(open && model && !busy, m_session->canRetry(),
                          m_session->canRetry() && model);
    m_actions.rename->setEnabled(m_library->selectedStory() != 0);
    m_actions.duplicate->setEnabled(m_library->selectedStory() != 0 && !busy);
    m_actions.remove->setEnabled(m_library->selectedStory() != 0 && !busy);
    m_actions.undoRemove->setEnabled(m_library->hasPendingDelete());
    m_actions.generate->setEnabled(open && model && !busy);
    m_actions.continueStory->setEnabled(open && model && !busy && !typed &&
                                        m_editor->savedLength() > 0);
    m_actions.retry->setEnabled(open && model && !busy && !typed && m_session->canRetry());
    m_actions.loss->setEnabled(open && model && !busy);
    m_actions.stop->setEnabled(busy);
    m_library->setEnabled(!busy);
    // The memory is read at the start of a generation: it changes between them.
    m_notes->setEnabled(open && !busy);
    m_worldInfo->setEnabled(open && !busy);
    m_noModelBar->setVisible(!m_engine.model().has_value());
}

} // namespace baton::ui
