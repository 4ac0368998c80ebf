#include <baton/ui/main_window.h>

#include "app_icon.h"
#include "compare_panel.h"
#include "error_text.h"
#include "finetune_panel.h"
#include "lab_backend.h"
#include "model_catalog.h"
#include "models_panel.h"
#include "server_panel.h"
#include "story_session.h"
#include "topics_panel.h"
#include "write_page.h"

#include <baton/engine/model.h>
#include <baton/engine/qt/model_jobs.h>
#include <baton/storage/qt/storage_controller.h>

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#ifndef BATON_VERSION
#define BATON_VERSION "dev"
#endif

namespace baton::ui {

namespace {

// A page that scrolls when the window is smaller than it needs (the window's minimum
// size then does not depend on the largest page).
QWidget* scrolling(QWidget* page) {
    auto* scroll = new QScrollArea;
    scroll->setObjectName(page->objectName() + QStringLiteral("Scroll"));
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
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

MainWindow::MainWindow(storage::StorageController& storage, engine::ModelJobs& engine,
                       engine::ModelJobs& lab, const QStringList& bundledModels, QWidget* parent)
    : QMainWindow(parent)
    , m_storage(storage)
    , m_engine(engine)
    , m_lab(lab)
    , m_bundledModels(bundledModels) {
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("Baton"));
    setWindowIcon(appIcon());
    m_catalog = new ModelCatalog(storage, bundledModels, this);
    m_write = new WritePage(storage, engine, *this);
    m_models = new ModelsPanel(*m_catalog, m_lab);
    if (const auto weights = engine::parseWeightFormat(
            QSettings().value(QStringLiteral("model/weights")).toString().toStdString()))
        m_models->setWeights(*weights);
    m_labBackend = new FacadeLabBackend(m_lab, m_engine, m_storage, this);
    m_compare = new ComparePanel(*m_catalog, *m_labBackend);
    m_compare->setStoryTextProvider([this] { return m_write->storyText(); });
    m_fineTune = new FineTunePanel(*m_catalog, *m_labBackend);
    m_pages = new QTabWidget;
    m_pages->setObjectName(QStringLiteral("pages"));
    m_pages->setDocumentMode(true);
    m_pages->addTab(m_write, tr("Write"));
    m_pages->addTab(scrolling(m_compare), tr("Compare overlaps"));
    m_pages->addTab(scrolling(m_fineTune), tr("Fine-tune"));
    m_pages->addTab(scrolling(m_models), tr("Models"));
    m_topics = new TopicsPanel(m_storage, m_engine, m_lab);
    m_topics->setStoryProvider([this] { return m_write->topicsStory(); });
    m_pages->addTab(scrolling(m_topics), tr("Topics"));
    m_server = new ServerPanel(m_engine);
    m_pages->addTab(scrolling(m_server), tr("Server"));
    setCentralWidget(m_pages);
    connect(m_topics, &TopicsPanel::failed, this, &MainWindow::showError);
    connect(m_fineTune, &FineTunePanel::topicsRequested, this, [this] {
        showPage(Page::Topics);
        m_topics->focusFit();
    });
    connect(m_models, &ModelsPanel::useRequested, this, &MainWindow::useModelForWriting);
    connect(m_fineTune, &FineTunePanel::useRequested, this, &MainWindow::useModelForWriting);
    connect(m_models, &ModelsPanel::addRecurrenceRequested, this, [this](const QString& base) {
        showPage(Page::FineTune);
        m_fineTune->prepareRecurrence(base);
    });
    connect(m_models, &ModelsPanel::failed, this, &MainWindow::showError);
    connect(m_models, &ModelsPanel::weightsChanged, this, [this](engine::WeightFormat weights) {
        QSettings().setValue(QStringLiteral("model/weights"),
                             QString::fromLatin1(engine::weightFormatName(weights)));
        applyWeights();
    });
    connect(m_compare, &ComparePanel::failed, this, &MainWindow::showError);
    connect(m_fineTune, &FineTunePanel::failed, this, &MainWindow::showError);
    connect(m_catalog, &ModelCatalog::failed, this,
            [this](const QString& what, const storage::StorageError& error) {
                showError(what, describeStorageError(error));
            });
    connect(m_catalog, &ModelCatalog::changed, this, [this] {
        if (!m_loadDefault)
            return;
        m_loadDefault = false;
        if (m_loadJob || m_engine.model())
            return; // the story reopened at launch asked for its own
        if (auto m = m_catalog->defaultModel())
            loadModel(m->path);
        else
            setNoModelHint(tr("No model: the bundled models are not installed. Import a Hugging "
                              "Face GPT-2 folder in Models."));
    });
    // The docks belong to the Write page: hidden on the others, back as they were.
    connect(m_pages, &QTabWidget::currentChanged, this, [this](int index) {
        for (QDockWidget* dock : m_write->docks()) {
            if (index == 0) {
                if (dock->property("visibleOnWrite").toBool())
                    dock->show();
            } else if (dock->isVisible() || !dock->property("visibleOnWrite").isValid()) {
                dock->setProperty("visibleOnWrite", dock->isVisible());
                dock->hide();
            }
        }
        m_write->updateActions();
    });

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

    // The Write page reports; the window shows.
    connect(m_write, &WritePage::statusMessage, this,
            [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });
    connect(m_write, &WritePage::windowStatus, m_windowLabel, &QLabel::setText);
    connect(m_write, &WritePage::speedStatus, m_speedLabel, &QLabel::setText);
    connect(m_write, &WritePage::titleChanged, this, [this](const QString& title) {
        setWindowTitle(title.isEmpty() ? tr("Baton") : tr("%1 — Baton").arg(title));
    });
    connect(m_write, &WritePage::failed, this, &MainWindow::showError);
    connect(m_write, &WritePage::openModelRequested, this, &MainWindow::openModelDialog);
    connect(m_write, &WritePage::storyModelWanted, this, [this](const QString& folder) {
        statusBar()->showMessage(
            tr("Switching to this story's model, %1").arg(QFileInfo(folder).fileName()));
        loadModel(folder);
    });

    // Storage: the database (an older one is indexed for recall as it opens).
    connect(
        &m_storage, &storage::StorageController::indexing, this,
        [this](quint64 request, qint64 done, qint64 total) {
            if (request == m_openRequest)
                statusBar()->showMessage(
                    tr("Indexing the stories for recall: %1 of %2 passages").arg(done).arg(total),
                    done < total ? 0 : 3000);
        });
    connect(&m_storage, &storage::StorageController::opened, this, [this](quint64 request, int) {
        if (request != m_openRequest)
            return;
        m_write->onDatabaseOpened();
        m_catalog->refresh();
        m_fineTune->refresh();
        m_topics->refresh();
        Q_EMIT databaseOpened();
    });
    connect(&m_storage, &storage::StorageController::failed, this,
            [this](quint64 request, const storage::StorageError& error) {
                if (request != m_openRequest)
                    return;
                showError(tr("The story database could not be opened"),
                          describeStorageError(error));
                // Writing still works with a model, without saving: load the bundled one.
                if (m_loadDefault && !m_catalog->loaded()) {
                    m_loadDefault = false;
                    const QStringList bundled = m_bundledModels;
                    if (!bundled.isEmpty())
                        loadModel(bundled.front());
                }
            });

    // Engine: the model (whoever loaded it).
    connect(&m_engine, &engine::ModelJobs::modelLoaded, this,
            [this](const engine::ModelInfo& info) {
                m_write->onModelLoaded(info);
                m_models->setActivePath(catalogPath(info));
                updateModelLabel();
                statusBar()->showMessage(tr("Model loaded"), 5000);
                Q_EMIT modelReady();
            });
    updateModelLabel();
    // 1280 x 820, or less to open inside a smaller screen (main() restores the size the
    // writer left it at, which Qt keeps on a screen too).
    const QRect screen = this->screen() ? this->screen()->availableGeometry() : QRect();
    QSize size(1280, 820);
    if (screen.isValid())
        size = size.boundedTo(screen.size() * 0.94);
    resize(size);
    if (screen.isValid())
        move(screen.center() - rect().center());
}

MainWindow::~MainWindow() = default;

LibraryPanel* MainWindow::library() const {
    return m_write->library();
}
StoryEditor* MainWindow::editor() const {
    return m_write->editor();
}
StorySession* MainWindow::session() const {
    return m_write->session();
}
GenerationSettingsPanel* MainWindow::settingsPanel() const {
    return m_write->settingsPanel();
}
WindowRuler* MainWindow::ruler() const {
    return m_write->ruler();
}
StoryTreePanel* MainWindow::storyTree() const {
    return m_write->storyTree();
}
StoryNotesPanel* MainWindow::notesPanel() const {
    return m_write->notesPanel();
}
AdventureBar* MainWindow::adventureBar() const {
    return m_write->adventureBar();
}

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
    m_openModelAction = make(tr("Open &model…"), QStringLiteral("actionOpenModel"),
                             QKeySequence::Open, &MainWindow::openModelDialog);
    m_quitAction =
        make(tr("&Quit"), QStringLiteral("actionQuit"), QKeySequence::Quit, &MainWindow::close);
    m_aboutAction =
        make(tr("&About Baton"), QStringLiteral("actionAbout"), QKeySequence(), &MainWindow::about);
    const char* pageNames[6] = {"actionPageWrite",  "actionPageCompare", "actionPageFineTune",
                                "actionPageModels", "actionPageTopics",  "actionPageServer"};
    const QString pageTitles[6] = {tr("&Write"),  tr("&Compare overlaps"), tr("&Fine-tune"),
                                   tr("&Models"), tr("&Topics"),           tr("&Server")};
    for (int i = 0; i < 6; ++i)
        m_pageActions[i] =
            make(pageTitles[i], QLatin1String(pageNames[i]),
                 QKeySequence(Qt::CTRL | (Qt::Key_1 + i)), [this, i] { showPage(Page(i)); });
}

void MainWindow::showPage(Page page) {
    m_pages->setCurrentIndex(int(page));
}

void MainWindow::useModelForWriting(const QString& folder) {
    if (m_write->busy()) {
        statusBar()->showMessage(tr("Stop the generation before changing the model."), 8000);
        return;
    }
    loadModel(folder);
    m_write->setStoryModel(folder);
    showPage(Page::Write);
}

void MainWindow::createMenus() {
    const WriteActions& w = m_write->actions();
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(w.newStory);
    file->addAction(w.newAdventure);
    file->addAction(w.importStory);
    file->addAction(w.exportStory);
    file->addAction(m_openModelAction);
    file->addSeparator();
    file->addAction(m_quitAction);
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(w.undo);
    edit->addAction(w.redo);
    edit->addSeparator();
    edit->addAction(w.rename);
    edit->addAction(w.duplicate);
    edit->addAction(w.remove);
    edit->addAction(w.undoRemove);
    QMenu* story = menuBar()->addMenu(tr("&Story"));
    story->addAction(w.generate);
    story->addAction(w.continueStory);
    story->addAction(w.retry);
    story->addAction(w.stop);
    story->addSeparator();
    story->addAction(w.previousAlternative);
    story->addAction(w.nextAlternative);
    story->addAction(w.undoTurn);
    story->addSeparator();
    story->addAction(w.loss);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QAction* a : m_pageActions)
        view->addAction(a);
    view->addSeparator();
    for (QDockWidget* dock : m_write->docks())
        view->addAction(dock->toggleViewAction());
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(m_aboutAction);

