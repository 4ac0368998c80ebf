// The story's tree in the manner of Loom: every branch of the story, with chains of
// passages that have no alternatives shown as one node (a segment), alternatives
// as siblings, and the current path in bold with its end marked. A click (or Enter)
// on a node makes the end of that segment the current leaf; alternative() gives
// the neighbours of the latest choice on the current path, for keys that flip
// through alternatives.
#pragma once

#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/records.h>

#include <QWidget>

#include <map>
#include <optional>
#include <vector>

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace baton::ui {

class StoryTreePanel : public QWidget {
    Q_OBJECT
public:
    explicit StoryTreePanel(storage::StorageController& storage, QWidget* parent = nullptr);

    // Reads the story's passages (all branches) and shows them, marking this path.
    void showStory(qint64 storyId, const std::vector<storage::Passage>& path);
    void clear();
    QTreeWidget* tree() const { return m_tree; }
    // Segments shown (nodes of the tree).
    int segmentCount() const { return int(m_segmentOf.size()); }
    // The leaf to switch to for the alternative `step` places after (or before, when
    // negative) the one on the current path at its deepest choice; nullopt when the
    // path has no alternatives.
    std::optional<qint64> alternative(int step) const;
    // "2 of 3" for the deepest choice on the current path ("" without one).
    QString alternativePosition() const;

Q_SIGNALS:
    void switchRequested(qint64 leafId, QString what);
    // The tree was read and shown.
    void refreshed();
    void storageFailed(QString what, baton::storage::StorageError error);

private:
    void rebuild();
    // The last passage of the segment that starts at `first`.
    qint64 segmentEnd(qint64 first) const;
    // The deepest passage on the current path whose parent has other children.
    std::optional<size_t> deepestChoice() const;
    // Its alternatives (the children of its parent) and its index among them.
    std::optional<std::pair<const std::vector<qint64>*, int>> latestChoice() const;
    void activate(QTreeWidgetItem* item);

    storage::StorageController& m_storage;
    QTreeWidget* m_tree = nullptr;
    QLabel* m_summary = nullptr;
    qint64 m_story = 0;
    std::vector<storage::Passage> m_path;
    std::vector<storage::Passage> m_all;
    std::map<qint64, std::vector<qint64>> m_children; // parent (0: roots) -> children by id
    std::map<qint64, size_t> m_index;                 // passage id -> index in m_all
    std::map<qint64, qint64> m_segmentOf;             // segment start -> its end
};

} // namespace baton::ui
