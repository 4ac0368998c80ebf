// Token stores (training/token_store.h): a corpus of files and library shards tokenized
// into mapped pieces that hold exactly the tokenizer's ids of each cleaned document;
// read back without tokenizing again; a changed source, a damaged or truncated piece
// rebuilt (never read wrong); a failed or cancelled build resumed from the pieces it
// finished; any number of threads giving the same store.
#include "tar_fixture.h"
#include "test_support.h"
#include "verify_ok.h"

#include "training/held_out.h"
#include "training/token_store.h"

#include <baton/engine/text.h>
#include <baton/engine/tokenizer.h>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <random>
#include <string>
#include <vector>

using namespace baton::engine;
namespace tar = baton::test::tar;

class TestTokenStore : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<const Tokenizer> m_tok;
    QString m_corpus;
    int m_stores = 0;

    static bool write(const QString& path, const std::string& bytes) {
        QFile f(path);
        return f.open(QIODevice::WriteOnly) &&
               f.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size());
    }

    TokenStoreOptions options(const QString& folder, int threads = 2) const {
        TokenStoreOptions o;
        o.folder = folder.toStdString();
        o.threads = threads;
        o.pieceBytes = 1; // every file its own piece, so that pieces can be told apart
        return o;
    }

    Result<TokenizedCorpus> build(const QString& folder, TokenStoreStats* stats = nullptr,
                                  int threads = 2, const CancelToken& cancel = {}) {
        auto sources = listTokenSources({m_corpus.toStdString()});
        if (!sources)
            return sources.error();
        return buildTokenStore(*sources, *m_tok, options(folder, threads), {}, cancel, stats);
    }

    // What the store must hold: each document's text as the corpus reader cleans it,
    // encoded by the tokenizer.
    void holdsExactly(const TokenizedCorpus& c) {
        auto docs = loadCorpus({m_corpus.toStdString()});
        BATON_VERIFY_OK(docs);
        QCOMPARE(c.docs.size(), docs->size());
        for (size_t d = 0; d < docs->size(); ++d) {
            QCOMPARE(QString::fromStdString(c.names[d]), QString::fromStdString((*docs)[d].name));
            const auto want = m_tok->encode((*docs)[d].text);
            QVERIFY(std::vector<int32_t>(c.docs[d].begin(), c.docs[d].end()) == want);
        }
    }

    // Builds the store in `folder` again: it holds exactly the tokenizer's ids, with the
    // pieces built, reused and found damaged that are given (-1: not checked).
    void buildsAgain(const QString& folder, int built, int reused, int damaged) {
        TokenStoreStats stats;
        auto c = build(folder, &stats);
        BATON_VERIFY_OK(c);
        if (built >= 0)
            QCOMPARE(stats.piecesBuilt, built);
        if (reused >= 0)
            QCOMPARE(stats.piecesReused, reused);
        if (damaged >= 0)
            QCOMPARE(stats.piecesDamaged, damaged);
        holdsExactly(*c);
    }

    QStringList pieces(const QString& folder) const {
        return QDir(folder).entryList({"piece-*.tok"}, QDir::Files, QDir::Name);
    }

    QString newFolder() { return m_tmp.filePath(QString("store-%1").arg(++m_stores)); }

