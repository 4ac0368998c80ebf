#include "story_editor.h"

#include <algorithm>
#include <memory>

#include <QContextMenuEvent>
#include <QFontDatabase>
#include <QKeyEvent>
#include <QMenu>
#include <QMimeData>
#include <QMouseEvent>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>

namespace baton::ui {

namespace {

constexpr int kAuthorProperty = QTextFormat::UserProperty + 1;
constexpr int kPassageProperty = QTextFormat::UserProperty + 2;
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
    s.replace(QChar::LineSeparator, QLatin1Char('\n'));
    return s;
}

int displayLength(const std::vector<storage::Passage>& path, size_t count) {
    int n = 0;
    for (size_t i = 0; i < count && i < path.size(); ++i)
        n += int(toDisplayText(path[i].text).size());
    return n;
}

StoryEditor::StoryEditor(QWidget* parent)
    : QTextEdit(parent) {
    setObjectName(QStringLiteral("storyEditor"));
    setAcceptRichText(false);
    setFrameShape(QFrame::NoFrame);
    // The document's undo covers the user's typing since the editor last changed the
    // document itself (endInternalChange); the story's undo goes further.
    document()->setUndoRedoEnabled(true);
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
    endInternalChange();
    if (atBottom)
        bar->setValue(bar->maximum());
}

void StoryEditor::endInternalChange() {
    m_internal = false;
    document()->clearUndoRedoStacks();
    collapseBlankLines();
}

void StoryEditor::collapseBlankLines() {
    bool changed = false;
    bool afterText = false;
    for (QTextBlock b = document()->begin(); b.isValid(); b = b.next()) {
        const bool blank = b.length() <= 1; // only its paragraph separator
        const bool hide = blank && afterText && b.next().isValid();
        if (b.isVisible() == hide) {
            b.setVisible(!hide);
            changed = true;
        }
        afterText = !blank || hide;
    }
    if (changed)
        document()->markContentsDirty(0, document()->characterCount());
}

int StoryEditor::collapsedBlankLines() const {
    int n = 0;
    for (QTextBlock b = document()->begin(); b.isValid(); b = b.next())
        n += b.isVisible() ? 0 : 1;
    return n;
}

void StoryEditor::setPassages(const std::vector<storage::Passage>& path) {
    clearStory();
    for (const auto& p : path) {
        const QString text = toDisplayText(p.text);
        QTextCharFormat f =
            p.author == storage::PassageAuthor::Model ? m_modelFormat : m_userFormat;
        f.setProperty(kPassageProperty, qint64(p.id));
        insertAt(m_saved, text, f);
        m_saved += int(text.size());
        m_order.push_back(p.id);
        m_savedTexts[p.id] = text;
    }
    moveToEnd();
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

void StoryEditor::showPath(const std::vector<storage::Passage>& path) {
    QString saved;
    for (const auto& p : path)
        saved += toDisplayText(p.text);
    if (!m_edited && saved == storyText().left(m_saved)) {
        // The same text (what was streamed is now saved): attach the passage ids.
        m_order.clear();
        m_savedTexts.clear();
        m_internal = true;
        int pos = 0;
        for (const auto& p : path) {
            const QString text = toDisplayText(p.text);
            QTextCursor c(document());
            c.setPosition(pos);
            c.setPosition(pos + int(text.size()), QTextCursor::KeepAnchor);
            QTextCharFormat f;
            f.setProperty(kPassageProperty, qint64(p.id));
            c.mergeCharFormat(f);
            pos += int(text.size());
            m_order.push_back(p.id);
            m_savedTexts[p.id] = text;
        }
        endInternalChange();
        return;
    }
    const QString typed = typedText();
    const int scroll = verticalScrollBar()->value();
    setPassages(path);
    if (!typed.isEmpty()) {
        QTextCursor c(document());
        c.movePosition(QTextCursor::End);
        c.insertText(typed, m_userFormat);
        m_lastTyped = typed;
        document()->clearUndoRedoStacks();
        moveToEnd();
    }
    verticalScrollBar()->setValue(std::min(scroll, verticalScrollBar()->maximum()));
}

void StoryEditor::clearStory() {
    m_internal = true;
    document()->clear();
    QTextCursor c(document());
    c.setBlockFormat(m_blockFormat);
    endInternalChange();
    m_saved = 0;
    m_edited = false;
    m_order.clear();
    m_savedTexts.clear();
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

QString StoryEditor::storyText() const {
    QString text = document()->toRawText();
    text.truncate(documentLength());
    text.replace(QChar::ParagraphSeparator, QLatin1Char('\n'));
    text.replace(QChar::LineSeparator, QLatin1Char('\n'));
    return text;
}

QString StoryEditor::typedText() const {
    return storyText().mid(m_saved);
}

void StoryEditor::appendTyped(const QString& text) {
    insertAt(documentLength(), text, m_userFormat);
    m_lastTyped = typedText();
    moveToEnd();
    Q_EMIT typedTextChanged();
}

void StoryEditor::restoreTyped(const QString& text) {
    if (text.isEmpty())
        return;
    insertAt(m_saved, text, m_userFormat);
    m_lastTyped = typedText();
    Q_EMIT typedTextChanged();
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
    endInternalChange();
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
    endInternalChange();
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

qint64 StoryEditor::passageAt(int pos) const {
    if (pos < 0 || pos >= m_saved)
        return 0;
    QTextCursor c(document());
    c.setPosition(pos + 1);
    return c.charFormat().property(kPassageProperty).toLongLong();
}

int StoryEditor::passageStart(qint64 passageId) const {
    int start = 0;
    for (qint64 id : m_order) {
        if (id == passageId)
            return start;
        start += int(m_savedTexts.at(id).size());
    }
    return -1;
}

bool StoryEditor::requestAlternatives(int pos, const QPoint& globalPos) {
    const qint64 passage = passageAt(pos);
    if (m_edited || isReadOnly() || passage == 0 || authorAt(pos) != storage::PassageAuthor::Model)
        return false;
    const int start = passageStart(passage);
    if (start < 0)
        return false;
    Q_EMIT alternativesRequested(passage, pos - start, globalPos);
    return true;
}

int StoryEditor::charAt(const QPoint& point) const {
    // The nearest boundary, and the character on the side of it the point is on.
    const QTextCursor c = cursorForPosition(point);
    const int pos = c.position();
    return pos > 0 && cursorRect(c).x() > point.x() ? pos - 1 : pos;
}

void StoryEditor::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton && event->modifiers() == Qt::ControlModifier &&
        requestAlternatives(charAt(event->position().toPoint()),
                            event->globalPosition().toPoint())) {
        event->accept();
        return;
    }
    QTextEdit::mousePressEvent(event);
}

void StoryEditor::contextMenuEvent(QContextMenuEvent* event) {
    std::unique_ptr<QMenu> menu(createStandardContextMenu(event->pos()));
    // Under the mouse, or at the text cursor when the menu key opened it.
    const int pos = event->reason() == QContextMenuEvent::Mouse ? charAt(event->pos())
                                                                : textCursor().position();
    const qint64 passage = passageAt(pos);
    if (passage != 0 && authorAt(pos) == storage::PassageAuthor::Model) {
        // After the tab: the menu's shortcut column.
        auto* action = new QAction(tr("Token Alternatives…\tCtrl+Click"), menu.get());
        action->setObjectName(QStringLiteral("tokenAlternativesAction"));
        action->setEnabled(!m_edited && !isReadOnly());
        action->setStatusTip(m_edited ? tr("Save your edits first")
                                      : tr("What the model might have written here instead"));
        const QPoint global = event->globalPos();
        connect(action, &QAction::triggered, this,
                [this, pos, global] { requestAlternatives(pos, global); });
        QAction* first = menu->actions().isEmpty() ? nullptr : menu->actions().first();
        menu->insertAction(first, action);
        menu->insertSeparator(first);
    }
    menu->exec(event->globalPos());
}

std::vector<story::PassageEdit> StoryEditor::pendingEdits() const {
    if (!m_edited || m_order.empty())
        return {};
    std::vector<std::string> before;
    for (qint64 id : m_order)
        before.push_back(m_savedTexts.at(id).toStdString());
    const std::vector<int64_t> ids(m_order.begin(), m_order.end());
    return story::diffTexts(ids, before, storyText().left(m_saved).toStdString());
}

void StoryEditor::acceptEdits() {
    for (const story::PassageEdit& e : pendingEdits())
        m_savedTexts[e.passageId] = QString::fromStdString(e.after);
    m_edited = false;
    document()->clearUndoRedoStacks();
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
    if (event->matches(QKeySequence::Undo) && !document()->isUndoAvailable()) {
        Q_EMIT storyUndoRequested();
        return;
    }
    if (event->matches(QKeySequence::Redo) && !document()->isRedoAvailable()) {
        Q_EMIT storyRedoRequested();
        return;
    }
    // What is typed is the user's: a selection typed over is replaced in one step by
    // text in the user's format (QTextEdit would give it the replaced text's).
    QTextCursor c = textCursor();
    const QString typed = event->text();
    const bool printable = !typed.isEmpty() && typed.at(0).isPrint() &&
                           !(event->modifiers() & (Qt::ControlModifier | Qt::AltModifier));
    if (c.hasSelection() && c.selectionStart() < m_saved && printable) {
        const QTextCharFormat f = typingFormat(c.selectionStart());
        c.beginEditBlock();
        c.removeSelectedText();
        c.insertText(typed, f);
        c.endEditBlock();
        setTextCursor(c);
        return;
    }
    if (!c.hasSelection())
        setCurrentCharFormat(typingFormat(c.position()));
    QTextEdit::keyPressEvent(event);
}

QTextCharFormat StoryEditor::typingFormat(int pos) const {
    // Right after the saved text it is new text, not part of the last passage.
    if (pos >= m_saved)
        return m_userFormat;
    QTextCharFormat f = m_userFormat;
    f.setProperty(kPassageProperty, passageAt(std::max(0, pos - 1)));
    return f;
}

void StoryEditor::inputMethodEvent(QInputMethodEvent* event) {
    const QTextCursor c = textCursor();
    if (!isReadOnly() && !c.hasSelection())
        setCurrentCharFormat(typingFormat(c.position()));
    QTextEdit::inputMethodEvent(event);
}

bool StoryEditor::canInsertFromMimeData(const QMimeData* source) const {
    return source->hasText();
}

void StoryEditor::insertFromMimeData(const QMimeData* source) {
    if (isReadOnly() || !source->hasText())
        return;
    // Pasted text is the user's, like typed text.
    QTextCursor c = textCursor();
    const QString text = toDisplayText(source->text().toStdString());
    c.insertText(text, typingFormat(c.selectionStart()));
    setTextCursor(c);
}

void StoryEditor::onContentsChange(int position, int removed, int added) {
    if (m_internal || (removed == 0 && added == 0))
        return;
    // Line breaks typed or deleted: the gaps are laid out again once the edit is done.
    QMetaObject::invokeMethod(this, &StoryEditor::collapseBlankLines, Qt::QueuedConnection);
    if (position < m_saved) {
        // An edit of saved text: the saved part grows or shrinks by what it lost and
        // gained (a change reaching into the typed text takes that part along).
        const int savedRemoved = std::min(position + removed, m_saved) - position;
        m_saved += added - savedRemoved;
        m_edited = true;
        Q_EMIT savedTextEdited();
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
