// A story's world info (a dock): its entries in the order they are placed, each with
// what it costs of the window (a warning on one that can never fit the budget), and the
// selected one's keys, secondary keys, content, on/off, order and scan depth. The
// model reads an entry just before it continues when one of its keys occurs in the
// recent text (story/lore.h). Edits are saved after a pause in typing, through the
// storage thread; loreChanged() follows each save.
#pragma once

#include "error_text.h"

#include <baton/storage/records.h>
#include <baton/story/context.h>

#include <QWidget>

#include <map>
#include <set>
#include <vector>

class QCheckBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTimer;

namespace baton::storage {
class StorageController;
}

namespace baton::ui {

class WorldInfoPanel : public QWidget {
    Q_OBJECT
public:
    explicit WorldInfoPanel(storage::StorageController& storage, QWidget* parent = nullptr);

    // Shows a story's entries (0: none).
    void setStory(qint64 storyId);
    // Saves a pending edit now.
    void flush();
    const std::vector<storage::LoreEntry>& entries() const { return m_entries; }
    void addEntry();
    void removeSelected();
    // What the entries cost (the context view's): their tokens against the budget, and
    // whether the next window reads each (and if not, why).
    void setCosts(const std::vector<story::LoreCost>& costs, int budget);
    // The list's text of an entry, its cost and whether it is read included
    // ("✓ read: Elinor — … · 38 tokens").
    QString entryText(size_t row) const;
    // Why an entry is or is not read in the next window, in a sentence.
    QString stateText(const story::LoreCost& cost) const;

Q_SIGNALS:
    void loreChanged();
    void failed(QString what, baton::ui::ErrorText error);

private:
    void reload(qint64 select);
    void showSelected();
    void onEdited();
    void save();
    int selectedRow() const;
    void updateEnabled();
    void showCost();

    storage::StorageController& m_storage;
    qint64 m_story = 0;
    std::vector<storage::LoreEntry> m_entries;
    QListWidget* m_list;
    QLabel* m_empty;
    QLineEdit* m_keys;
    QLineEdit* m_secondary;
    QPlainTextEdit* m_content;
    QCheckBox* m_enabled;
    QSpinBox* m_order;
    QSpinBox* m_depth;
    QLabel* m_problem;
    QLabel* m_cost;
    QLabel* m_budget;
    QPushButton* m_add;
    QPushButton* m_remove;
    QWidget* m_form;
    QTimer* m_timer;
    std::set<qint64> m_dirty; // entries edited since the last save
    std::map<qint64, story::LoreCost> m_costs;
    int m_budgetTokens = -1; // -1: not known yet
    bool m_reorder = false;
    bool m_focusKeys = false; // an added entry: its keys get the focus once listed   // an order
                              // changed: the list is read again after the save
    bool m_loading = false;
};

} // namespace baton::ui
