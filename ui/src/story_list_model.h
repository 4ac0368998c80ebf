// The library's list: a snapshot of the stories (most recently updated first, as
// the storage lists them). Titles are edited in place (rename).
#pragma once

#include <baton/storage/records.h>

#include <QAbstractListModel>

#include <vector>

namespace baton::ui {

class StoryListModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role { IdRole = Qt::UserRole + 1, UpdatedRole };

    using QAbstractListModel::QAbstractListModel;

    void setStories(std::vector<storage::Story> stories);
    const std::vector<storage::Story>& stories() const { return m_stories; }
    int rowOf(qint64 storyId) const; // -1 when absent

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

Q_SIGNALS:
    // The user edited a title in place.
    void renameRequested(qint64 storyId, QString title);

private:
    std::vector<storage::Story> m_stories;
};

// "Today 14:05", "Yesterday 09:12", "Mon 11:00" within a week, else "12 Mar 2025".
QString relativeTime(qint64 msSinceEpoch);

} // namespace baton::ui