private Q_SLOTS:
    void initTestCase() {
        auto tok = loadTokenizer(baton::test::gpt2TokenizerDir());
        BATON_VERIFY_OK(tok);
        m_tok = *tok;
        m_corpus = m_tmp.filePath("corpus");
        QVERIFY(QDir().mkpath(m_corpus + "/more"));
        QVERIFY(write(m_corpus + "/a.txt", "The first book. It was a dark night.\n"));
        QVERIFY(write(m_corpus + "/b.md", "# Two\nThe second book, in Markdown.\n"));
        QVERIFY(write(m_corpus + "/notes.csv", "skipped,because,not,a,book\n"));
        const std::string shard = tar::xz(
            tar::archive({{"lib/One.txt", "A work from the library.\nIts second paragraph.\n"},
                          {"lib/Two.txt",
                           "*** START OF THE PROJECT GUTENBERG EBOOK TWO ***\nThe body "
                           "alone.\n*** END OF THE PROJECT GUTENBERG EBOOK TWO ***\nLicence.\n"}}));
        QVERIFY(!shard.empty());
        QVERIFY(write(m_corpus + "/more/library-01.tar.xz", shard));
    }

    void holdsTheTokenizersIds() {
        const QString folder = newFolder();
        TokenStoreStats stats;
        auto c = build(folder, &stats);
        BATON_VERIFY_OK(c);
        QCOMPARE(c->docs.size(), size_t(4)); // a, b, and the shard's two works
        QVERIFY(QString::fromStdString(c->names[3]).endsWith("library-01.tar.xz/lib/Two.txt"));
        holdsExactly(*c);
        QCOMPARE(stats.piecesBuilt, 3); // each file its own piece; the shard one
        QCOMPARE(stats.piecesReused, 0);
        QCOMPARE(pieces(folder).size(), 3);
        // Read back: nothing tokenized again, the same ids.
        auto again = build(folder, &stats);
        BATON_VERIFY_OK(again);
        QCOMPARE(stats.piecesBuilt, 0);
        QCOMPARE(stats.piecesReused, 3);
        holdsExactly(*again);
        // The documents outlive everything but the corpus that holds them.
        const TokenizedCorpus tail = again->slice(2, 4);
        again = Result<TokenizedCorpus>(TokenizedCorpus{});
        QCOMPARE(tail.docs.size(), size_t(2));
        QCOMPARE(tail.docs[0].size(), size_t(m_tok
                                                 ->encode("A work from the library.\nIts "
                                                          "second paragraph.\n")
                                                 .size()));
    }

    void aChangedSourceIsTokenizedAgain() {
        const QString folder = newFolder();
        BATON_VERIFY_OK(build(folder));
        QVERIFY(write(m_corpus + "/a.txt", "The first book, rewritten at greater length.\n"));
        buildsAgain(folder, 1, 2, -1);
    }

    // The store knows a source by its content: touching every source (a copy, a fresh
    // checkout) tokenizes nothing again; a rewrite of the same size whose modification
    // time is put back is still seen.
    void aSourceIsKnownByItsContent() {
        const QString folder = newFolder();
        BATON_VERIFY_OK(build(folder));
        const QDateTime later = QDateTime::currentDateTime().addDays(1);
        for (const char* name : {"a.txt", "b.md", "more/library-01.tar.xz"}) {
            QFile f(m_corpus + "/" + QString::fromUtf8(name));
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.setFileTime(later, QFileDevice::FileModificationTime));
        }
        buildsAgain(folder, 0, 3, 0);
        const QString b = m_corpus + "/b.md";
        const QDateTime when = QFileInfo(b).lastModified();
        QVERIFY(write(b, "# Owt\nThe second book, in Markdown.\n")); // the same size
        {
            QFile f(b);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.setFileTime(when, QFileDevice::FileModificationTime));
        }
        buildsAgain(folder, 1, 2, 0);
        QVERIFY(write(b, "# Two\nThe second book, in Markdown.\n"));
    }

    void aDamagedPieceIsRebuiltNeverRead() {
        const QString folder = newFolder();
        BATON_VERIFY_OK(build(folder));
        const QStringList names = pieces(folder);
        QCOMPARE(names.size(), 3);
        // One token flipped in one piece, another piece cut short, a third emptied.
        QFile flip(folder + "/" + names[0]);
        QVERIFY(flip.open(QIODevice::ReadWrite));
        QByteArray bytes = flip.readAll();
        bytes[0] = char(bytes[0] ^ 1);
        flip.seek(0);
        flip.write(bytes);
        flip.close();
        QVERIFY(
            QFile::resize(folder + "/" + names[1], QFileInfo(folder + "/" + names[1]).size() - 1));
        QVERIFY(QFile::resize(folder + "/" + names[2], 0));
        buildsAgain(folder, 3, -1, 3);
    }

    // A build that fails on one source keeps the pieces it finished; fixed, the next
    // build tokenizes that source alone.
    void aFailedBuildResumes() {
        const QString folder = newFolder();
        QVERIFY(write(m_corpus + "/c.txt", "valid start \xff\xfe then bad bytes\n"));
        auto failed = build(folder, nullptr, 1);
        QVERIFY(!failed.ok());
        QCOMPARE(int(failed.error().code), int(ErrorCode::InvalidUtf8));
        QVERIFY(QString::fromStdString(failed.error().message).contains("c.txt"));
        QCOMPARE(pieces(folder).size(), 2); // a.txt and b.md, before c.txt in name order
        QVERIFY(write(m_corpus + "/c.txt", "The third book, fixed.\n"));
        buildsAgain(folder, 2, 2, -1);
        QVERIFY(QFile::remove(m_corpus + "/c.txt"));
    }

    void cancelledBeforeItStarts() {
        const QString folder = newFolder();
        CancelToken cancel;
        cancel.cancel();
        auto c = build(folder, nullptr, 2, cancel);
        QVERIFY(!c.ok());
        QCOMPARE(int(c.error().code), int(ErrorCode::Cancelled));
        QVERIFY(pieces(folder).isEmpty());
        QVERIFY(QDir(folder).entryList(QDir::Files | QDir::Hidden).isEmpty()); // no temporaries
    }

    void threadsDoNotChangeTheStore() {
        auto one = build(newFolder(), nullptr, 1);
        auto four = build(newFolder(), nullptr, 4);
        BATON_VERIFY_OK(one);
        BATON_VERIFY_OK(four);
        QCOMPARE(one->names, four->names);
        for (size_t d = 0; d < one->docs.size(); ++d)
            QVERIFY(std::equal(one->docs[d].begin(), one->docs[d].end(), four->docs[d].begin(),
                               four->docs[d].end()));
    }

    // Validation works leave the training documents by name.
    void validationWorksAreTakenByName() {
        auto corpus = TokenizedCorpus::fromVectors({"/c/library-01.tar.xz/lib/One.txt",
                                                    "/c/library-01.tar.xz/lib/Two.txt",
                                                    "/c/books/Three.txt", "/c/other/Two.txt"},
                                                   {{1, 2}, {3, 4}, {5, 6}, {7, 8}});
        TokenizedCorpus validation;
        BATON_VERIFY_OK(takeWorks(corpus, validation, {"books/Three.txt", "lib/One.txt"}));
        QCOMPARE(corpus.names, (std::vector<std::string>{"/c/library-01.tar.xz/lib/Two.txt",
                                                         "/c/other/Two.txt"}));
        QCOMPARE(validation.names, (std::vector<std::string>{"/c/books/Three.txt",
                                                             "/c/library-01.tar.xz/lib/One.txt"}));
        QCOMPARE(validation.docs[0][1], 6);
        auto missing = takeWorks(corpus, validation, {"ne.txt"}); // not a whole name
        QVERIFY(!missing.ok());
        QVERIFY(QString::fromStdString(missing.error().message).contains("not in the corpus"));
        auto twice = takeWorks(corpus, validation, {"Two.txt"});
        QVERIFY(!twice.ok());
        QVERIFY(QString::fromStdString(twice.error().message).contains("names 2 documents"));
    }

    // The longest stretch of held-out text in the training documents, where it is; a
    // stretch shorter than kOverlapGram is not seen.
    void heldOutTextIsFoundInTheTrainingStream() {
        std::mt19937 rng(7);
        const auto random = [&](size_t n) {
            std::vector<int32_t> v(n);
            for (auto& t : v)
                t = int32_t(rng() % 50000);
            return v;
        };
        const auto held = random(2000);
        std::vector<int32_t> copied = random(500);
        copied.insert(copied.end(), held.begin() + 700, held.begin() + 1000); // 300 tokens
        const auto rest = random(400);
        copied.insert(copied.end(), rest.begin(), rest.end());
        std::vector<int32_t> quoted = random(300); // a short quotation only
        quoted.insert(quoted.begin() + 100, held.begin() + 50,
                      held.begin() + 50 + kOverlapGram - 1);
        const auto heldOut = TokenizedCorpus::fromVectors({"test-book.txt"}, {held});
        for (const int threads : {1, 3}) {
            const auto training = TokenizedCorpus::fromVectors(
                {"clean.txt", "second-edition.txt", "quotes.txt"}, {random(3000), copied, quoted});
            const Overlap o = longestOverlap(training, {&heldOut}, threads);
            QCOMPARE(o.tokens, int64_t(300));
            QCOMPARE(QString::fromStdString(o.training), QString("second-edition.txt"));
            QCOMPARE(QString::fromStdString(o.heldOut), QString("test-book.txt"));
            QCOMPARE(o.trainingOffset, int64_t(500));
            const auto clean =
                TokenizedCorpus::fromVectors({"clean.txt", "quotes.txt"}, {random(3000), quoted});
            QCOMPARE(longestOverlap(clean, {&heldOut}, threads).tokens, int64_t(0));
        }
        const auto exact = TokenizedCorpus::fromVectors(
            {"a.txt"}, {std::vector<int32_t>(held.begin(), held.begin() + kOverlapGram)});
        QCOMPARE(longestOverlap(exact, {&heldOut}).tokens, int64_t(kOverlapGram));
    }

    // The same file named twice is read twice and built once; a name with a line break
    // is kept on one line; what a killed build left behind goes once it is stale.
    void oddCorporaAndLeftovers() {
        const QString dir = m_tmp.filePath("odd");
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(write(dir + "/a.txt", "Once.\n"));
        QVERIFY(write(dir + "/shard.tar",
                      tar::archive({{"two\nlines.txt", "A work with an odd name.\n"}})));
        const QString folder = newFolder();
        QVERIFY(QDir().mkpath(folder));
        const QString stale = folder + "/piece-0123456789abcdef.tok.tmp-999999999";
        const QString fresh = folder + "/piece-fedcba9876543210.tok.tmp-999999998";
        QVERIFY(write(stale, "left by a killed build") && write(fresh, "still written?"));
        const QDateTime old = QDateTime::currentDateTime().addSecs(-7200);
        {
            QFile f(stale);
            QVERIFY(f.open(QIODevice::ReadWrite) &&
                    f.setFileTime(old, QFileDevice::FileModificationTime));
        }
        auto sources =
            listTokenSources({(dir + "/a.txt").toStdString(), (dir + "/a.txt").toStdString(),
                              (dir + "/shard.tar").toStdString()});
        BATON_VERIFY_OK(sources);
        TokenStoreOptions o = options(folder, 2);
        o.pieceBytes = 1;
        TokenStoreStats stats;
        auto c = buildTokenStore(*sources, *m_tok, o, {}, {}, &stats);
        BATON_VERIFY_OK(c);
        QCOMPARE(c->docs.size(), size_t(3));
        QCOMPARE(stats.piecesBuilt, 2); // a.txt once, the shard
        QVERIFY(
            std::equal(c->docs[0].begin(), c->docs[0].end(), c->docs[1].begin(), c->docs[1].end()));
        QVERIFY(QString::fromStdString(c->names[2]).endsWith("shard.tar/two lines.txt"));
        QVERIFY(!QFile::exists(stale));
        QVERIFY(QFile::exists(fresh)); // it may still be written to
    }

    // A tokenizer's sample: every document when they fit, else whole documents spread
    // evenly (every k-th in source order) up to the budget.
    void aSampleIsSpreadOverTheCorpus() {
        const QString dir = m_tmp.filePath("sample");
        QVERIFY(QDir().mkpath(dir));
        for (int i = 0; i < 10; ++i)
            QVERIFY(write(dir + QString("/doc%1.txt").arg(i), std::string(99, 'a' + i) + "\n"));
        auto all = sampleCorpus({dir.toStdString()}, false, 1000);
        BATON_VERIFY_OK(all);
        QCOMPARE(all->size(), size_t(10));
        auto some = sampleCorpus({dir.toStdString()}, false, 400); // 1,000 bytes: every 3rd
        BATON_VERIFY_OK(some);
        QCOMPARE(some->size(), size_t(4));
        for (size_t k = 0; k < some->size(); ++k)
            QVERIFY(
                QString::fromStdString((*some)[k].name).endsWith(QString("doc%1.txt").arg(3 * k)));
        // Validation works are never in it.
        auto skipping = sampleCorpus({dir.toStdString()}, false, 1000, {"doc3.txt", "doc7.txt"});
        BATON_VERIFY_OK(skipping);
        QCOMPARE(skipping->size(), size_t(8));
        for (const auto& d : *skipping)
            QVERIFY(!QString::fromStdString(d.name).endsWith("doc3.txt") &&
                    !QString::fromStdString(d.name).endsWith("doc7.txt"));
        auto none = sampleCorpus({dir.toStdString()}, false, 50);
        QVERIFY(!none.ok());
        QVERIFY(QString::fromStdString(none.error().message).contains("fits in a sample"));
    }

    void emptyDocumentsAndMissingSourcesAreNamed() {
        const QString dir = m_tmp.filePath("blank");
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(write(dir + "/blank.txt", "\n  \n"));
        auto sources = listTokenSources({dir.toStdString()});
        BATON_VERIFY_OK(sources);
        auto c = buildTokenStore(*sources, *m_tok, options(newFolder()));
        QVERIFY(!c.ok());
        QVERIFY(QString::fromStdString(c.error().message).contains("blank.txt holds no text"));
        auto missing = listTokenSources({(dir + "/nope.txt").toStdString()});
        QVERIFY(!missing.ok());
        QCOMPARE(int(missing.error().code), int(ErrorCode::FileNotFound));
        const QString bare = m_tmp.filePath("bare");
        QVERIFY(QDir().mkpath(bare));
        QVERIFY(!listTokenSources({bare.toStdString()}).ok());
    }
};

QTEST_GUILESS_MAIN(TestTokenStore)
#include "tst_token_store.moc"
