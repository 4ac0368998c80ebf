#include "story_tree_panel.h"

#include "panel_util.h"
#include "story_editor.h"

#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <set>

namespace baton::ui {

namespace {

constexpr int kEndRole = Qt::UserRole;
constexpr int kStartRole = Qt::UserRole + 1;

QString snippet(const QString& text, int chars) {
    QString s = text.simplified();
    if (s.size() > chars)
        s = s.left(chars - 1).trimmed() + QChar(0x2026);
    return s.isEmpty() ? StoryTreePanel::tr("(empty)") : s;
}

} // namespace

StoryTreePanel::StoryTreePanel(storage::StorageController& storage, QWidget* parent)
    : QWidget(parent)
    , m_storage(storage) {
    setObjectName(QStringLiteral("storyTreePanel"));
    m_tree = new QTreeWidget;
    m_tree->setObjectName(QStringLiteral("storyTree"));
    m_tree->setHeaderHidden(true);
    m_tree->setColumnCount(1);
    m_tree->setUniformRowHeights(true);
    m_tree->setExpandsOnDoubleClick(false);
    m_tree->setToolTip(tr("Every branch of the story. Click a passage to continue from it; "
                          "Alt+Left and Alt+Right flip through the alternatives of the latest "
                          "choice."));
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("storyTreeSummary"));
    m_summary->setWordWrap(true);
    m_summary->setForegroundRole(QPalette::PlaceholderText);
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(6, 6, 6, 6);
    l->addWidget(m_tree, 1);
    l->addWidget(m_summary);
    connect(m_tree, &QTreeWidget::itemClicked, this,
            [this](QTreeWidgetItem* item) { activate(item); });
    connect(m_tree, &QTreeWidget::itemActivated, this,
            [this](QTreeWidgetItem* item) { activate(item); });
    clear();
}

void StoryTreePanel::clear() {
    m_story = 0;
    m_path.clear();
    m_all.clear();
    m_children.clear();
    m_index.clear();
    m_segmentOf.clear();
    m_tree->clear();
    m_summary->setText(tr("No story is open."));
}

void StoryTreePanel::showStory(qint64 storyId, const std::vector<storage::Passage>& path) {
    m_story = storyId;
    m_path = path;
    m_storage.allPassages(
        storyId, this,
        [this, storyId](std::vector<storage::Passage> all) {
            if (storyId != m_story)
                return;
            m_all = std::move(all);
            rebuild();
            Q_EMIT refreshed();
        },
        [this](const storage::StorageError& error) {
            Q_EMIT storageFailed(tr("The story's branches could not be read"), error);
        });
}

qint64 StoryTreePanel::segmentEnd(qint64 first) const {
    qint64 id = first;
    for (;;) {
        const auto it = m_children.find(id);
        if (it == m_children.end() || it->second.size() != 1)
            return id;
        id = it->second.front();
    }
}

