#include "story_notes_panel.h"

#include "panel_util.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QTimer>
#include <QVBoxLayout>

namespace baton::ui {

StoryNotesPanel::StoryNotesPanel(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("storyNotesPanel"));
    m_memory = new QPlainTextEdit;
    m_memory->setObjectName(QStringLiteral("memoryEdit"));
    m_memory->setPlaceholderText(
        tr("Who is who, where the story takes place, what must not be forgotten…"));
    m_memory->setTabChangesFocus(true);
    m_note = new QPlainTextEdit;
    m_note->setObjectName(QStringLiteral("authorsNoteEdit"));
    m_note->setPlaceholderText(tr("The tone, or what should happen next…"));
    m_note->setTabChangesFocus(true);
    m_note->setMaximumHeight(110);
    auto hint = [](const QString& text) {
        auto* l = new QLabel(text);
        l->setWordWrap(true);
        l->setForegroundRole(QPalette::PlaceholderText);
        return l;
    };
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(10, 8, 10, 8);
    m_cost = new QLabel;
    m_cost->setObjectName(QStringLiteral("memoryCost"));
    m_cost->setWordWrap(true);
    m_cost->setTextFormat(Qt::RichText);
    l->addWidget(m_cost);
    l->addSpacing(4);
    l->addWidget(sectionTitle(tr("Memory")));
    l->addWidget(hint(tr("Read at the start of every window (Generation > Context: once, "
                         "instead). Changing it makes the next generation read the whole "
                         "story again.")));
    l->addWidget(m_memory, 2);
    l->addSpacing(6);
    l->addWidget(sectionTitle(tr("Author's note")));
    l->addWidget(hint(tr("Placed whole just before the model writes, in every window; never "
                         "part of the story's text.")));
    l->addWidget(m_note, 1);

    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    m_timer->setInterval(700);
    connect(m_timer, &QTimer::timeout, this,
            [this] { Q_EMIT notesChanged(memory(), authorsNote()); });
    for (auto* e : {m_memory, m_note})
        connect(e, &QPlainTextEdit::textChanged, this, [this] {
            if (!m_loading)
                m_timer->start();
        });
}

void StoryNotesPanel::setNotes(const QString& memory, const QString& authorsNote) {
    m_timer->stop();
    m_loading = true;
    m_memory->setPlainText(memory);
    m_note->setPlainText(authorsNote);
    m_loading = false;
}

void StoryNotesPanel::setWindowCost(const story::ContextView* view) {
    if (!view || view->windows.window <= 0) {
        m_cost->clear();
        m_cost->hide();
        return;
    }
    const story::ContextView& v = *view;
    const int T = v.windows.window;
    QString memory;
    if (v.memoryTokens == 0)
        memory = tr("no memory");
    else if (v.layout == story::MemoryLayout::EveryWindow)
        memory = tr("memory %1").arg(v.pinnedTokens);
    else
        memory = tr("memory read once (%1)").arg(v.memoryTokens);
    const QString note = v.noteTokens > 0 ? tr("note %1").arg(v.noteTokens) : tr("no note");
    // What the next window really leaves the story (world info as placed now, not its
    // whole budget): a warning only when the story is squeezed.
    const int story = T - v.pinnedTokens - v.noteTokens - v.lore.tokens;
    QString text = tr("<b>Every window of %1 tokens:</b> %2 · %3 · world info %4 (up to %5) "
                      "· the story %6.")
                       .arg(T)
                       .arg(memory, note)
                       .arg(v.lore.tokens)
                       .arg(v.lore.budget)
                       .arg(story);
    if (story < T / 4)
        text += tr(" <b>Little room is left for the story:</b> shorten the memory or the note, "
                   "lower the world-info budget, or use a larger window (Generation > Windows).");
    m_cost->setText(text);
    m_cost->show();
}

QString StoryNotesPanel::costText() const {
    return m_cost->text();
}

QString StoryNotesPanel::memory() const {
    return m_memory->toPlainText();
}

QString StoryNotesPanel::authorsNote() const {
    return m_note->toPlainText();
}

void StoryNotesPanel::flush() {
    if (m_timer->isActive()) {
        m_timer->stop();
        Q_EMIT notesChanged(memory(), authorsNote());
    }
}

} // namespace baton::ui
