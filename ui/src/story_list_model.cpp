#include "story_list_model.h"

#include <QDateTime>
#include <QLocale>

namespace baton::ui {

QString relativeTime(qint64 msSinceEpoch) {
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(msSinceEpoch);
    const QDate today = QDate::currentDate();
    const qint64 days = t.date().daysTo(today);
    const QString time = QLocale().toString(t.time(), QLocale::ShortFormat);
    if (days == 0)
        return QObject::tr("Today %1").arg(time);
    if (days == 1)
        return QObject::tr("Yesterday %1").arg(time);
    if (days > 1 && days < 7)
        return QStringLiteral("%1 %2").arg(
            QLocale().dayName(t.date().dayOfWeek(), QLocale::ShortFormat), time);
    return QLocale().toString(t.date(), QStringLiteral("d MMM yyyy"));
}

void StoryListModel::setStories(std::vector<storage::Story> stories) {
    beginResetModel();
    m_stories = std::move(stories);
    endResetModel();
}

int StoryListModel::rowOf(qint64 storyId) const {
    for (size_t i = 0; i < m_stories.size(); ++i)
        if (m_stories[i].id == storyId)
            return int(i);
    return -1;
}

int StoryListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_stories.size());
}

QVariant StoryListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= int(m_stories.size()))
        return {};
    const storage::Story& s = m_stories[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
        return QString::fromStdString(s.title);
    case Qt::ToolTipRole:
        return tr("%1\nCreated %2, last changed %3")
            .arg(QString::fromStdString(s.title), relativeTime(s.createdAt),
                 relativeTime(s.updatedAt));
    case IdRole:
        return qint64(s.id);
    case UpdatedRole:
        return qint64(s.updatedAt);
    default:
        return {};
    }
}

bool StoryListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !index.isValid())
        return false;
    const QString title = value.toString().simplified();
    storage::Story& s = m_stories[size_t(index.row())];
    if (title.isEmpty() || title.toStdString() == s.title)
        return false;
    s.title = title.toStdString();
    Q_EMIT dataChanged(index, index);
    Q_EMIT renameRequested(s.id, title);
    return true;
}

Qt::ItemFlags StoryListModel::flags(const QModelIndex& index) const {
    if (!index.isValid())
        return QAbstractListModel::flags(index);
    return QAbstractListModel::flags(index) | Qt::ItemIsEditable;
}

} // namespace baton::ui
