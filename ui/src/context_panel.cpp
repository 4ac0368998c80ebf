#include "context_panel.h"

#include "panel_util.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace baton::ui {

// The window's T positions as one bar: each stretch as wide as its tokens, the room
// left as an outline, the state as a mark before the first position.
class ContextBar : public QWidget {
public:
    ContextBar() {
        setObjectName(QStringLiteral("contextBar"));
        setMinimumHeight(26);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    void setView(const story::ContextView* view) {
        m_view = view;
        update();
    }
    QSize sizeHint() const override { return {240, 26}; }
    QSize minimumSizeHint() const override { return {120, 26}; }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing, false);
        const QRect r = rect().adjusted(12, 2, -1, -2);
        p.setPen(palette().color(QPalette::Mid));
        p.setBrush(palette().color(QPalette::Base));
        p.drawRect(r);
        if (!m_view || m_view->windows.window <= 0)
            return;
        const double perToken = double(r.width()) / m_view->windows.window;
        double x = r.left();
        for (const auto& s : m_view->spans) {
            const double w = s.tokens * perToken;
            const QRectF cell(x, r.top(), w, r.height());
            p.fillRect(cell, ContextPanel::kindColour(s.kind, s.overlap));
            if (s.overlap)
                p.fillRect(cell, QBrush(QColor(255, 255, 255, 110), Qt::BDiagPattern));
            x += w;
        }
        if (m_view->hasState) { // the state enters every position: a mark before them
            p.setPen(Qt::NoPen);
            p.setBrush(QColor(0x2e, 0x7d, 0x32));
            p.drawEllipse(QPointF(6, r.center().y()), 4.5, 4.5);
        }
        p.setPen(QPen(palette().color(QPalette::WindowText), 2));
        p.drawLine(QPointF(x, r.top() - 1), QPointF(x, r.bottom() + 1)); // generation starts
    }

private:
    const story::ContextView* m_view = nullptr;
};

QColor ContextPanel::kindColour(story::SegmentKind kind, bool overlap) {
    switch (kind) {
    case story::SegmentKind::Memory:
        return QColor(0x00, 0x89, 0x7b);
    case story::SegmentKind::Passage:
        return overlap ? QColor(0x90, 0xa4, 0xae) : QColor(0x54, 0x6e, 0x7a);
    case story::SegmentKind::WorldInfo:
        return QColor(0xef, 0x9a, 0x1a);
    case story::SegmentKind::AuthorsNote:
        return QColor(0x8e, 0x44, 0xad);
    case story::SegmentKind::Recalled:
        return QColor(0x1e, 0x88, 0xe5);
    }
    return Qt::gray;
}

