#include "world_info_panel.h"

#include "panel_util.h"

#include <baton/storage/qt/storage_controller.h>
#include <baton/story/lore.h>

#include <QCheckBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include <utility>

namespace baton::ui {

namespace {

QString joinKeys(const std::vector<std::string>& keys) {
    return QString::fromStdString(story::joinKeys(keys));
}

std::vector<std::string> splitKeys(const QString& text) {
    return story::splitKeys(text.toStdString());
}

QString itemText(const storage::LoreEntry& e) {
    QString content = QString::fromStdString(e.content).simplified();
    if (content.size() > 60)
        content = content.left(59) + QChar(0x2026);
    return joinKeys(e.keys) + QStringLiteral(" \u2014 ") +
           (content.isEmpty() ? QObject::tr("(no content yet)") : content);
}

} // namespace

WorldInfoPanel::WorldInfoPanel(storage::StorageController& storage, QWidget* parent)
    : QWidget(parent)
    , m_storage(storage) {
    setObjectName(QStringLiteral("worldInfoPanel"));
    m_list = new QListWidget;
    m_list->setObjectName(QStringLiteral("loreList"));
    m_list->setMaximumHeight(m_list->fontMetrics().height() * 8);
    m_list->setTextElideMode(Qt::ElideMiddle); // the cost at the end stays in view
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_empty = new QLabel(tr("No world info yet. Add an entry for a character, a place or a "
                            "thing: its keys (names it goes by) and what the model should "
                            "know when one of them comes up in the story."));
    m_empty->setObjectName(QStringLiteral("loreEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setForegroundRole(QPalette::PlaceholderText);
    m_add = new QPushButton(tr("Add entry"));
    m_add->setObjectName(QStringLiteral("addLore"));
    m_remove = new QPushButton(tr("Remove"));
    m_remove->setObjectName(QStringLiteral("removeLore"));
    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(m_add);
    buttons->addWidget(m_remove);
    buttons->addStretch(1);

    m_keys = new QLineEdit;
    m_keys->setObjectName(QStringLiteral("loreKeys"));
    m_keys->setPlaceholderText(tr("Elinor, Miss Dashwood"));
    m_keys->setToolTip(tr("Comma-separated: any one of them in the recent text (whole words, "
                          "any case) makes the model read this entry."));
    m_secondary = new QLineEdit;
    m_secondary->setObjectName(QStringLiteral("loreSecondary"));
    m_secondary->setPlaceholderText(tr("optional"));
    m_secondary->setToolTip(tr("When given, one of these must occur too."));
    m_content = new QPlainTextEdit;
    m_content->setObjectName(QStringLiteral("loreContent"));
    m_content->setPlaceholderText(tr("What the model should know…"));
    m_content->setTabChangesFocus(true);
    m_content->setMaximumHeight(m_content->fontMetrics().height() * 6);
    m_enabled = new QCheckBox(tr("On"));
    m_enabled->setObjectName(QStringLiteral("loreEnabled"));
    m_order = new QSpinBox;
    m_order->setObjectName(QStringLiteral("loreOrder"));
    m_order->setRange(-1000000, 1000000);
    m_order->setToolTip(tr("Entries are placed in ascending order; when they do not all fit "
                           "the budget, the first ones go in."));
    m_depth = new QSpinBox;
    m_depth->setObjectName(QStringLiteral("loreDepth"));
    m_depth->setRange(1, 1 << 20);
    m_depth->setSuffix(tr(" tokens"));
    m_depth->setToolTip(tr("How much of the recent text is searched for the keys."));
    m_problem = new QLabel;
    m_problem->setObjectName(QStringLiteral("loreProblem"));
    m_problem->setWordWrap(true);
    m_cost = new QLabel;
    m_cost->setObjectName(QStringLiteral("loreCost"));
    m_cost->setWordWrap(true);
    m_budget = new QLabel;
    m_budget->setObjectName(QStringLiteral("loreBudget"));
    m_budget->setWordWrap(true);
    m_budget->setForegroundRole(QPalette::PlaceholderText);

    m_form = new QWidget;
    auto* form = new QFormLayout(m_form);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Keys"), m_keys);
    form->addRow(tr("Also needs"), m_secondary);
    form->addRow(tr("Content"), m_content);
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_enabled);
    row->addStretch(1);
    form->addRow(QString(), row);
    form->addRow(tr("Order"), m_order);
    form->addRow(tr("Scan depth"), m_depth);
    form->addRow(m_cost);
    form->addRow(m_problem);

    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(10, 8, 10, 8);
    l->addWidget(sectionTitle(tr("World info")));
    l->addWidget(m_empty);
    l->addWidget(m_list, 1);
    l->addWidget(m_budget);
    l->addLayout(buttons);
    l->addWidget(m_form, 2);

    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    m_timer->setInterval(700);
    connect(m_timer, &QTimer::timeout, this, &WorldInfoPanel::save);
    connect(m_list, &QListWidget::currentRowChanged, this, [this] {
        flush();
        showSelected();
    });
    connect(m_list, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
        const int row = m_list->row(item);
        if (m_loading || row < 0 || size_t(row) >= m_entries.size())
            return;
        const bool on = item->checkState() == Qt::Checked;
        if (m_entries[size_t(row)].enabled == on)
            return;
        m_entries[size_t(row)].enabled = on;
        m_dirty.insert(m_entries[size_t(row)].id);
        if (row == selectedRow())
            showSelected();
        m_timer->start();
    });
    for (auto* e : {m_keys, m_secondary})
        connect(e, &QLineEdit::textEdited, this, &WorldInfoPanel::onEdited);
    connect(m_content, &QPlainTextEdit::textChanged, this, &WorldInfoPanel::onEdited);
    connect(m_enabled, &QCheckBox::toggled, this, &WorldInfoPanel::onEdited);
    for (auto* s : {m_order, m_depth})
        connect(s, &QSpinBox::valueChanged, this, &WorldInfoPanel::onEdited);
    connect(m_add, &QPushButton::clicked, this, &WorldInfoPanel::addEntry);
    connect(m_remove, &QPushButton::clicked, this, &WorldInfoPanel::removeSelected);
    updateEnabled();
}

void WorldInfoPanel::setStory(qint64 storyId) {
    flush();
    m_story = storyId;
    m_entries.clear();
    reload(0);
}

int WorldInfoPanel::selectedRow() const {
    const int row = m_list->currentRow();
    return row >= 0 && size_t(row) < m_entries.size() ? row : -1;
}

void WorldInfoPanel::reload(qint64 select) {
    if (m_story == 0) {
        m_loading = true;
        m_list->clear();
        m_loading = false;
        showSelected();
        updateEnabled();
        return;
    }
    const qint64 story = m_story;
    m_storage.listLore(
        story, this,
        [this, story, select](std::vector<storage::LoreEntry> entries) {
            if (story != m_story)
                return;
            m_entries = std::move(entries);
            m_loading = true;
            m_list->clear();
            int row = m_entries.empty() ? -1 : 0;
            for (size_t i = 0; i < m_entries.size(); ++i) {
                auto* item = new QListWidgetItem(entryText(i));
                item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
                item->setCheckState(m_entries[i].enabled ? Qt::Checked : Qt::Unchecked);
                m_list->addItem(item);
                if (m_entries[i].id == select)
                    row = int(i);
            }
            m_list->setCurrentRow(row);
            m_loading = false;
            showSelected();
            updateEnabled();
            if (std::exchange(m_focusKeys, false) && row >= 0) {
                m_keys->setFocus();
                m_keys->selectAll();
            }
        },
        [this](const storage::StorageError& e) {
            Q_EMIT failed(tr("The world info could not be read"), describeStorageError(e));
        });
}

void WorldInfoPanel::showSelected() {
    const int row = selectedRow();
    m_loading = true;
    if (row < 0) {
        m_keys->clear();
        m_secondary->clear();
        m_content->clear();
        m_enabled->setChecked(false);
        m_order->setValue(100);
        m_depth->setValue(256);
    } else {
        const storage::LoreEntry& e = m_entries[size_t(row)];
        m_keys->setText(joinKeys(e.keys));
        m_secondary->setText(joinKeys(e.secondaryKeys));
        m_content->setPlainText(QString::fromStdString(e.content));
        m_enabled->setChecked(e.enabled);
        m_order->setValue(e.order);
        m_depth->setValue(e.scanDepth);
    }
    m_problem->clear();
    m_loading = false;
    showCost();
    updateEnabled();
}

QString WorldInfoPanel::entryText(size_t row) const {
    const storage::LoreEntry& e = m_entries[row];
    QString text = itemText(e);
    const auto cost = m_costs.find(e.id);
    if (cost != m_costs.end()) {
        text += cost->second.tokens == 1 ? tr(" \u00b7 1 token")
                                         : tr(" \u00b7 %1 tokens").arg(cost->second.tokens);
        // Seen even on the selected row: whether the next window reads it.
        switch (cost->second.state) {
        case story::LoreState::Read:
            text = tr("\u2713 read: ") + text;
            break;
        case story::LoreState::NoRoom:
            text = tr("\u26a0 no room: ") + text;
            break;
        case story::LoreState::TooLong:
            text = tr("\u26a0 never fits: ") + text;
            break;
        case story::LoreState::NoKey:
        case story::LoreState::NoSecondKey:
            break;
        }
    }
    return text;
}

QString WorldInfoPanel::stateText(const story::LoreCost& cost) const {
    const QString key = QString::fromStdString(cost.key).toHtmlEscaped();
    switch (cost.state) {
    case story::LoreState::Read:
        return tr("<b>Read in the next window</b> (%1 tokens of the %2 all entries share): "
                  "\u201c%3\u201d is in the last %4 tokens of the story.")
            .arg(cost.tokens)
            .arg(m_budgetTokens)
            .arg(key)
            .arg(cost.scanDepth);
    case story::LoreState::NoKey:
        return tr("Not read now: none of its keys is in the last %1 tokens of the story (its "
                  "scan depth). It is read again as soon as one is. %2 tokens of the %3 all "
                  "entries share, when it fires.")
            .arg(cost.scanDepth)
            .arg(cost.tokens)
            .arg(m_budgetTokens);
    case story::LoreState::NoSecondKey:
        return tr("Not read now: \u201c%1\u201d is in the last %2 tokens, but none of its "
                  "secondary keys is.")
            .arg(key)
            .arg(cost.scanDepth);
    case story::LoreState::NoRoom:
        return tr("<b>Not read now: no room.</b> \u201c%1\u201d fired it, but the entries "
                  "before it took the world-info budget of %2 tokens, and it needs %3. Raise "
                  "the budget (Generation > Context > World info), shorten the entries, or "
                  "give this one a lower order.")
            .arg(key)
            .arg(m_budgetTokens)
            .arg(cost.tokens);
    case story::LoreState::TooLong:
        return tr("<b>%1 tokens: longer than the world-info budget of %2, so it can never be "
                  "read.</b> Shorten it, or raise the budget (Generation > Context > World "
                  "info) or the window.")
            .arg(cost.tokens)
            .arg(m_budgetTokens);
    }
    return {};
}

void WorldInfoPanel::setCosts(const std::vector<story::LoreCost>& costs, int budget) {
    m_costs.clear();
    for (const auto& c : costs)
        m_costs[c.id] = c;
    m_budgetTokens = budget;
    m_loading = true;
    for (size_t i = 0; i < m_entries.size(); ++i)
        if (QListWidgetItem* item = m_list->item(int(i))) {
            item->setText(entryText(i));
            const auto cost = m_costs.find(m_entries[i].id);
            const bool left =
                cost != m_costs.end() && (cost->second.state == story::LoreState::TooLong ||
                                          cost->second.state == story::LoreState::NoRoom);
            item->setForeground(left ? QBrush(QColor(0xb0, 0x3a, 0x2e)) : QBrush());
            item->setToolTip(cost != m_costs.end() ? stateText(cost->second) : QString());
        }
    m_loading = false;
    m_budget->setText(budget < 0 ? QString()
                                 : tr("All entries that fire share %1 tokens of every "
                                      "window (Generation > Context > World info).")
                                       .arg(budget));
    m_budget->setVisible(budget >= 0 && !m_entries.empty());
    showCost();
}

void WorldInfoPanel::showCost() {
    const int row = selectedRow();
    const auto cost = row >= 0 ? m_costs.find(m_entries[size_t(row)].id) : m_costs.end();
    if (cost == m_costs.end())
        m_cost->clear();
    else
        m_cost->setText(stateText(cost->second));
    m_cost->setVisible(!m_cost->text().isEmpty());
}

void WorldInfoPanel::updateEnabled() {
    const bool selected = selectedRow() >= 0;
    m_form->setEnabled(selected);
    m_remove->setEnabled(selected);
    m_add->setEnabled(m_story != 0);
    m_empty->setVisible(m_story != 0 && m_entries.empty());
    m_list->setVisible(!m_entries.empty());
    m_budget->setVisible(m_budgetTokens >= 0 && !m_entries.empty());
}

void WorldInfoPanel::onEdited() {
    const int row = selectedRow();
    if (m_loading || row < 0)
        return;
    storage::LoreEntry& e = m_entries[size_t(row)];
    e.keys = splitKeys(m_keys->text());
    e.secondaryKeys = splitKeys(m_secondary->text());
    e.content = m_content->toPlainText().toStdString();
    e.enabled = m_enabled->isChecked();
    m_reorder = m_reorder || e.order != m_order->value();
    e.scanDepth = m_depth->value();
    e.order = m_order->value();
    m_dirty.insert(e.id);
    m_problem->setText(e.keys.empty() ? tr("An entry needs at least one key; it is saved once "
                                           "it has one.")
                                      : QString());
    if (QListWidgetItem* item = m_list->item(row)) {
        m_loading = true;
        item->setText(entryText(size_t(row)));
        item->setCheckState(e.enabled ? Qt::Checked : Qt::Unchecked);
        m_loading = false;
    }
    m_timer->start();
}

void WorldInfoPanel::flush() {
    if (m_timer->isActive()) {
        m_timer->stop();
        save();
    }
}

void WorldInfoPanel::save() {
    const std::set<qint64> dirty = std::exchange(m_dirty, {});
    const bool reorder = std::exchange(m_reorder, false);
    const int row = selectedRow();
    const qint64 selected = row >= 0 ? m_entries[size_t(row)].id : 0;
    for (const storage::LoreEntry& e : m_entries) {
        if (!dirty.count(e.id))
            continue;
        if (e.keys.empty()) {
            m_dirty.insert(e.id); // saved once it has a key (the form says so)
            continue;
        }
        m_storage.saveLore(
            e, this, [this](int64_t) { Q_EMIT loreChanged(); },
            [this](const storage::StorageError& err) {
                Q_EMIT failed(tr("The world-info entry could not be saved"),
                              describeStorageError(err));
            });
    }
    if (reorder) // the list follows the new order
        reload(selected);
}

void WorldInfoPanel::addEntry() {
    if (m_story == 0)
        return;
    flush();
    storage::LoreEntry e;
    e.storyId = m_story;
    e.keys = {tr("new key").toStdString()};
    m_storage.saveLore(
        e, this,
        [this](int64_t id) {
            m_focusKeys = true; // once the list shows it
            reload(id);
            Q_EMIT loreChanged();
        },
        [this](const storage::StorageError& err) {
            Q_EMIT failed(tr("The world-info entry could not be added"), describeStorageError(err));
        });
}

void WorldInfoPanel::removeSelected() {
    const int row = selectedRow();
    if (row < 0)
        return;
    m_timer->stop();
    const qint64 id = m_entries[size_t(row)].id;
    m_storage.removeLore(
        id, this,
        [this](bool) {
            reload(0);
            Q_EMIT loreChanged();
        },
        [this](const storage::StorageError& err) {
            Q_EMIT failed(tr("The world-info entry could not be removed"),
                          describeStorageError(err));
        });
}

} // namespace baton::ui
