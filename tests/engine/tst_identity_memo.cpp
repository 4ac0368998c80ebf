// Remembered content hashes (model/identity_memo.h): recalled only for the very files
// they were made from, never for a file changed since or changed too recently, and a
// damaged memo counts as none.
#include "test_support.h"

#include "model/identity_memo.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

using namespace baton::engine;

namespace {

const std::string kDigest = "0123456789abcdef";

// The memo files in a folder.
QStringList memos(const QString& folder) {
    return QDir(folder).entryList({"*.id"}, QDir::Files);
}

} // namespace

class TestIdentityMemo : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_a, m_b;
    QString m_memo;

private Q_SLOTS:
    void init() {
        m_a = m_dir.filePath("a.bin").toStdString();
        m_b = m_dir.filePath("b.bin").toStdString();
        baton::test::writeFile(QString::fromStdString(m_a), "first file");
        baton::test::writeFile(QString::fromStdString(m_b), "second file");
        m_memo = m_dir.filePath("memo/model-ids");
        QDir(m_memo).removeRecursively();
        setIdentityMemoFolder(m_memo.toStdString(), 0);
    }
    void cleanup() { setIdentityMemoFolder(""); }

    void nothingIsRememberedByDefault() {
        setIdentityMemoFolder("");
        QVERIFY(!identityMemoKey("recipe", {m_a}).has_value());
        QVERIFY(!recallIdentity("anything").has_value());
        rememberIdentity("anything", kDigest);
        QVERIFY(!QDir(m_memo).exists());
    }

    // Written once, recalled by the same recipe over the same files only.
    void recalledForTheSameFiles() {
        const auto key = identityMemoKey("recipe", {m_a, m_b});
        QVERIFY(key.has_value());
        QVERIFY(!recallIdentity(*key).has_value());
        rememberIdentity(*key, kDigest);
        QCOMPARE(memos(m_memo).size(), 1);
        QCOMPARE(recallIdentity(*key).value_or(""), kDigest);
        QCOMPARE(identityMemoKey("recipe", {m_a, m_b}), key);
        for (const auto& other :
             {identityMemoKey("recipe 2", {m_a, m_b}), identityMemoKey("recipe", {m_b, m_a}),
              identityMemoKey("recipe", {m_a})}) {
            QVERIFY(other.has_value());
            QVERIFY(other != key);
            QVERIFY(!recallIdentity(*other).has_value());
        }
        QVERIFY(!identityMemoKey("recipe", {m_a, m_dir.filePath("none").toStdString()}));
        QVERIFY(!identityMemoKey("recipe", {m_dir.path().toStdString()})); // a folder
    }

    // A file written in place (same size) or replaced by a rename has another key.
    void aChangedFileHasAnotherKey() {
        const auto before = identityMemoKey("recipe", {m_a});
        rememberIdentity(*before, kDigest);
        QThread::msleep(50); // past the file system clock's tick
        baton::test::writeFile(QString::fromStdString(m_a), "first flle");
        const auto written = identityMemoKey("recipe", {m_a});
        QVERIFY(written.has_value() && written != before);
        QVERIFY(!recallIdentity(*written).has_value());
        const QString other = m_dir.filePath("other.bin");
        baton::test::writeFile(other, "first flle");
        QVERIFY(std::rename(other.toUtf8().constData(), m_a.c_str()) == 0);
        const auto replaced = identityMemoKey("recipe", {m_a});
        QVERIFY(replaced.has_value() && replaced != written && replaced != before);
    }

    // With the default settling time, files written a moment ago are not remembered.
    void recentFilesAreNotRemembered() {
        setIdentityMemoFolder(m_memo.toStdString());
        QVERIFY(!identityMemoKey("recipe", {m_a}).has_value());
    }

    void aDamagedMemoIsNone_data() {
        QTest::addColumn<int>("damage");
        QTest::newRow("empty") << 0;
        QTest::newRow("cut short") << 1;
        QTest::newRow("not hexadecimal") << 2;
        QTest::newRow("another key") << 3;
        QTest::newRow("a byte more") << 4;
    }
    void aDamagedMemoIsNone() {
        QFETCH(int, damage);
        const auto key = identityMemoKey("recipe", {m_a});
        rememberIdentity(*key, kDigest);
        const QStringList files = memos(m_memo);
        QCOMPARE(files.size(), 1);
        const QString path = QDir(m_memo).filePath(files[0]);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray text = f.readAll();
        f.close();
        QCOMPARE(recallIdentity(*key).value_or(""), kDigest);
        switch (damage) {
        case 0:
            text.clear();
            break;
        case 1:
            text.chop(5);
            break;
        case 2:
            text.replace(QByteArray::fromStdString(kDigest), "0123456789abcdeg");
            break;
        case 3:
            text.replace("recipe", "recipf");
            break;
        default:
            text.append('\n');
            break;
        }
        baton::test::writeFile(path, text);
        QVERIFY(!recallIdentity(*key).has_value());
    }

    // A memo folder that cannot be made: nothing is remembered, and nothing fails.
    void anUnwritableFolderRemembersNothing() {
        const QString blocked = m_dir.filePath("blocked");
        baton::test::writeFile(blocked, "a file where the folder would be");
        setIdentityMemoFolder((blocked + "/model-ids").toStdString(), 0);
        const auto key = identityMemoKey("recipe", {m_a});
        QVERIFY(key.has_value());
        rememberIdentity(*key, kDigest);
        QVERIFY(!recallIdentity(*key).has_value());
        rememberIdentity(*key, "not a digest");
        QVERIFY(!recallIdentity(*key).has_value());
    }
};

QTEST_GUILESS_MAIN(TestIdentityMemo)
#include "tst_identity_memo.moc"