    QToolBar* bar = addToolBar(tr("Story"));
    bar->setObjectName(QStringLiteral("storyToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->addAction(w.newStory);
    bar->addSeparator();
    bar->addAction(w.generate);
    bar->addAction(w.continueStory);
    bar->addAction(w.retry);
    bar->addAction(w.stop);
    bar->addSeparator();
    bar->addAction(w.undo);
    bar->addAction(w.redo);
}

void MainWindow::openDatabase(const QString& path) {
    m_databasePath = path;
    m_write->setDatabasePath(path);
    m_server->setDatabasePath(path);
    // Fine-tuned models and their runs live beside the database.
    m_fineTune->setRunsFolder(QFileInfo(path).absolutePath() + QStringLiteral("/runs"));
    m_topics->setTopicsFolder(QFileInfo(path).absolutePath() + QStringLiteral("/topics"));
    m_openRequest = m_storage.open(path);
}

void MainWindow::loadModel(const QString& path) {
    if (m_loadJob && path == m_loadingPath)
        return; // already on its way
    // An adapter loads onto its base.
    const ModelSource source = m_catalog->source(path);
    if (source.folder.isEmpty()) {
        showError(tr("The model could not be opened"),
                  {tr("%1 is a recurrence adapter that is not in the model list, so its base "
                      "model is not known. Import it in Models to choose its base.")
                       .arg(path),
                   {}});
        return;
    }
    m_loadingPath = path;
    const quint64 ticket = ++m_loadTicket;
    // Only the latest load's end counts (an earlier one may still finish first).
    auto finished = [this, ticket](const std::optional<engine::Error>& error) {
        if (ticket != m_loadTicket)
            return;
        m_loadJob = 0;
        m_write->setModelLoading(false);
        m_openModelAction->setEnabled(true);
        if (error) {
            statusBar()->clearMessage();
            showError(tr("The model could not be opened"), describeEngineError(*error));
            return;
        }
        applyWeights(); // the choice may have changed while it loaded
    };
    engine::LoadOptions weights;
    weights.weights = m_models->weights();
    m_loadJob = m_engine.load(
        this, source.folder, source.options(weights),
        [finished](const engine::ModelInfo&) { finished(std::nullopt); },
        [finished](const engine::Error& e) { finished(e); },
        [this, ticket](double fraction, const QString& message) {
            if (ticket == m_loadTicket)
                statusBar()->showMessage(
                    tr("Loading the model… %1% %2").arg(int(fraction * 100)).arg(message));
        });
    m_write->setModelLoading(true);
    m_openModelAction->setEnabled(false);
    statusBar()->showMessage(tr("Loading the model from %1…").arg(path));
}

void MainWindow::applyWeights() {
    const auto& m = m_engine.model();
    if (!m || m->weights == m_models->weights() || m_loadJob)
        return;
    if (m_write->busy()) {
        statusBar()->showMessage(
            tr("The new weights apply when the model is next loaded (a generation is running)."),
            8000);
        return;
    }
    loadModel(catalogPath(*m));
}

void MainWindow::setNoModelHint(const QString& text) {
    m_write->setNoModelHint(text);
}

void MainWindow::openModelDialog() {
    if (m_write->busy() || m_loadJob)
        return;
    const QString start =
        m_engine.model() ? QString::fromStdString(m_engine.model()->path) : QDir::homePath();
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open a Hugging Face GPT-2 model folder"), start);
    if (!dir.isEmpty())
        loadModel(dir);
}

void MainWindow::updateModelLabel() {
    const auto& m = m_engine.model();
    if (!m) {
        m_modelLabel->setText(tr("No model"));
        m_modelLabel->setToolTip(tr("Open a model with File > Open model…"));
        m_write->updateActions();
        return;
    }
    const auto entry = m_catalog->byPath(catalogPath(*m));
    const QString name = modelName(*m, entry ? entry->name : QString());
    m_modelLabel->setText(
        tr("%1 · %2 parameters%3%4")
            .arg(name, formatCount(m->parameterCount),
                 m->recurrence ? tr(" · recurrent") : QString(),
                 m->weights == engine::WeightFormat::F32
                     ? QString()
                     : QStringLiteral(" · ") +
                           QString::fromLatin1(engine::weightFormatName(m->weights))));
    m_modelLabel->setToolTip(
        tr("%1\n%2 layers, %3 wide, %4 heads, %5 positions; identity %6")
            .arg(QString::fromStdString(m->path) +
                 (m->adapter.empty() ? QString()
                                     : tr("\nwith the recurrence adapter %1")
                                           .arg(QString::fromStdString(m->adapter))))
            .arg(m->config.nLayer)
            .arg(m->config.nEmbd)
            .arg(m->config.nHead)
            .arg(m->config.nPositions)
            .arg(QString::fromStdString(m->identity)) +
        (m->recurrence
             ? tr("\nRecurrent: %1")
                   .arg(QString::fromStdString(engine::describeRecurrence(*m->recurrence)))
             : QString()) +
        (m->mappedBytes > 0 ? tr("\n%1 MB of the weights are the model file's own pages "
                                 "(mapped, shared, no copy)")
                                  .arg(m->mappedBytes / 1000000)
                            : QString()) +
        (m->keptBytes > 0 ? tr("\n%1 MB of the weights were converted by an earlier load and "
                               "kept on disk (mapped)")
                                .arg(m->keptBytes / 1000000)
                          : QString()));
    m_write->updateActions();
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

bool MainWindow::confirmLosingText() {
    QMessageBox box(QMessageBox::Warning, tr("Baton"),
                    tr("Some of the text you typed could not be saved."), QMessageBox::NoButton,
                    this);
    box.setObjectName(QStringLiteral("unsavedTextDialog"));
    box.setInformativeText(tr("The disk may be full, or the story file cannot be written. "
                              "While Baton stays open it keeps the text and tries again; if "
                              "you close it now, that text is lost."));
    QPushButton* keep = box.addButton(tr("Keep Baton Open"), QMessageBox::RejectRole);
    QPushButton* lose = box.addButton(tr("Close and Lose the Text"), QMessageBox::DestructiveRole);
    box.setDefaultButton(keep);
    box.setEscapeButton(keep);
    box.exec();
    return box.clickedButton() == lose;
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
    if (!m_write->prepareToClose() && !confirmLosingText()) {
        event->ignore();
        return;
    }
    // The docks are saved as the Write page shows them (other pages hide them).
    m_pages->setCurrentIndex(int(Page::Write));
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

} // namespace baton::ui
