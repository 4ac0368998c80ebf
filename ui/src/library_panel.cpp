#include "library_panel.h"

#include "story_list_model.h"

#include <baton/storage/qt/storage_controller.h>

#include <QAction>
#include <QApplication>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPainter>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace baton::ui {

namespace {

// Two lines per story: the title, and when it was last changed in a quieter tone.
class StoryItemDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex&) const override {
        const QFontMetrics fm(option.font);
        return {option.rect.width(), fm.height() * 2 + fm.height() * 3 / 4 + 6};
    }

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        QStyleOptionViewItem opt = option;
        initStyleOption(&opt, index);
        opt.text.clear();
        const QWidget* w = option.widget;
        QStyle* style = w ? w->style() : QApplication::style();
        style->drawPrimitive(QStyle::PE_PanelItemViewItem, &opt, painter, w);
        const bool selected = option.state & QStyle::State_Selected;
        const QFontMetrics fm(option.font);
        const int pad = fm.height() / 2;
        QRect r = option.rect.adjusted(pad + 2, pad / 2 + 2, -pad, -pad / 2);
        QFont title = option.font;
        title.setWeight(QFont::DemiBold);
        painter->save();
        painter->setFont(title);
        painter->setPen(
            option.palette.color(selected ? QPalette::HighlightedText : QPalette::Text));
        const QString t =
            QFontMetrics(title).elidedText(index.data().toString(), Qt::ElideRight, r.width());
        painter->drawText(r, Qt::AlignLeft | Qt::AlignTop, t);
        QColor quiet = option.palette.color(selected ? QPalette::HighlightedText : QPalette::Text);
        quiet.setAlphaF(0.6);
        painter->setPen(quiet);
        painter->setFont(option.font);
        painter->drawText(r, Qt::AlignLeft | Qt::AlignBottom,
                          relativeTime(index.data(StoryListModel::UpdatedRole).toLongLong()));
        painter->restore();
    }

    void updateEditorGeometry(QWidget* editor, const QStyleOptionViewItem& option,
                              const QModelIndex&) const override {
        const int h = editor->sizeHint().height();
        editor->setGeometry(option.rect.x() + 4, option.rect.y() + 3, option.rect.width() - 8, h);
    }
};

} // namespace

// Shows the stories the database found for the search text (all without one).
class LibraryPanel::SearchProxy : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setMatches(std::optional<QSet<qint64>> ids) {
        m_ids = std::move(ids);
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        if (!m_ids)
            return true;
        const QModelIndex i = sourceModel()->index(row, 0, parent);
        return m_ids->contains(i.data(StoryListModel::IdRole).toLongLong());
    }

private:
    std::optional<QSet<qint64>> m_ids;
};

