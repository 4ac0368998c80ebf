// The library: the user's stories, most recent first, searched by title and by the
// text of every passage (in the database, as you type); new, duplicate, rename (in
// place) and delete with undo. A deleted story disappears at once and is
// deleted from the database when the undo notice closes (after a while, at the next
// delete, or when the window closes), so Undo needs no copy of it.
#pragma once

#include <baton/storage/qt/storage_controller.h> // the metatypes of the signals
#include <baton/storage/records.h>

#include <QHash>
#include <QWidget>

#include <optional>

class QLabel;
class QLineEdit;
class QListView;
class QAction;
class QToolButton;
class QSortFilterProxyModel;
class QTimer;
class QFrame;

namespace baton::ui {

class StoryListModel;

class LibraryPanel : public QWidget {
    Q_OBJECT
public:
    explicit LibraryPanel(storage::StorageController& storage, QWidget* parent = nullptr);

    // The buttons under the list show these actions (the window owns them).
    void setActions(QAction* newStory, QAction* rename, QAction* remove, QAction* undo);
    // Reads the list again (the selection stays on the same story).
    void refresh();
    // Creates a story; storyCreated follows.
    // With text: its first passage (an imported book).
    void createStory(const storage::Story& story, const std::string& text = {});
    // Starts editing the selected story's title in place.
    void renameSelected();
    // Copies the selected story (tree, settings, states) and selects the copy.
    void duplicateSelected();
    // Shows only the stories whose title or text contains `text` (empty: all).
    void setSearchText(const QString& text);
    // The number of stories the search shows.
    int shownCount() const;
    // Hides the selected story and offers Undo; the delete is written later.
    void deleteSelected();
    void undoDelete();
    // Writes the pending delete now (before closing).
    void commitPendingDelete();
    bool hasPendingDelete() const { return m_pending.has_value(); }
    // Selects a story (opening it).
    void select(qint64 storyId);
    qint64 selectedStory() const;
    // How long the Undo notice stays (ms).
    void setUndoTimeout(int ms);

    StoryListModel* model() const { return m_model; }

Q_SIGNALS:
    void storyActivated(qint64 storyId);
    void storyCreated(qint64 storyId);
    // A search answered by the database has been applied to the list.
    void searchApplied();
    // The list of stories was read (again) and is shown.
    void listed();
    void storyRenamed(qint64 storyId, QString title);
    // A story is about to disappear from the list (deleted, pending undo).
    void storyRemoved(qint64 storyId);
    void pendingDeleteChanged(bool pending);
    void storageFailed(QString what, baton::storage::StorageError error);
    void selectionChanged();

private:
    void onListed(quint64 request, const std::vector<storage::Story>& stories);
    void showStories();
    void hideUndo();
    void runSearch();

    storage::StorageController& m_storage;
    StoryListModel* m_model;
    class SearchProxy;
    SearchProxy* m_proxy;
    QTimer* m_searchTimer;
    QLineEdit* m_search;
    QListView* m_list;
    QToolButton* m_new;
    QToolButton* m_rename;
    QToolButton* m_delete;
    QToolButton* m_undo;
    QFrame* m_undoBar;
    QLabel* m_undoLabel;
    QLabel* m_empty; // what to do while there is no story
    QTimer* m_undoTimer;
    std::vector<storage::Story> m_all;
    std::optional<storage::Story> m_pending; // deleted, not yet written
    qint64 m_selectAfterList = 0;
    quint64 m_listRequest = 0;
    QHash<quint64, QString> m_requests; // request -> what it does, for errors
};

} // namespace baton::ui