ContextPanel::ContextPanel(QWidget* parent)
    : QWidget(parent) {
    setObjectName(QStringLiteral("contextPanel"));
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("contextSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_bar = new ContextBar;
    m_spans = new QTreeWidget;
    m_spans->setObjectName(QStringLiteral("contextSpans"));
    m_spans->setRootIsDecorated(false);
    m_spans->setColumnCount(2);
    m_spans->setHeaderLabels({tr("In the window, in order"), tr("Tokens")});
    m_spans->header()->setStretchLastSection(false);
    m_spans->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_spans->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_spans->setMinimumHeight(m_spans->fontMetrics().height() * 6);
    m_text = new QPlainTextEdit;
    m_text->setObjectName(QStringLiteral("contextText"));
    m_text->setReadOnly(true);
    m_text->setPlaceholderText(tr("Select a stretch to see its text."));
    m_lore = new QLabel;
    m_lore->setObjectName(QStringLiteral("contextLore"));
    m_lore->setWordWrap(true);
    m_lore->setTextFormat(Qt::PlainText);

    m_recall = new QTreeWidget;
    m_recall->setObjectName(QStringLiteral("contextRecall"));
    m_recall->setRootIsDecorated(false);
    m_recall->setColumnCount(3);
    m_recall->setHeaderLabels({tr("Recalled"), tr("Window"), tr("Tokens")});
    m_recall->header()->setStretchLastSection(false);
    m_recall->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_recall->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_recall->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    m_recall->setMinimumHeight(m_recall->fontMetrics().height() * 5);
    m_recallShow = new QPushButton(tr("Show in story"));
    m_recallShow->setObjectName(QStringLiteral("recallShow"));
    m_recallShow->setToolTip(tr("Select the excerpt in the story."));
    m_recallPin = new QPushButton(tr("Pin to memory"));
    m_recallPin->setObjectName(QStringLiteral("recallPin"));
    m_recallPin->setToolTip(tr("Add the excerpt to the story's memory, so every window reads "
                               "it (a new memory makes the next generation read the story "
                               "again)."));
    m_recallBan = new QPushButton(tr("Never recall"));
    m_recallBan->setObjectName(QStringLiteral("recallBan"));
    m_recallBan->setToolTip(tr("Leave this excerpt out of recall from now on (the story's "
                               "generation settings keep the list)."));
    auto* recallButtons = new QHBoxLayout;
    recallButtons->setContentsMargins(0, 0, 0, 0);
    for (auto* b : {m_recallShow, m_recallPin, m_recallBan})
        recallButtons->addWidget(b);
    recallButtons->addStretch(1);
    m_recallBox = new QWidget;
    m_recallBox->setObjectName(QStringLiteral("contextRecallBox"));
    auto* recallLayout = new QVBoxLayout(m_recallBox);
    recallLayout->setContentsMargins(0, 0, 0, 0);
    recallLayout->addWidget(m_recall, 1);
    recallLayout->addLayout(recallButtons);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_spans);
    split->addWidget(m_text);
    split->addWidget(m_recallBox);
    split->setChildrenCollapsible(false);
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(10, 8, 10, 8);
    l->addWidget(sectionTitle(tr("What the model reads next")));
    l->addWidget(m_summary);
    l->addWidget(m_bar);
    l->addWidget(split, 1);
    l->addWidget(m_lore);
    connect(m_spans, &QTreeWidget::currentItemChanged, this, &ContextPanel::showSpanText);
    connect(m_recall, &QTreeWidget::currentItemChanged, this, [this] {
        const auto* c = selectedRecall();
        for (auto* b : {m_recallShow, m_recallPin, m_recallBan})
            b->setEnabled(c != nullptr);
        if (c)
            m_text->setPlainText(QString::fromStdString(c->text));
    });
    connect(m_recall, &QTreeWidget::itemDoubleClicked, m_recallShow, &QPushButton::click);
    connect(m_recallShow, &QPushButton::clicked, this, [this] {
        if (const auto* c = selectedRecall())
            Q_EMIT recallShowRequested(c->pathStart, c->pathEnd);
    });
    connect(m_recallPin, &QPushButton::clicked, this, [this] {
        if (const auto* c = selectedRecall())
            Q_EMIT recallPinRequested(QString::fromStdString(c->text).trimmed());
    });
    connect(m_recallBan, &QPushButton::clicked, this, [this] {
        if (const auto* c = selectedRecall())
            Q_EMIT recallBanRequested(c->passageId, c->chunkStart);
    });
    showMessage(tr("Open a story and a model: this shows what the model reads when it "
                   "continues."));
}

void ContextPanel::showMessage(const QString& text) {
    m_view.reset();
    m_bar->setView(nullptr);
    m_summary->setText(text);
    m_spans->clear();
    m_text->clear();
    m_lore->clear();
    showRecall();
}