void StoryTreePanel::rebuild() {
    m_children.clear();
    m_index.clear();
    m_segmentOf.clear();
    for (size_t i = 0; i < m_all.size(); ++i) {
        m_index[m_all[i].id] = i;
        m_children[m_all[i].parentId].push_back(m_all[i].id); // by id: creation order
    }
    std::set<qint64> onPath;
    for (const auto& p : m_path)
        onPath.insert(p.id);
    const qint64 leaf = m_path.empty() ? 0 : m_path.back().id;

    m_tree->clear();
    QTreeWidgetItem* current = nullptr;
    QFont bold = m_tree->font();
    bold.setBold(true);
    const QColor userColor(0x1d, 0x1b, 0x18), modelColor(0x2f, 0x4b, 0x6e);
    // Segments, depth first; an explicit stack keeps deep stories off the call stack.
    struct Pending {
        qint64 first;
        QTreeWidgetItem* parent;
    };
    std::vector<Pending> stack;
    const auto roots = m_children.find(0);
    if (roots != m_children.end())
        for (auto it = roots->second.rbegin(); it != roots->second.rend(); ++it)
            stack.push_back({*it, nullptr});
    while (!stack.empty()) {
        const Pending next = stack.back();
        stack.pop_back();
        // The segment's passages.
        QString text;
        bool containsPath = false, containsLeaf = false;
        qint64 id = next.first;
        for (;;) {
            const storage::Passage& p = m_all[m_index.at(id)];
            text += toDisplayText(p.text);
            containsPath = containsPath || onPath.count(id);
            containsLeaf = containsLeaf || id == leaf;
            const auto it = m_children.find(id);
            if (it == m_children.end() || it->second.size() != 1)
                break;
            id = it->second.front();
        }
        const qint64 end = id;
        m_segmentOf[next.first] = end;
        auto* item = next.parent ? new QTreeWidgetItem(next.parent) : new QTreeWidgetItem(m_tree);
        const storage::Passage& first = m_all[m_index.at(next.first)];
        item->setText(0,
                      (containsLeaf ? QStringLiteral("\u25B8 ") : QString()) + snippet(text, 60));
        const int words =
            int(text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts).size());
        item->setToolTip(0, tr("%1\n\n%2").arg(snippet(text, 600), countText(words, tr("1 word"), tr("%1 words"))));
        item->setData(0, kEndRole, qint64(end));
        item->setData(0, kStartRole, qint64(next.first));
        item->setForeground(0,
                            first.author == storage::PassageAuthor::Model ? modelColor : userColor);
        if (containsPath)
            item->setFont(0, bold);
        if (containsLeaf)
            current = item;
        const auto kids = m_children.find(end);
        if (kids != m_children.end())
            for (auto it = kids->second.rbegin(); it != kids->second.rend(); ++it)
                stack.push_back({*it, item});
    }
    m_tree->expandAll();
    if (current) {
        m_tree->setCurrentItem(current);
        m_tree->scrollToItem(current);
    }
    const QString position = alternativePosition();
    QString branchText;
    for (const auto& p : m_path)
        branchText += toDisplayText(p.text);
    const int words = int(
        branchText.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts).size());
    int branches = 0; // the tree's leaves
    for (const auto& p : m_all)
        branches += m_children.count(p.id) ? 0 : 1;
    m_summary->setText(
        m_all.empty()
            ? tr("The story is empty.")
            : tr("%1 on this branch; %2.%3")
                  .arg(countText(words, tr("1 word"), tr("%1 words")))
                  .arg(branches == 1 ? tr("no other branch") : tr("%1 branches").arg(branches))
                  .arg(position.isEmpty() ? QString()
                                          : tr(" Latest choice: alternative %1.").arg(position)));
}

std::optional<size_t> StoryTreePanel::deepestChoice() const {
    for (size_t i = m_path.size(); i-- > 0;) {
        const auto it = m_children.find(m_path[i].parentId);
        if (it != m_children.end() && it->second.size() > 1)
            return i;
    }
    return std::nullopt;
}

std::optional<std::pair<const std::vector<qint64>*, int>> StoryTreePanel::latestChoice() const {
    const auto choice = deepestChoice();
    if (!choice)
        return std::nullopt;
    const auto& siblings = m_children.at(m_path[*choice].parentId);
    int at = 0;
    while (at < int(siblings.size()) && siblings[size_t(at)] != m_path[*choice].id)
        ++at;
    return std::pair{&siblings, at};
}

std::optional<qint64> StoryTreePanel::alternative(int step) const {
    const auto choice = latestChoice();
    if (!choice)
        return std::nullopt;
    const auto& [siblings, at] = *choice;
    const int n = int(siblings->size());
    return segmentEnd((*siblings)[size_t(((at + step) % n + n) % n)]);
}

QString StoryTreePanel::alternativePosition() const {
    const auto choice = latestChoice();
    if (!choice)
        return {};
    return tr("%1 of %2").arg(choice->second + 1).arg(choice->first->size());
}

void StoryTreePanel::activate(QTreeWidgetItem* item) {
    if (!item)
        return;
    const qint64 end = item->data(0, kEndRole).toLongLong();
    Q_EMIT switchRequested(end, tr("switch to another branch"));
}

} // namespace baton::ui
