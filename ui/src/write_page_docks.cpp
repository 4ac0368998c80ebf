// The Write page's docks: generation settings, branches, memory and note, world info,
// and the context viewer. The context view is laid out again (on the engine thread, by
// the plan a continuation runs) whenever something it shows changes, and is the one
// source of which window is open and how full (the status bar, the Context dock and the
// window ruler) and of what the memory, the note and world info cost.
#include "write_page.h"

#include "context_panel.h"
#include "generation_settings_panel.h"
#include "panel_util.h"
#include "story_editor.h"
#include "story_notes_panel.h"
#include "story_session.h"
#include "story_tree_panel.h"
#include "window_ruler.h"
#include "world_info_panel.h"

#include <baton/engine/qt/model_jobs.h>

#include <QDockWidget>
#include <QMainWindow>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>

#include <algorithm>

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

void WritePage::flushDocks() {
    m_notes->flush();
    m_worldInfo->flush();
    if (m_settingsTimer->isActive()) {
        m_settingsTimer->stop();
        saveSettings();
    }
}

void WritePage::saveSettings() {
    if (m_session->storyId() == m_settingsStory)
        m_session->saveSettings(m_settings->toJson());
}

void WritePage::refreshContext() {
    m_contextTimer->start();
}

void WritePage::showContext(const story::ContextView& v) {
    m_context->showView(v);
    m_notes->setWindowCost(&v);
    m_worldInfo->setCosts(v.loreCosts, v.lore.budget);
    m_windowStarts = v.windowStarts;
    if (m_session->busy())
        return; // the generation reports its window as it streams
    Q_EMIT windowStatus(windowCaption(v.windowIndex, v.used, v.windows.window));
    // The ruler: where each window begins in the editor's text (saved and typed).
    const QString text = m_editor->storyText();
    const std::vector<int> charAt = charIndexOfBytes(text);
    std::vector<int> starts;
    for (int64_t b : v.windowStarts)
        starts.push_back(charAt[size_t(std::clamp<int64_t>(b, 0, int64_t(charAt.size()) - 1))]);
    const bool recurrent = m_engine.model() && m_engine.model()->recurrence;
    m_ruler->setStoryWindows(starts, int(text.size()), v.used, v.windows.window, recurrent);
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
            m_session->requestContext(m_settings->settings(), m_editor->typedText());
        if (!m_session->isOpen() || !m_engine.model()) {
            m_notes->setWindowCost(nullptr);
            m_ruler->clear(m_session->isOpen() ? tr("Load a model to see the story's windows.")
                                               : QString());
            Q_EMIT windowStatus(QString());
        }
    });
    // Every change of a generation setting is saved with the story, a moment after the
    // last one (a spin box held down saves once).
    m_settingsTimer = new QTimer(this);
    m_settingsTimer->setSingleShot(true);
    m_settingsTimer->setInterval(500);
    connect(m_settingsTimer, &QTimer::timeout, this, &WritePage::saveSettings);
    connect(m_settings, &GenerationSettingsPanel::edited, this, [this] {
        m_settingsStory = m_session->storyId();
        m_settingsTimer->start();
    });
    connect(m_session, &StorySession::contextReady, this, &WritePage::showContext);
    connect(m_session, &StorySession::contextFailed, this, [this](const QString& message) {
        m_context->showMessage(tr("What the model reads cannot be laid out: %1").arg(message));
    });
    connect(m_contextDock, &QDockWidget::visibilityChanged, this, [this](bool shown) {
        if (shown)
            refreshContext();
    });
    // What the context depends on.
    connect(m_session, &StorySession::opened, this, [this](const storage::Story& story) {
        m_windowStarts.clear();
        m_worldInfo->setStory(story.id);
        refreshContext();
    });
    connect(m_session, &StorySession::closed, this, [this] {
        m_windowStarts.clear();
        m_worldInfo->setStory(0);
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
    // Recall, from the Context dock: show an excerpt in the story, pin it, ban it.
    connect(m_context, &ContextPanel::recallShowRequested, this, [this](qint64 start, qint64 end) {
        const std::vector<int> charAt = charIndexOfBytes(m_editor->storyText());
        auto at = [&](qint64 b) {
            return charAt[size_t(std::clamp<qint64>(b, 0, qint64(charAt.size()) - 1))];
        };
        QTextCursor c = m_editor->textCursor();
        c.setPosition(at(start));
        c.setPosition(at(end), QTextCursor::KeepAnchor);
        m_editor->setTextCursor(c);
        m_editor->ensureCursorVisible();
        m_editor->setFocus();
    });
    connect(m_context, &ContextPanel::recallPinRequested, this, [this](const QString& excerpt) {
        const QString memory = m_notes->memory().trimmed();
        const QString next = memory.isEmpty() ? excerpt : memory + QLatin1Char('\n') + excerpt;
        m_notes->setNotes(next, m_notes->authorsNote());
        m_session->saveNotes(next, m_notes->authorsNote());
        refreshContext();
    });
    connect(m_context, &ContextPanel::recallBanRequested, m_settings,
            &GenerationSettingsPanel::banRecall);
    connect(m_editor, &StoryEditor::typedTextChanged, this, &WritePage::refreshContext);
    connect(&m_engine, &engine::ModelJobs::modelLoaded, this, &WritePage::refreshContext);
    connect(m_worldInfo, &WorldInfoPanel::failed, this, &WritePage::failed);
}

} // namespace baton::ui