LibraryPanel::LibraryPanel(storage::StorageController& storage, QWidget* parent)
    : QWidget(parent)
    , m_storage(storage) {
    setObjectName(QStringLiteral("library"));
    m_model = new StoryListModel(this);
    m_proxy = new SearchProxy(this);
    m_proxy->setSourceModel(m_model);

    auto* heading = new QLabel(tr("Stories"));
    heading->setObjectName(QStringLiteral("libraryHeading"));
    QFont hf = heading->font();
    hf.setWeight(QFont::DemiBold);
    hf.setPointSizeF(hf.pointSizeF() * 1.15);
    heading->setFont(hf);

    m_search = new QLineEdit;
    m_search->setObjectName(QStringLiteral("librarySearch"));
    m_search->setPlaceholderText(tr("Search titles and text"));
    m_search->setClearButtonEnabled(true);
    m_searchTimer = new QTimer(this);
    m_searchTimer->setSingleShot(true);
    m_searchTimer->setInterval(150); // one query per pause in typing
    connect(m_searchTimer, &QTimer::timeout, this, &LibraryPanel::runSearch);
    connect(m_search, &QLineEdit::textChanged, m_searchTimer, qOverload<>(&QTimer::start));

    m_list = new QListView;
    m_list->setObjectName(QStringLiteral("storyList"));
    m_list->setModel(m_proxy);
    m_list->setItemDelegate(new StoryItemDelegate(m_list));
    m_list->setEditTriggers(QAbstractItemView::EditKeyPressed);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setUniformItemSizes(true);
    m_list->setFrameShape(QFrame::NoFrame);
    connect(m_list->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                Q_EMIT selectionChanged();
                if (current.isValid())
                    Q_EMIT storyActivated(current.data(StoryListModel::IdRole).toLongLong());
            });
    connect(m_model, &StoryListModel::renameRequested, this, [this](qint64 id, QString title) {
        storage::StoryChange change;
        change.title = title.toStdString();
        m_requests.insert(m_storage.updateStory(id, change), tr("Renaming the story"));
        Q_EMIT storyRenamed(id, title);
    });

    m_new = new QToolButton;
    m_rename = new QToolButton;
    m_delete = new QToolButton;
    for (auto* b : {m_new, m_rename, m_delete})
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(m_new);
    buttons->addWidget(m_rename);
    buttons->addWidget(m_delete);
    buttons->addStretch(1);

    m_undoBar = new QFrame;
    m_undoBar->setObjectName(QStringLiteral("undoBar"));
    m_undoBar->setFrameShape(QFrame::StyledPanel);
    m_undoBar->setAutoFillBackground(true);
    QPalette up = m_undoBar->palette();
    up.setColor(QPalette::Window, QColor(0xfd, 0xf3, 0xd8));
    up.setColor(QPalette::WindowText, QColor(0x3a, 0x30, 0x18));
    m_undoBar->setPalette(up);
    m_undoLabel = new QLabel;
    m_undoLabel->setWordWrap(true);
    m_undo = new QToolButton;
    m_undo->setToolButtonStyle(Qt::ToolButtonTextOnly);
    auto* undoLayout = new QHBoxLayout(m_undoBar);
    undoLayout->setContentsMargins(8, 4, 4, 4);
    undoLayout->addWidget(m_undoLabel, 1);
    undoLayout->addWidget(m_undo);
    m_undoBar->hide();
    m_undoTimer = new QTimer(this);
    m_undoTimer->setSingleShot(true);
    m_undoTimer->setInterval(15000);
    connect(m_undoTimer, &QTimer::timeout, this, &LibraryPanel::commitPendingDelete);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(10, 12, 6, 8);
    layout->setSpacing(8);
    layout->addWidget(heading);
    layout->addWidget(m_search);
    m_empty = new QLabel(tr("No stories yet. Start one with New story (Ctrl+N), or make one "
                            "from a book with File > Import story (Ctrl+I)."));
    m_empty->setObjectName(QStringLiteral("libraryEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setForegroundRole(QPalette::PlaceholderText);
    m_empty->hide();
    layout->addWidget(m_empty);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_undoBar);
    layout->addLayout(buttons);

    connect(&m_storage, &storage::StorageController::storiesListed, this, &LibraryPanel::onListed);
    connect(&m_storage, &storage::StorageController::storyCreated, this,
            [this](quint64 request, qint64 storyId) {
                if (!m_requests.remove(request))
                    return;
                m_selectAfterList = storyId;
                refresh();
                Q_EMIT storyCreated(storyId);
            });
    connect(&m_storage, &storage::StorageController::storyDeleted, this,
            [this](quint64 request, qint64) { m_requests.remove(request); });
    connect(&m_storage, &storage::StorageController::storyUpdated, this,
            [this](quint64 request, qint64) {
                if (m_requests.remove(request))
                    refresh();
            });
    connect(&m_storage, &storage::StorageController::failed, this,
            [this](quint64 request, const storage::StorageError& error) {
                if (request == m_listRequest) {
                    Q_EMIT storageFailed(tr("The list of stories could not be read"), error);
                    return;
                }
                const auto it = m_requests.find(request);
                if (it == m_requests.end())
                    return;
                const QString what = it.value();
                m_requests.erase(it);
                Q_EMIT storageFailed(what, error);
                refresh();
            });
}

void LibraryPanel::setActions(QAction* newStory, QAction* rename, QAction* remove, QAction* undo) {
    m_new->setDefaultAction(newStory);
    m_rename->setDefaultAction(rename);
    m_delete->setDefaultAction(remove);
    m_undo->setDefaultAction(undo);
    // Delete and F2 act on the list when it has the focus.
    m_list->addAction(remove);
    m_list->addAction(rename);
}

void LibraryPanel::setUndoTimeout(int ms) {
    m_undoTimer->setInterval(ms);
}

void LibraryPanel::refresh() {
    m_listRequest = m_storage.listStories();
}

void LibraryPanel::onListed(quint64 request, const std::vector<storage::Story>& stories) {
    if (request != m_listRequest)
        return;
    m_all = stories;
    showStories();
    if (!m_search->text().isEmpty())
        runSearch(); // the texts may have changed
    Q_EMIT listed();
}

void LibraryPanel::setSearchText(const QString& text) {
    m_search->setText(text);
    m_searchTimer->stop();
    runSearch();
}

int LibraryPanel::shownCount() const {
    return m_proxy->rowCount();
}

