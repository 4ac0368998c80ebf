#include "story_editor.h"

#include <algorithm>

#include <QFontDatabase>
#include <QKeyEvent>
#include <QMimeData>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>

namespace baton::ui {

namespace {

constexpr int kAuthorProperty = QTextFormat::UserProperty + 1;
constexpr double kMaxColumnEm = 42.0;

QFont storyFont() {
    QFont font;
    font.setFamilies({QStringLiteral("Literata"), QStringLiteral("Charter"),
                      QStringLiteral("Source Serif 4"), QStringLiteral("Source Serif Pro"),
                      QStringLiteral("Georgia"), QStringLiteral("Noto Serif"),
                      QStringLiteral("DejaVu Serif"), QStringLiteral("serif")});
    font.setStyleHint(QFont::Serif);
    font.setPointSizeF(13.5);
    return font;
}

} // namespace

QString toDisplayText(const std::string& text) {
    QString s = QString::fromStdString(text);
    s.replace(QStringLiteral("\r\n"), QStringLiteral("\n"));
    s.replace(QLatin1Char('\r'), QLatin1Char('\n'));
    s.replace(QChar::ParagraphSeparator, QLatin1Char('\n'));
    return s;
}

StoryEditor::StoryEditor(QWidget* parent)
    : QTextEdit(parent) {
    setObjectName(QStringLiteral("storyEditor"));
    setAcceptRichText(false);
    setFrameShape(QFrame::NoFrame);
    // Undo and redo of the document would undo saved text the database still holds:
    // off in this slice (story-level undo comes with editing in place).
    document()->setUndoRedoEnabled(false);
    document()->setDefaultFont(storyFont());
    setFont(storyFont());
    setTabChangesFocus(false);

    QPalette p = palette();
    p.setColor(QPalette::Base, QColor(0xfb, 0xfa, 0xf6));
    p.setColor(QPalette::Text, QColor(0x1d, 0x1b, 0x18));
    p.setColor(QPalette::Highlight, QColor(0xd8, 0xe4, 0xf0));
    p.setColor(QPalette::HighlightedText, QColor(0x1d, 0x1b, 0x18));
    p.setColor(QPalette::Window, p.color(QPalette::Base)); // the margins around the column
    setPalette(p);
    setAutoFillBackground(true);

    m_userFormat.setForeground(QColor(0x1d, 0x1b, 0x18));
    m_userFormat.setProperty(kAuthorProperty, int(storage::PassageAuthor::User));
    m_modelFormat.setForeground(QColor(0x2f, 0x4b, 0x6e));
    m_modelFormat.setProperty(kAuthorProperty, int(storage::PassageAuthor::Model));
    m_blockFormat.setLineHeight(155, QTextBlockFormat::ProportionalHeight);
    m_blockFormat.setBottomMargin(QFontInfo(storyFont()).pixelSize() * 0.6);
    QTextCursor c(document());
    c.setBlockFormat(m_blockFormat);
    setCurrentCharFormat(m_userFormat);

    connect(document(), &QTextDocument::contentsChange, this, &StoryEditor::onContentsChange);
    updateColumn();
}

int StoryEditor::documentLength() const {
    return document()->characterCount() - 1; // without the final paragraph separator
}

void StoryEditor::insertAt(int pos, const QString& text, const QTextCharFormat& format) {
    if (text.isEmpty())
        return;
    QScrollBar* bar = verticalScrollBar();
    const bool atBottom = bar->value() >= bar->maximum() - 4;
    m_internal = true;
    QTextCursor c(document());
    c.setPosition(pos);
    const int start = c.position();
    c.insertText(text, format);
    // The long-form paragraph format on every block the text touched.
    QTextCursor blocks(document());
    blocks.setPosition(start);
    blocks.setPosition(c.position(), QTextCursor::KeepAnchor);
    blocks.mergeBlockFormat(m_blockFormat);
    m_internal = false;
    if (atBottom)
        bar->setValue(bar->maximum());
}

void StoryEditor::setPassages(const std::vector<storage::Passage>& path) {
    clearStory();
    for (const auto& p : path)
        appendSaved(toDisplayText(p.text), p.author);
    moveToEnd();
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

void StoryEditor::clearStory() {
    m_internal = true;
    document()->clear();
    QTextCursor c(document());
    c.setBlockFormat(m_blockFormat);
    m_internal = false;
    m_saved = 0;
    m_lastTyped.clear();
    setCurrentCharFormat(m_userFormat);
    updateColumn();
    Q_EMIT typedTextChanged();
}

void StoryEditor::appendSaved(const QString& text, storage::PassageAuthor author) {
    const QString t = text;
    insertAt(m_saved, t, author == storage::PassageAuthor::Model ? m_modelFormat : m_userFormat);
    m_saved += int(t.size());
}

QString StoryEditor::typedText() const {
    const QString all = toPlainText();
    return all.mid(m_saved);
}

QString StoryEditor::commitTypedText() {
    const QString typed = typedText();
    if (typed.isEmpty())
        return typed;
    m_internal = true;
    QTextCursor c(document());
    c.setPosition(m_saved);
    c.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
    c.setCharFormat(m_userFormat);
    m_internal = false;
    m_saved = documentLength();
    m_lastTyped.clear();
    Q_EMIT typedTextChanged();
    return typed;
}

void StoryEditor::truncate(int savedChars) {
    m_internal = true;
    QTextCursor c(document());
    c.setPosition(qBound(0, savedChars, documentLength()));
    c.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
    c.removeSelectedText();
    m_internal = false;
    m_saved = documentLength();
    m_lastTyped.clear();
    moveToEnd();
    Q_EMIT typedTextChanged();
}

storage::PassageAuthor StoryEditor::authorAt(int pos) const {
    QTextCursor c(document());
    c.setPosition(qBound(0, pos + 1, documentLength()));
    const int author = c.charFormat().intProperty(kAuthorProperty);
    return author == int(storage::PassageAuthor::Model) ? storage::PassageAuthor::Model
                                                        : storage::PassageAuthor::User;
}

bool StoryEditor::cursorInSaved() const {
    const QTextCursor c = textCursor();
    return c.selectionStart() < m_saved;
}

void StoryEditor::moveToEnd() {
    QTextCursor c = textCursor();
    c.movePosition(QTextCursor::End);
    setTextCursor(c);
    setCurrentCharFormat(m_userFormat);
}

void StoryEditor::keyPressEvent(QKeyEvent* event) {
    if (isReadOnly()) {
        QTextEdit::keyPressEvent(event);
        return;
    }
    const bool inserts =
        (!event->text().isEmpty() && event->text().at(0).isPrint() &&
         !(event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))) ||
        ((event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) &&
         !(event->modifiers() & Qt::ControlModifier)) ||
        event->matches(QKeySequence::Paste) || event->key() == Qt::Key_Tab;
    const bool deletes = event->key() == Qt::Key_Backspace || event->key() == Qt::Key_Delete ||
                         event->matches(QKeySequence::Cut) ||
                         event->matches(QKeySequence::DeleteStartOfWord) ||
                         event->matches(QKeySequence::DeleteEndOfWord) ||
                         event->matches(QKeySequence::DeleteEndOfLine) ||
                         event->matches(QKeySequence::DeleteCompleteLine);
    if (inserts) {
        if (cursorInSaved())
            moveToEnd();
        setCurrentCharFormat(m_userFormat);
        QTextEdit::keyPressEvent(event);
        return;
    }
    if (deletes) {
        QTextCursor c = textCursor();
        if (c.hasSelection()) {
            if (c.selectionEnd() <= m_saved)
                return;                         // saved text is not edited in this slice
            if (c.selectionStart() < m_saved) { // keep only the typed part of the selection
                const int end = c.selectionEnd();
                c.setPosition(m_saved);
                c.setPosition(end, QTextCursor::KeepAnchor);
                setTextCursor(c);
            }
            if (event->matches(QKeySequence::Cut)) {
                cut();
                return;
            }
            textCursor().removeSelectedText();
            return;
        }
        if (c.position() < m_saved)
            return;
        const bool backwards =
            event->key() == Qt::Key_Backspace || event->matches(QKeySequence::DeleteStartOfWord);
        if (backwards && c.position() == m_saved)
            return;
        if (event->matches(QKeySequence::DeleteStartOfWord)) {
            c.movePosition(QTextCursor::PreviousWord, QTextCursor::KeepAnchor);
            if (c.selectionStart() < m_saved)
                c.setPosition(m_saved, QTextCursor::KeepAnchor);
            c.removeSelectedText();
            return;
        }
        QTextEdit::keyPressEvent(event);
        return;
    }
    QTextEdit::keyPressEvent(event);
}

void StoryEditor::inputMethodEvent(QInputMethodEvent* event) {
    if (!isReadOnly() && cursorInSaved() && !event->commitString().isEmpty())
        moveToEnd();
    QTextEdit::inputMethodEvent(event);
}

bool StoryEditor::canInsertFromMimeData(const QMimeData* source) const {
    return source->hasText();
}

void StoryEditor::insertFromMimeData(const QMimeData* source) {
    if (isReadOnly() || !source->hasText())
        return;
    if (cursorInSaved())
        moveToEnd();
    textCursor().insertText(toDisplayText(source->text().toStdString()), m_userFormat);
}

void StoryEditor::onContentsChange(int position, int removed, int added) {
    if (m_internal)
        return;
    if (position < m_saved && (removed > 0 || added > 0)) {
        Q_EMIT savedTextDamaged();
        return;
    }
    const QString typed = typedText();
    if (typed != m_lastTyped) {
        m_lastTyped = typed;
        Q_EMIT typedTextChanged();
    }
}

void StoryEditor::resizeEvent(QResizeEvent* event) {
    QTextEdit::resizeEvent(event);
    updateColumn();
}

void StoryEditor::updateColumn() {
    // A column of at most kMaxColumnEm em, centred: the viewport is narrowed by equal
    // margins, which the editor paints in the page colour (so the placeholder, the
    // text and the scroll bar all line up). The document margin gives the room above
    // and around the text.
    const int em = QFontInfo(document()->defaultFont()).pixelSize();
    const int column = int(kMaxColumnEm * em);
    const int margin = 2 * em;
    const int side =
        qMax(0, (width() - verticalScrollBar()->sizeHint().width() - column) / 2 - margin);
    if (document()->documentMargin() != margin) {
        const bool internal = m_internal;
        m_internal = true;
        document()->setDocumentMargin(margin);
        m_internal = internal;
    }
    if (viewportMargins().left() != side)
        setViewportMargins(side, 0, side, 0);
}

void StoryEditor::setLossRanges(const std::vector<LossRange>& ranges) {
    QList<QTextEdit::ExtraSelection> selections;
    selections.reserve(qsizetype(ranges.size()));
    const int length = documentLength();
    for (const LossRange& r : ranges) {
        if (!(r.nll >= 0) || r.begin >= r.end || r.end > length)
            continue;
        // 0..10 nats: transparent to a strong red.
        const double t = std::min(1.0, double(r.nll) / 10.0);
        QTextEdit::ExtraSelection sel;
        sel.cursor = QTextCursor(document());
        sel.cursor.setPosition(r.begin);
        sel.cursor.setPosition(r.end, QTextCursor::KeepAnchor);
        sel.format.setBackground(QColor(0xe0, 0x40, 0x30, int(20 + 150 * t * t)));
        sel.format.setToolTip(tr("loss %1 nats").arg(double(r.nll), 0, 'f', 2));
        selections.append(sel);
    }
    setExtraSelections(selections);
}

void StoryEditor::clearLossRanges() {
    setExtraSelections({});
}

} // namespace baton::ui