void ContextPanel::showView(const story::ContextView& view) {
    m_view = view;
    const story::ContextView& v = *m_view;
    QStringList lines;
    lines << tr("Window %1 of the story (T = %2, o = %3): %4 of %2 positions in use, %5 left "
                "before it rolls over.")
                 .arg(v.windowIndex + 1)
                 .arg(v.windows.window)
                 .arg(v.windows.overlap)
                 .arg(v.used)
                 .arg(v.room);
    lines << (v.hasState ? tr("The state (green mark) summarises window %1 and everything "
                              "before it.")
                               .arg(v.stateFromWindow + 1)
                         : tr("No state: this is the story's first window, or the model "
                              "has none."));
    lines << (v.layout == story::MemoryLayout::EveryWindow
                  ? tr("Memory: in every window, %1 tokens.").arg(v.pinnedTokens)
                  : tr("Memory: read once at the start (%1 tokens); later windows know it "
                       "only through the state.")
                        .arg(v.memoryTokens));
    if (v.noteTokens > 0 || v.guideTokens > 0)
        lines << (v.recall.tokens > 0
                      ? tr("World info, recalled text and the author's note: %1 tokens, "
                           "whole, just before the continuation.")
                      : tr("World info and the author's note: %1 tokens, whole, just before "
                           "the continuation."))
                     .arg(v.guideTokens);
    // What it reads, by reason: a total above T is the open window again, roll-overs
    // and the guidance, never a mistake.
    QStringList parts;
    if (v.read.again > 0)
        parts << tr("%1 the open window again").arg(v.read.again);
    if (v.read.text > 0)
        parts << tr("%1 of story text").arg(v.read.text);
    if (v.read.rollovers > 0)
        parts << tr("%1 at %n roll-over(s) (the memory and the tokens each new window keeps)",
                    nullptr, v.read.rollovers)
                     .arg(v.read.atRollover);
    if (v.read.guide > 0)
        parts << tr("%1 for world info and the note (with the text after their place, again)")
                     .arg(v.read.guide);
    // Said in the summary when it reads more than a window (which looks wrong without
    // it), else in its tooltip.
    const QString why = parts.isEmpty() ? QString() : tr(": %1").arg(parts.join(tr(", ")));
    const bool more = v.readTokens > v.windows.window;
    lines << (v.resumedFromPassage != 0 ? tr("Resumes from a saved state: reads %1 tokens%2.")
                                              .arg(v.readTokens)
                                              .arg(more ? why : QString())
                                        : tr("Reads the story from the beginning: %1 tokens%2.")
                                              .arg(v.readTokens)
                                              .arg(more ? why : QString()));
    m_summary->setToolTip(tr("It reads %1 tokens before it writes%2.").arg(v.readTokens).arg(why));
    m_summary->setText(lines.join(QLatin1Char('\n')));
    m_bar->setView(&*m_view);

    m_spans->clear();
    for (size_t i = 0; i < v.spans.size(); ++i) {
        const auto& s = v.spans[i];
        QString label = QString::fromStdString(s.label);
        if (s.overlap)
            label += tr(" (overlap)");
        else if (s.carried)
            label += tr(" (the unfinished sentence, kept after the world info and the note)");
        auto* item = new QTreeWidgetItem({label, QString::number(s.tokens)});
        item->setData(0, Qt::UserRole, int(i));
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        QPixmap swatch(10, 10);
        swatch.fill(kindColour(s.kind, s.overlap));
        item->setIcon(0, QIcon(swatch));
        m_spans->addTopLevelItem(item);
    }
    auto* room = new QTreeWidgetItem({tr("room to generate"), QString::number(v.room)});
    room->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    room->setForeground(0, palette().color(QPalette::PlaceholderText));
    m_spans->addTopLevelItem(room);

    QStringList lore;
    for (const auto& m : v.lore.matches)
        lore << (m.placed ? tr("World info read: %1 (%2 tokens)")
                          : tr("World info left out, over the budget: %1 (%2 tokens)"))
                    .arg(QString::fromStdString(m.key))
                    .arg(m.tokens);
    if (!v.lore.matches.empty())
        lore
            << tr("World-info budget: %1 of %2 tokens used.").arg(v.lore.tokens).arg(v.lore.budget);
    m_lore->setText(lore.join(QLatin1Char('\n')));
    m_lore->setVisible(!lore.isEmpty());
    showRecall();
    showSpanText();
}

