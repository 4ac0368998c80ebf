// The Write page's docks: generation settings, branches, memory and note, world info,
// and the context viewer, which is laid out again (on the engine thread, by the plan a
// continuation runs) whenever something it shows changes.
#include "write_page.h"

#include "context_panel.h"
#include "generation_settings_panel.h"
#include "story_editor.h"
#include "story_notes_panel.h"
#include "story_session.h"
#include "story_tree_panel.h"
#include "world_info_panel.h"

#include <baton/engine/engine_controller.h>

#include <QDockWidget>
#include <QMainWindow>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>

namespace baton::ui {

void WritePage::createDocks(QMainWindow& window) {
    auto dock = [&window](const QString& title, const QString& name, QWidget* widget) {
        auto* d = new QDockWidget(title, &window);
        d->setObjectName(name);
        d->setWidget(widget);
        d->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);
        window.addDockWidget(Qt::RightDockWidgetArea, d);
        return d;
    };
    // Panels with forms scroll up and down, never sideways: a dock is as wide as its
    // panel needs, and a short window squeezes a form instead of the context viewer.
    auto scrolling = [](QWidget* panel) {
        auto* scroll = new QScrollArea;
        scroll->setWidget(panel);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        scroll->setMinimumWidth(panel->minimumSizeHint().width() +
                                scroll->verticalScrollBar()->sizeHint().width());
        return scroll;
    };
    auto* scroll = scrolling(m_settings);
    // Above: the settings and what they make the model read; below: the story's tree,
    // memory and world info.
    m_settingsDock = dock(tr("Generation"), QStringLiteral("generationDock"), scroll);
    m_contextDock = dock(tr("Context"), QStringLiteral("contextDock"), m_context);
    m_treeDock = dock(tr("Branches"), QStringLiteral("branchesDock"), m_tree);
    m_notesDock = dock(tr("Memory"), QStringLiteral("notesDock"), scrolling(m_notes));
    m_worldInfoDock =
        dock(tr("World info"), QStringLiteral("worldInfoDock"), scrolling(m_worldInfo));
    window.tabifyDockWidget(m_settingsDock, m_contextDock);
    window.tabifyDockWidget(m_treeDock, m_notesDock);
    window.tabifyDockWidget(m_notesDock, m_worldInfoDock);
    m_settingsDock->raise();
    m_treeDock->raise();
    window.resizeDocks({m_settingsDock, m_treeDock}, {480, 300}, Qt::Vertical);
    window.resizeDocks({m_settingsDock}, {scroll->minimumWidth() + 24}, Qt::Horizontal);
}

void WritePage::flushNotes() {
    m_notes->flush();
    m_worldInfo->flush();
}

void WritePage::refreshContext() {
    if (m_contextDock->isVisible() && !m_contextDock->visibleRegion().isEmpty())
        m_contextTimer->start();
}

void WritePage::connectDocks() {
    m_contextTimer = new QTimer(this);
    m_contextTimer->setSingleShot(true);
    m_contextTimer->setInterval(400);
    connect(m_contextTimer, &QTimer::timeout, this, [this] {
        if (!m_session->isOpen())
            m_context->showMessage(tr("Open a story: this shows what the model reads when it "
                                      "continues it."));
        else if (!m_engine.model())
            m_context->showMessage(tr("Load a model: what the model reads depends on its "
                                      "tokenizer and windows."));
        else if (!m_session->busy())
            m_session->requestContext(generationSettings(), m_editor->typedText());
    });
    connect(m_session, &StorySession::contextReady, this, [this](const story::ContextView& v) {
        m_context->showView(v);
        m_notes->setMemoryCost(v.layout == story::MemoryLayout::EveryWindow, v.memoryTokens,
                               v.pinnedTokens, v.windows.window);
    });
    connect(m_session, &StorySession::contextFailed, this, [this](const QString& message) {
        m_context->showMessage(tr("What the model reads cannot be laid out: %1").arg(message));
    });
    connect(m_contextDock, &QDockWidget::visibilityChanged, this, [this](bool shown) {
        if (shown)
            refreshContext();
    });
    // What the context depends on.
    connect(m_session, &StorySession::opened, this, [this](const storage::Story& story) {
        m_worldInfo->setStory(story.id);
        refreshContext();
    });
    connect(m_session, &StorySession::closed, this, [this] {
        m_worldInfo->setStory(0);
        m_notes->setMemoryCost(true, 0, 0, 0);
        refreshContext();
    });
    connect(m_session, &StorySession::phaseChanged, this, [this](StorySession::Phase phase) {
        if (phase == StorySession::Phase::Idle)
            refreshContext();
    });
    connect(m_session, &StorySession::pathChanged, this, &WritePage::refreshContext);
    connect(m_notes, &StoryNotesPanel::notesChanged, this, &WritePage::refreshContext);
    connect(m_worldInfo, &WorldInfoPanel::loreChanged, this, &WritePage::refreshContext);
    connect(m_settings, &GenerationSettingsPanel::changed, this, &WritePage::refreshContext);
    connect(m_editor, &StoryEditor::typedTextChanged, this, &WritePage::refreshContext);
    connect(&m_engine, &engine::EngineController::modelLoaded, this, &WritePage::refreshContext);
    connect(m_worldInfo, &WorldInfoPanel::failed, this, &WritePage::failed);
}

} // namespace baton::ui
