// The Write page's story commands: new, import and export, undo and redo, the
// alternatives, the token alternatives, an adventure's turn, generate, continue and
// retry (write_page.cpp
// builds the page and connects its parts).
#include "write_page.h"

#include "adventure_bar.h"
#include "generation_settings_panel.h"
#include "library_panel.h"
#include "model_catalog.h"
#include "story_editor.h"
#include "story_importer.h"
#include "story_session.h"
#include "story_tree_panel.h"
#include "token_alternatives.h"
#include "write_actions.h"

#include <baton/story/adventure.h>
#include <baton/story/import.h>

#include <QAction>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextDocument>
#include <QUndoStack>

namespace baton::ui {

bool WritePage::exportStory(const QString& path) {
    if (!m_session->isOpen())
        return false;
    saveDraft();
    const QString suffix = QFileInfo(path).suffix().toLower();
    const auto format = suffix == QLatin1String("md") || suffix == QLatin1String("markdown")
                            ? story::ExportFormat::Markdown
                            : story::ExportFormat::Text;
    const std::string text =
        story::exportedText(m_session->story().title, m_editor->storyText().toStdString(), format);
    QSaveFile file(path); // the old file stays whole until the new one is written
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(text.data(), qint64(text.size())) != qint64(text.size()) || !file.commit()) {
        Q_EMIT failed(tr("The story could not be exported"),
                      {tr("%1 could not be written: %2").arg(path, file.errorString()), {}});
        return false;
    }
    return true;
}

void WritePage::importStory(const QString& path) {
    if (!m_databaseOpen || !m_importer->import(path))
        return;
    Q_EMIT statusMessage(tr("Reading %1…").arg(QFileInfo(path).fileName()), 0);
}

void WritePage::newStory(bool adventure) {
    if (!m_databaseOpen || m_session->busy())
        return;
    saveDraft();
    flushDocks();
    storage::Story s;
    s.title = (adventure ? tr("Untitled adventure") : tr("Untitled story")).toStdString();
    s.mode = adventure ? storage::StoryMode::Adventure : storage::StoryMode::Story;
    if (m_engine.model())
        s.modelPath = catalogPath(*m_engine.model()).toStdString();
    s.settingsJson = m_settings->toJson();
    if (adventure) { // a reply ends on a whole sentence, as in KoboldAI Lite's adventures
        auto settings = story::parseSettings(s.settingsJson);
        if (settings) {
            settings->trimSentences = true;
            s.settingsJson = story::settingsJson(*settings);
        }
    }
    m_library->createStory(s);
}

void WritePage::loadStorySettings(const storage::Story& story) {
    auto parsed = story::parseSettings(story.settingsJson);
    if (!parsed) {
        // The story opens with the default settings; saving replaces the damaged ones.
        Q_EMIT statusMessage(tr("The story's generation settings could not be read (%1); "
                                "the defaults are shown")
                                 .arg(QString::fromStdString(parsed.error().message)),
                             10000);
        m_settings->load(story::defaultSettings());
        return;
    }
    m_settings->load(*parsed);
}

void WritePage::storyUndo() {
    // The typing since the last save first (the editor's own undo), then the story's.
    if (m_editor->hasFocus() && m_editor->document()->isUndoAvailable() &&
        !m_editor->isReadOnly()) {
        m_editor->undo();
        return;
    }
    saveDraft();
    if (m_session->canUndo()) {
        Q_EMIT statusMessage(tr("Undo: %1").arg(m_session->undoStack()->undoText()), 5000);
        m_session->undo();
    }
}

void WritePage::storyRedo() {
    if (m_editor->hasFocus() && m_editor->document()->isRedoAvailable() &&
        !m_editor->isReadOnly()) {
        m_editor->redo();
        return;
    }
    saveDraft();
    if (m_session->canRedo()) {
        Q_EMIT statusMessage(tr("Redo: %1").arg(m_session->undoStack()->redoText()), 5000);
        m_session->redo();
    }
}

void WritePage::switchAlternative(int step) {
    if (!m_session->isOpen() || m_session->busy())
        return;
    const auto leaf = m_tree->alternative(step);
    if (!leaf)
        return;
    saveDraft();
    m_session->switchTo(*leaf, tr("switch to another alternative"));
}

void WritePage::sendTurn(int kind, const QString& input) {
    if (!m_actions.generate->isEnabled())
        return;
    const QString framed = QString::fromStdString(story::frameTurn(
        TurnKind(kind), input.toStdString(), m_editor->storyText().right(2).toStdString()));
    if (framed.isEmpty())
        return;
    m_editor->appendTyped(framed);
    m_adventure->clearInput();
    generate();
}

void WritePage::generate() {
    if (!m_actions.generate->isEnabled())
        return;
    commitEdits();
    flushDocks();
    const story::StorySettings s = m_settings->settings();
    m_session->saveSettings(m_settings->toJson());
    // The typed text becomes saved text only when the generation starts.
    if (m_session->generate(m_editor->typedText(), s))
        m_editor->commitTypedText();
}

void WritePage::continueStory() {
    if (!m_actions.continueStory->isEnabled())
        return;
    commitEdits();
    flushDocks();
    m_session->saveSettings(m_settings->toJson());
    m_session->generate(QString(), m_settings->settings());
}

void WritePage::retry() {
    if (!m_actions.retry->isEnabled())
        return;
    commitEdits();
    flushDocks();
    m_session->saveSettings(m_settings->toJson());
    m_session->retry(m_settings->settings());
}

void WritePage::showTokenAlternatives(qint64 passageId, int offset, const QPoint& globalPos) {
    m_session->loadChoices(
        passageId, this,
        [this, passageId, offset, globalPos](std::vector<story::TokenChoice> choices,
                                             const QString& problem) {
            if (!problem.isEmpty()) {
                Q_EMIT statusMessage(
                    tr("The token alternatives could not be read: %1").arg(problem), 10000);
                return;
            }
            const int token = tokenAtDisplayOffset(choices, offset);
            if (token < 0) {
                Q_EMIT statusMessage(tr("No alternatives were recorded for this text (it was "
                                        "generated by an older Baton, or edited since)."),
                                     10000);
                return;
            }
            // Branching is a generation: the same conditions as Retry.
            QString cannot;
            if (!m_engine.model().has_value() || m_modelLoading)
                cannot = tr("Load a model to branch here.");
            else if (m_session->busy())
                cannot = tr("Wait for the generation to finish to branch here.");
            else if (!m_editor->typedText().isEmpty())
                cannot = tr("Generate or clear the typed text to branch here.");
            else if (m_editor->hasPendingEdits())
                cannot = tr("Save your edits to branch here.");
            auto* menu = new TokenAlternativesMenu(choices[size_t(token)], cannot, this);
            connect(menu, &TokenAlternativesMenu::picked, this,
                    [this, passageId, token, choices](int alternative) {
                        flushDocks();
                        m_session->saveSettings(m_settings->toJson());
                        m_session->branchAt({passageId, token, alternative}, choices,
                                            m_settings->settings());
                    });
            menu->popup(globalPos);
        });
}

} // namespace baton::ui