void LibraryPanel::runSearch() {
    m_searchTimer->stop();
    const std::string text = m_search->text().toStdString();
    if (text.empty()) {
        m_proxy->setMatches(std::nullopt);
        Q_EMIT searchApplied();
        return;
    }
    m_storage.searchStories(
        text, this,
        [this, text](std::vector<int64_t> ids) {
            if (m_search->text().toStdString() != text)
                return; // a newer search is on its way
            const qint64 keep = selectedStory();
            QSet<qint64> set;
            for (int64_t id : ids)
                set.insert(id);
            {
                const QSignalBlocker block(m_list->selectionModel());
                m_proxy->setMatches(std::move(set));
            }
            if (keep)
                select(keep);
            Q_EMIT selectionChanged();
            Q_EMIT searchApplied();
        },
        [this](const storage::StorageError& error) {
            Q_EMIT storageFailed(tr("The stories could not be searched"), error);
        });
}

void LibraryPanel::duplicateSelected() {
    const qint64 id = selectedStory();
    const int row = m_model->rowOf(id);
    if (!id || row < 0)
        return;
    const std::string title =
        tr("%1 (copy)")
            .arg(QString::fromStdString(m_model->stories()[size_t(row)].title))
            .toStdString();
    m_storage.duplicateStory(
        id, title, this,
        [this](int64_t copy) {
            m_selectAfterList = copy;
            refresh();
            Q_EMIT storyCreated(copy);
        },
        [this](const storage::StorageError& error) {
            Q_EMIT storageFailed(tr("Duplicating the story"), error);
        });
}

void LibraryPanel::showStories() {
    const qint64 keep = m_selectAfterList ? m_selectAfterList : selectedStory();
    m_selectAfterList = 0;
    std::vector<storage::Story> shown;
    for (const auto& s : m_all)
        if (!m_pending || s.id != m_pending->id)
            shown.push_back(s);
    m_empty->setVisible(shown.empty());
    {
        const QSignalBlocker block(m_list->selectionModel());
        m_model->setStories(std::move(shown));
    }
    if (keep)
        select(keep);
    Q_EMIT selectionChanged();
}

void LibraryPanel::createStory(const storage::Story& story, const std::string& text) {
    m_requests.insert(m_storage.createStory(story, text), tr("Creating the story"));
}

void LibraryPanel::select(qint64 storyId) {
    const int row = m_model->rowOf(storyId);
    if (row < 0)
        return;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row));
    if (!index.isValid())
        return; // filtered out by the search
    m_list->setCurrentIndex(index);
}

qint64 LibraryPanel::selectedStory() const {
    const QModelIndex current = m_list->currentIndex();
    return current.isValid() ? current.data(StoryListModel::IdRole).toLongLong() : 0;
}

void LibraryPanel::renameSelected() {
    const QModelIndex current = m_list->currentIndex();
    if (current.isValid())
        m_list->edit(current);
}

void LibraryPanel::deleteSelected() {
    const qint64 id = selectedStory();
    if (!id)
        return;
    commitPendingDelete();
    const int row = m_model->rowOf(id);
    if (row < 0)
        return;
    m_pending = m_model->stories()[size_t(row)];
    Q_EMIT storyRemoved(id);
    showStories();
    m_list->clearSelection();
    m_list->setCurrentIndex({});
    const QString title = QString::fromStdString(m_pending->title);
    // Cut once, at the end (an untitled story's title may already end in "…").
    m_undoLabel->setText(
        tr("“%1” deleted.")
            .arg(QFontMetrics(m_undoLabel->font()).elidedText(title, Qt::ElideRight, 200)));
    m_undoBar->show();
    m_undoTimer->start();
    Q_EMIT pendingDeleteChanged(true);
}

void LibraryPanel::undoDelete() {
    if (!m_pending)
        return;
    const qint64 id = m_pending->id;
    m_pending.reset();
    hideUndo();
    m_selectAfterList = id;
    showStories();
    Q_EMIT pendingDeleteChanged(false);
}

void LibraryPanel::commitPendingDelete() {
    if (!m_pending)
        return;
    const qint64 id = m_pending->id;
    m_requests.insert(m_storage.deleteStory(id), tr("Deleting the story"));
    m_all.erase(std::remove_if(m_all.begin(), m_all.end(),
                               [id](const storage::Story& s) { return s.id == id; }),
                m_all.end());
    m_pending.reset();
    hideUndo();
    Q_EMIT pendingDeleteChanged(false);
}

void LibraryPanel::hideUndo() {
    m_undoTimer->stop();
    m_undoBar->hide();
}

} // namespace baton::ui