void ContextPanel::showRecall() {
    m_recall->clear();
    m_recallBox->setVisible(false);
    m_recall->setHeaderLabels({tr("Recalled"), tr("Window"), tr("Tokens")});
    for (auto* b : {m_recallShow, m_recallPin, m_recallBan})
        b->setEnabled(false);
    if (!m_view)
        return;
    const story::RecallSelection& r = m_view->recall;
    for (size_t i = 0; i < r.chunks.size(); ++i) {
        const auto& c = r.chunks[i];
        QStringList words;
        for (const auto& w : c.matched)
            words << QString::fromStdString(w);
        QString excerpt = QString::fromStdString(c.text).simplified();
        if (excerpt.size() > 90)
            excerpt = excerpt.left(88) + QStringLiteral("…");
        const QString label =
            words.isEmpty() ? excerpt : tr("%1: %2").arg(words.join(tr(", ")), excerpt);
        auto* item =
            new QTreeWidgetItem({label, QString::number(story::windowAt(*m_view, c.pathStart) + 1),
                                 QString::number(c.tokens)});
        item->setData(0, Qt::UserRole, int(i));
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
        item->setToolTip(
            0,
            c.placed
                ? QString::fromStdString(c.text)
                : tr("Left out: over the recall budget.\n%1").arg(QString::fromStdString(c.text)));
        QPixmap swatch(10, 10);
        swatch.fill(c.placed ? kindColour(story::SegmentKind::Recalled, false) : QColor(Qt::gray));
        item->setIcon(0, QIcon(swatch));
        if (!c.placed)
            item->setForeground(0, palette().color(QPalette::PlaceholderText));
        m_recall->addTopLevelItem(item);
    }
    // Only a recall that found something takes room; otherwise a line says why not.
    m_recallBox->setVisible(!r.chunks.empty());
    QString line;
    if (!r.enabled)
        line = tr("Recall is off for this story (Generation settings, Context).");
    else if (r.chunks.empty() && r.windowStart > 0)
        line = r.terms.empty() ? tr("Recall: the recent text names nothing to look for.")
                               : tr("Recall: no earlier passage outside the window matches "
                                    "the recent text.");
    else if (!r.chunks.empty())
        m_recall->setHeaderLabels({tr("Recalled (%1 of %2 tokens)").arg(r.tokens).arg(r.budget),
                                   tr("Window"), tr("Tokens")});
    if (!line.isEmpty()) {
        const QString lore = m_lore->text();
        m_lore->setText(lore.isEmpty() ? line : lore + QLatin1Char('\n') + line);
        m_lore->setVisible(true);
    }
}

const story::RecalledChunk* ContextPanel::selectedRecall() const {
    const QTreeWidgetItem* item = m_recall->currentItem();
    const QVariant index = item ? item->data(0, Qt::UserRole) : QVariant();
    if (!m_view || !index.isValid() || size_t(index.toInt()) >= m_view->recall.chunks.size())
        return nullptr;
    return &m_view->recall.chunks[size_t(index.toInt())];
}

void ContextPanel::showSpanText() {
    if (!m_view) {
        m_text->clear();
        return;
    }
    const QTreeWidgetItem* item = m_spans->currentItem();
    const QVariant index = item ? item->data(0, Qt::UserRole) : QVariant();
    if (!index.isValid()) { // the whole window
        QString all;
        for (const auto& s : m_view->spans)
            all += QString::fromUtf8(s.text.data(), qsizetype(s.text.size()));
        m_text->setPlainText(all);
        return;
    }
    const auto& s = m_view->spans[size_t(index.toInt())];
    m_text->setPlainText(QString::fromUtf8(s.text.data(), qsizetype(s.text.size())));
}

} // namespace baton::ui
