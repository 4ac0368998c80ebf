// The UI's item models under QAbstractItemModelTester (every change checked against
// the model contract as it happens): the library's StoryListModel through resets,
// in-place renames and refused edits; its roles and rowOf.
#include "story_list_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using baton::storage::Story;
using baton::ui::StoryListModel;

namespace {

Story story(int64_t id, const char* title, int64_t updated) {
    Story s;
    s.id = id;
    s.title = title;
    s.createdAt = updated - 1000;
    s.updatedAt = updated;
    return s;
}

} // namespace

class TestItemModels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void storyListKeepsTheModelContract() {
        StoryListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setStories(
            {story(3, "Harbour", 3000), story(1, "Orchard", 2000), story(2, "Lighthouse", 1000)});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.rowCount(model.index(0, 0)), 0); // a list: no children
        QCOMPARE(model.index(1, 0).data().toString(), QStringLiteral("Orchard"));
        QCOMPARE(model.index(1, 0).data(Qt::EditRole).toString(), QStringLiteral("Orchard"));
        QCOMPARE(model.index(1, 0).data(StoryListModel::IdRole).toLongLong(), qint64(1));
        QCOMPARE(model.index(0, 0).data(StoryListModel::UpdatedRole).toLongLong(), qint64(3000));
        QVERIFY(model.index(2, 0).data(Qt::ToolTipRole).toString().contains("Lighthouse"));
        QVERIFY(!model.index(5, 0).isValid());
        QCOMPARE(model.rowOf(2), 2);
        QCOMPARE(model.rowOf(99), -1);
        QVERIFY(model.flags(model.index(0, 0)) & Qt::ItemIsEditable);

        // A rename: the title changes in place and the request goes out once.
        QSignalSpy renamed(&model, &StoryListModel::renameRequested);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QVERIFY(model.setData(model.index(1, 0), QStringLiteral("  The   Orchard "), Qt::EditRole));
        QCOMPARE(model.index(1, 0).data().toString(), QStringLiteral("The Orchard"));
        QCOMPARE(renamed.size(), 1);
        QCOMPARE(renamed[0][0].toLongLong(), qint64(1));
        QCOMPARE(renamed[0][1].toString(), QStringLiteral("The Orchard"));
        QCOMPARE(changed.size(), 1);
        // Refused: empty, unchanged, another role.
        QVERIFY(!model.setData(model.index(1, 0), QStringLiteral("   "), Qt::EditRole));
        QVERIFY(!model.setData(model.index(1, 0), QStringLiteral("The Orchard"), Qt::EditRole));
        QVERIFY(!model.setData(model.index(1, 0), QStringLiteral("x"), Qt::DisplayRole));
        QVERIFY(!model.setData(QModelIndex(), QStringLiteral("x"), Qt::EditRole));
        QCOMPARE(renamed.size(), 1);

        // Shrinking and emptying resets.
        model.setStories({story(2, "Lighthouse", 1000)});
        QCOMPARE(model.rowCount(), 1);
        model.setStories({});
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!model.index(0, 0).data().isValid());
    }
};

QTEST_MAIN(TestItemModels)
#include "tst_item_models.moc"
