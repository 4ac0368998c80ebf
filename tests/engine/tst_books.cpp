// Books (engine/books.h): EPUB files built here with libzip, read in spine order with
// their paragraphs and without markup, scripts or images; DRM and broken files refused
// with the reason; the training corpus reads EPUB beside text.
#include "test_support.h"
#include "verify_ok.h"

#include "epub_fixture.h"
#include "training/corpus.h"

#include <baton/engine/books.h>

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

using namespace baton::engine;

using namespace baton::test::epub;

class TestBooks : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    int m_files = 0;

    std::string write(const Entries& entries) {
        const std::string path =
            m_tmp.filePath(QString("book-%1.epub").arg(++m_files)).toStdString();
        return writeZip(path, entries) ? path : std::string();
    }

    void refused(const Entries& entries, ErrorCode code, const char* words) {
        const std::string path = write(entries);
        QVERIFY(!path.empty());
        const auto r = readEpub(path);
        QVERIFY(!r.ok());
        QCOMPARE(int(r.error().code), int(code));
        QVERIFY2(r.error().message.find(words) != std::string::npos, r.error().message.c_str());
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
    }

    void readsTheSpineInOrderWithoutMarkup() {
        const auto book = readEpub(write(goodBook()));
        BATON_VERIFY_OK(book);
        QCOMPARE(book->title, std::string("The Voyage of the Tern"));
        QCOMPARE(book->chapters, 2);
        QCOMPARE(book->text,
                 std::string("Chapter One\n\n"
                             "The ship was called Tern, and her\u00a0captain & crew were quiet.\n\n"
                             "\u201cHoist the sail,\u201d she said.\nNobody moved.\n\n"
                             "Chapter Two\n\n"
                             "Land \u2014 at last.\n"));
        QVERIFY(isEpubFile("a/B.EPUB") && isBookFile("x.epub") && isBookFile("x.TXT"));
        QVERIFY(!isBookFile("x.pdf"));
    }

    void fontObfuscationIsNotDrm() {
        BATON_VERIFY_OK(
            readEpub(write(with(goodBook(), "META-INF/encryption.xml", kFontObfuscation))));
    }

    void drmIsRefused() {
        refused(with(goodBook(), "META-INF/encryption.xml", kAesEncryption), ErrorCode::BookDrm,
                "DRM");
        refused(with(goodBook(), "META-INF/rights.xml", "<rights/>"), ErrorCode::BookDrm,
                "rights.xml");
    }

    void brokenFilesAreRefused() {
        const std::string notZip = m_tmp.filePath("not-a-zip.epub").toStdString();
        QVERIFY(baton::test::writeFile(QString::fromStdString(notZip), "PK\x03\x04 broken"));
        const auto r = readEpub(notZip);
        QVERIFY(!r.ok() && r.error().code == ErrorCode::BookInvalid);
        QCOMPARE(int(readEpub(m_tmp.filePath("missing.epub").toStdString()).error().code),
                 int(ErrorCode::FileNotFound));
        refused(with(goodBook(), "mimetype", "application/zip"), ErrorCode::BookInvalid,
                "not an EPUB");
        refused(without(goodBook(), "META-INF/container.xml"), ErrorCode::BookInvalid,
                "container.xml");
        refused(without(goodBook(), "OEBPS/content.opf"), ErrorCode::BookInvalid, "content.opf");
        refused(with(goodBook(), "OEBPS/content.opf", "<package><spine>"), ErrorCode::BookInvalid,
                "not well-formed");
        refused(goodBook("<itemref idref=\"ch9\"/>"), ErrorCode::BookInvalid, "ch9");
        refused(without(goodBook(), "OEBPS/text/ch1.xhtml"), ErrorCode::BookInvalid,
                "OEBPS/text/ch1.xhtml");
        refused(with(goodBook(), "OEBPS/text/ch1.xhtml", "<html><body><p>open</body></html>"),
                ErrorCode::BookInvalid, "ch1.xhtml is not well-formed");
        refused(goodBook("<itemref idref=\"nav\"/>"), ErrorCode::BookInvalid, "no text");
    }

    // The training corpus reads an EPUB in a folder beside plain text.
    void corpusReadsEpub() {
        QTemporaryDir dir;
        QVERIFY(writeZip(dir.filePath("tern.epub").toStdString(), goodBook()));
        QVERIFY(baton::test::writeFile(dir.filePath("notes.txt"), "Plain text.\n"));
        QVERIFY(baton::test::writeFile(dir.filePath("cover.jpg"), "not a book"));
        const auto docs = loadCorpus({dir.path().toStdString()}, true);
        BATON_VERIFY_OK(docs);
        QCOMPARE(docs->size(), size_t(2));
        QCOMPARE((*docs)[0].text, std::string("Plain text.\n"));
        QVERIFY((*docs)[1].text.find("Hoist the sail") != std::string::npos);
        QVERIFY((*docs)[1].text.find("<p>") == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestBooks)
#include "tst_books.moc"
