// Library shards (engine/books.h): tar archives of works, plain or xz-compressed, read
// one work at a time; long names through pax headers; every kind of damage refused
// with the reason; the library in ../shared read as it ships.
#include "tar_fixture.h"
#include "test_support.h"
#include "verify_ok.h"

#include <baton/engine/books.h>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <string>
#include <vector>

using namespace baton::engine;
namespace tar = baton::test::tar;

class TestLibrary : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;

    std::string write(const QString& name, const std::string& bytes) {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) ||
            f.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size()))
            return {};
        return path.toStdString();
    }

    static Result<std::vector<Book>> readAll(const std::string& path,
                                             const CancelToken& cancel = {}) {
        std::vector<Book> books;
        auto r = readLibraryShard(
            path,
            [&](Book&& b) {
                books.push_back(std::move(b));
                return true;
            },
            cancel);
        if (!r)
            return r.error();
        return books;
    }

    void refused(const QString& name, const std::string& bytes, ErrorCode code, const char* words) {
        const auto path = write(name, bytes);
        QVERIFY(!path.empty());
        const auto r = readAll(path);
        QVERIFY(!r.ok());
        QCOMPARE(int(r.error().code), int(code));
        QVERIFY2(QString::fromStdString(r.error().message).contains(words),
                 r.error().message.c_str());
    }

    const std::string m_longName = "works/" + std::string(120, 'n') + " - A Long Title.txt";

    std::vector<tar::Member> members() const {
        return {{"works/", "", '5'},
                {"works/First.txt", "It was a dark night.\nThe end.\n"},
                {"works/cover.png", "\x89PNG not text"},
                {m_longName, "Second work, named at length.\n"},
                {"works/Third.md", "# Chapter 1\nA heading and a line.\n"}};
    }

private Q_SLOTS:
    void readsWorksInArchiveOrder() {
        for (const int kind : {0, 1, 2}) { // xz with pax names, plain, plain with GNU names
            const bool compressed = kind == 0;
            const std::string plain = tar::archive(members(), false, kind == 2);
            const QString name = compressed ? "shard.tar.xz" : QString("shard%1.tar").arg(kind);
            const auto path = write(name, compressed ? tar::xz(plain) : plain);
            QVERIFY(isLibraryShard(path));
            const auto books = readAll(path);
            BATON_VERIFY_OK(books);
            QCOMPARE(books->size(), size_t(3)); // the folder and the picture skipped
            const std::string prefix = name.toStdString() + "/";
            QCOMPARE(QString::fromStdString((*books)[0].title),
                     QString::fromStdString(prefix + "works/First.txt"));
            QCOMPARE(QString::fromStdString((*books)[0].text),
                     QString("It was a dark night.\nThe end.\n"));
            QCOMPARE(QString::fromStdString((*books)[1].title),
                     QString::fromStdString(prefix + m_longName));
            QCOMPARE(QString::fromStdString((*books)[2].text),
                     QString("# Chapter 1\nA heading and a line.\n"));
        }
        QVERIFY(!isLibraryShard("book.txt"));
        QVERIFY(isLibraryShard("LIBRARY-01.TAR.XZ"));
    }

    void stopsWhenAsked() {
        const auto path = write("stop.tar.xz", tar::xz(tar::archive(members())));
        int seen = 0;
        auto r = readLibraryShard(path, [&](Book&&) { return ++seen < 2; });
        BATON_VERIFY_OK(r);
        QCOMPARE(seen, 2);
        CancelToken cancel;
        cancel.cancel();
        const auto cancelled = readAll(path, cancel);
        QVERIFY(!cancelled.ok());
        QCOMPARE(int(cancelled.error().code), int(ErrorCode::Cancelled));
    }

    void refusesDamage() {
        const std::string plain = tar::archive(members());
        const std::string packed = tar::xz(plain);
        refused("cut.tar.xz", packed.substr(0, packed.size() / 2), ErrorCode::BookInvalid,
                "truncated");
        std::string flipped = packed;
        flipped[flipped.size() / 2] = char(flipped[flipped.size() / 2] ^ 0x40);
        refused("flipped.tar.xz", flipped, ErrorCode::BookInvalid, "flipped.tar.xz");
        std::string badSum = plain;
        badSum[512 + 3] = 'X'; // the name of the first file, after the folder's header
        refused("checksum.tar", badSum, ErrorCode::BookInvalid, "checksum");
        refused("unterminated.tar", tar::archive(members(), true), ErrorCode::BookInvalid,
                "truncated");
        // A header that claims more than the archive holds.
        refused("lying.tar", tar::archive({{"a.txt", "short", '0', 100000}}),
                ErrorCode::BookInvalid, "truncated");
        // One that claims more than a work may be is refused before anything is read.
        refused("huge.tar", tar::archive({{"a.txt", "", '0', int64_t(300) << 20}}, true),
                ErrorCode::BookInvalid, "over the limit");
        refused("notatar.tar", std::string(2000, 'x'), ErrorCode::BookInvalid, "checksum");
        refused("tiny.tar", "x", ErrorCode::BookInvalid, "neither a tar archive");
        refused("latin1.tar", tar::archive({{"w/caf\xe9.txt", "caf\xe9 au lait"}}),
                ErrorCode::InvalidUtf8, "latin1.tar/w/caf");
        const auto missing = readAll(m_tmp.filePath("nope.tar.xz").toStdString());
        QVERIFY(!missing.ok());
        QCOMPARE(int(missing.error().code), int(ErrorCode::FileNotFound));
    }

    // The first shard of the library as it ships: its first works in MANIFEST.tsv's order
    // and sizes.
    void readsTheLibraryAsItShips() {
        const QString shard = baton::test::sharedPath("corpus/library/library-01.tar.xz");
        QFile manifest(baton::test::sharedPath("corpus/library/MANIFEST.tsv"));
        if (!QFile::exists(shard) || !manifest.open(QIODevice::ReadOnly))
            QFAIL(qPrintable(baton::test::missingMessage(shard)));
        manifest.readLine(); // the column names
        std::vector<Book> books;
        auto r = readLibraryShard(shard.toStdString(), [&](Book&& b) {
            books.push_back(std::move(b));
            return books.size() < 3;
        });
        BATON_VERIFY_OK(r);
        QCOMPARE(books.size(), size_t(3));
        for (const auto& b : books) {
            const QStringList fields = QString::fromUtf8(manifest.readLine()).trimmed().split('\t');
            QCOMPARE(fields.value(0), QString("library-01.tar.xz"));
            QCOMPARE(QString::fromStdString(b.title), "library-01.tar.xz/" + fields.value(1));
            QCOMPARE(qint64(b.text.size()), fields.value(2).toLongLong());
        }
    }
};

QTEST_GUILESS_MAIN(TestLibrary)
#include "tst_library.moc"
