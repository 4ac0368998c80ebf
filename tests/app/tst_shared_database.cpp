// The app and baton-cli on one story database (issue 65, item 1). The app holds two
// connections to the file (its storage thread's and the story engine's); baton-cli,
// run beside it, opens and closes its own. If anything in the app's process opens the
// database file outside SQLite, closing that descriptor drops the process's locks,
// and the CLI's exit then deletes the write-ahead log the app still writes to: the
// app's later writes, and the CLI's next ones, are lost.
//
// appAndCliWriteAtOnce: the scenario, with the log checked in place and every write of
// both processes read back after both have closed. processKeepsItsLock: /proc/locks
// shows the process's read lock on the database after each way it opens one.
// onlySqliteOpensTheDatabase: every baton-cli command and the app's main window run
// with db_open_guard preloaded, which records any open of the database's files that
// is not SQLite's own.
#include "cli_run.h"
#include "test_support.h"
#include "verify_ok.h"

#include <baton/engine/model.h>
#include <baton/storage/database.h>
#include <baton/storage/qt/storage_controller.h>
#include <baton/storage/story_store.h>
#include <baton/story/settings.h>
#include <baton/story/story_service.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

using namespace baton;
using baton::test::cli;
using baton::test::CliRun;

namespace {

// Whether process `pid` holds a POSIX lock on the file at `path` (/proc/locks names
// the file by device and inode: "1: POSIX ADVISORY READ 4242 fe:01:1234 ...").
bool holdsLock(pid_t pid, const QString& path) {
    struct stat st {};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return false;
    std::ifstream locks("/proc/locks");
    std::string line;
    while (std::getline(locks, line)) {
        std::istringstream fields(line);
        std::string number, kind, advisory, access, id;
        long owner = 0;
        fields >> number >> kind;
        if (kind == "->")
            fields >> kind; // a waiter's line
        fields >> advisory >> access >> owner >> id;
        unsigned major = 0, minor = 0;
        unsigned long inode = 0;
        if (kind != "POSIX" || owner != pid ||
            std::sscanf(id.c_str(), "%x:%x:%lu", &major, &minor, &inode) != 3)
            continue;
        if (major == ::major(st.st_dev) && minor == ::minor(st.st_dev) && inode == st.st_ino)
            return true;
    }
    return false;
}

// A short continuation (the random fixture model would end at once on its end-of-text
// token, so that is suppressed).
story::ContinueRequest continuation(int64_t story, uint64_t seed) {
    story::ContinueRequest r;
    r.storyId = story;
    r.settings = story::defaultSettings();
    r.settings.sampling.seed = seed;
    r.settings.sampling.maxTokens = 8;
    r.settings.sampling.stopAtEndOfText = false;
    r.chunkTokens = 4;
    return r;
}

ino_t inodeOf(const QString& path) {
    struct stat st {};
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_ino : 0;
}

QString exportText(const QString& db, qint64 story) {
    return QString::fromUtf8(
        cli({"--db", db, "story", "export", QString::number(story), "--format", "txt"}).out);
}

} // namespace

class TestSharedDatabase : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<engine::Model> m_model;

    // The app's storage thread, opened on `path` (created when missing).
    static std::unique_ptr<storage::StorageController> openController(const QString& path) {
        auto c = std::make_unique<storage::StorageController>();
        QSignalSpy opened(c.get(), &storage::StorageController::opened);
        c->open(path);
        return opened.wait(20000) ? std::move(c) : nullptr;
    }

    // Appends through the storage thread and waits for its answer.
    static bool append(storage::StorageController& c, qint64 story, const std::string& text) {
        QSignalSpy appended(&c, &storage::StorageController::passageAppended);
        QSignalSpy failed(&c, &storage::StorageController::failed);
        c.appendPassage(story, text, storage::PassageAuthor::User);
        return QTest::qWaitFor([&] { return appended.count() + failed.count() > 0; }, 20000) &&
               failed.isEmpty();
    }

    CliRun cliGenerate(const QString& db, qint64 story) {
        return cli({"--db", db, "story", "generate", QString::number(story), "--model",
                    baton::test::fixtureDir(), "--max-tokens", "12", "--ignore-eos", "--seed", "3",
                    "--chunk-tokens", "4", "--threads", "1"});
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        auto model = engine::Model::load(baton::test::fixture());
        QVERIFY2(model.ok(), qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        m_model = *model;
    }

    void appAndCliWriteAtOnce() {
        const QString db = m_tmp.filePath("app-and-cli.db");
        // The app: its storage thread makes the story and saves the writer's text...
        auto app = openController(db);
        QVERIFY(app);
        QSignalSpy created(app.get(), &storage::StorageController::storyCreated);
        storage::Story s;
        s.title = "Shared";
        s.modelPath = baton::test::fixture();
        app->createStory(s);
        QVERIFY(created.wait(20000));
        const qint64 story = created.first().at(1).toLongLong();
        QVERIFY(append(*app, story, "App one. "));
        // ...and its story engine, on a connection of its own, generates once.
        story::StoryServiceOnFile engineSide(db.toStdString());
        auto service = engineSide.service();
        BATON_VERIFY_OK(service);
        BATON_VERIFY_OK((*service)->continueStory(m_model, continuation(story, 1)));
        QVERIFY2(holdsLock(::getpid(), db), "the app no longer holds its lock on the database");
        const ino_t wal = inodeOf(db + "-wal");
        QVERIFY(wal != 0);

        // baton-cli beside it: a reader, then a writer.
        CliRun list = cli({"--db", db, "story", "list"});
        QVERIFY2(list.exitCode == 0, list.err.constData());
        QVERIFY2(inodeOf(db + "-wal") == wal,
                 "baton-cli's exit deleted the write-ahead log the app still writes to");
        QVERIFY(append(*app, story, "App two. "));
        QVERIFY2(exportText(db, story).contains("App two."), "the CLI does not see the app's text");
        const CliRun generated = cliGenerate(db, story);
        QVERIFY2(generated.exitCode == 0, generated.err.constData());
        const QString afterCli = exportText(db, story);
        QVERIFY(afterCli.startsWith(QStringLiteral("App one. ")));
        QVERIFY(afterCli.size() > QStringLiteral("App one. App two. ").size() + 8);
        QCOMPARE(inodeOf(db + "-wal"), wal);

        // The app goes on writing, through both of its connections.
        QVERIFY(append(*app, story, "App three. "));
        BATON_VERIFY_OK((*service)->continueStory(m_model, continuation(story, 2)));
        QVERIFY(exportText(db, story).contains("App three."));
        app.reset();

        // Both closed: everything either wrote is in the file.
        auto reopened = storage::Database::open(db.toStdString());
        BATON_VERIFY_OK(reopened);
        QCOMPARE(*(*reopened)->integrityCheck(), std::string("ok"));
        const QString text = QString::fromStdString(*(*reopened)->stories().currentText(story));
        QVERIFY2(text.startsWith(afterCli), "the CLI's passage was lost");
        QVERIFY(text.contains("App three."));
        QVERIFY(text.size() > afterCli.size() + QStringLiteral("App three. ").size());
    }

    void processKeepsItsLock() {
        const QString db = m_tmp.filePath("locks.db");
        auto first = storage::Database::open(db.toStdString());
        BATON_VERIFY_OK(first);
        QVERIFY(holdsLock(::getpid(), db));
        storage::OpenOptions readOnly;
        readOnly.readOnly = true;
        auto second = storage::Database::open(db.toStdString(), readOnly);
        BATON_VERIFY_OK(second);
        QVERIFY2(holdsLock(::getpid(), db), "lost after a read-only open");
        auto third = storage::Database::open(db.toStdString());
        BATON_VERIFY_OK(third);
        QVERIFY2(holdsLock(::getpid(), db), "lost after a second writable open");
        auto controller = openController(db);
        QVERIFY(controller);
        QVERIFY2(holdsLock(::getpid(), db), "lost after the storage thread opened it");
        story::StoryServiceOnFile engineSide(db.toStdString());
        BATON_VERIFY_OK(engineSide.service());
        QVERIFY2(holdsLock(::getpid(), db), "lost after the story engine opened it");
        // The check itself sees a lost lock: any other descriptor of the file, closed.
        { std::ifstream(db.toStdString()).get(); }
        QVERIFY(!holdsLock(::getpid(), db));
    }

    void onlySqliteOpensTheDatabase() {
        const QString db = m_tmp.filePath("guarded.db");
        const QString log = m_tmp.filePath("guard.log");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("LD_PRELOAD", QStringLiteral(BATON_DB_OPEN_GUARD_PATH));
        env.insert("BATON_DB_GUARD", db);
        env.insert("BATON_DB_GUARD_LOG", log);
        auto run = [&](const QStringList& args) {
            CliRun r = cli(QStringList{"--db", db} + args, 240000, env);
            if (r.exitCode != 0)
                qWarning("%s: %s", qPrintable(args.join(' ')), r.err.constData());
            return r.exitCode == 0 ? r.out.trimmed() : QByteArray();
        };
        const QByteArray story = run({"story", "new", "--title", "Guarded", "--model",
                                      baton::test::fixtureDir(), "--memory", "A ship."});
        QVERIFY(!story.isEmpty());
        QVERIFY(!run({"story", "list"}).isNull());
        QVERIFY(!run({"story", "generate", story, "--max-tokens", "6", "--ignore-eos", "--threads",
                      "1"})
                     .isNull());
        QVERIFY(!run({"story", "show", story}).isNull());
        QVERIFY(!run({"story", "export", story, "--format", "md"}).isNull());
        QVERIFY(!run({"story", "context", story}).isNull());
        QVERIFY(!run({"story", "tokens", story}).isNull());
        QVERIFY(!run({"story", "lore", "add", story, "--keys", "Tern", "--content", "A ship."})
                     .isNull());
        QVERIFY(!run({"story", "lore", "list", story}).isNull());
        const QString txt = m_tmp.filePath("imported.txt");
        QVERIFY(baton::test::writeFile(txt, "Imported text. More of it.\n"));
        QVERIFY(!run({"story", "import", txt}).isNull());
        QVERIFY2(!QFile::exists(log), baton::test::readFile(log).constData());

        // The app's main window, opening the database and typing into a story.
        QProcess typist;
        typist.setProcessEnvironment(env);
        typist.start(QStringLiteral(BATON_SOAK_TYPIST_PATH),
                     {db, QString::fromUtf8(story), m_tmp.filePath("typed.side"),
                      baton::test::fixtureDir()});
        QVERIFY(typist.waitForStarted(20000));
        QVERIFY(QTest::qWaitFor(
            [&] { return baton::test::readFile(m_tmp.filePath("typed.side")).count('\n') >= 2; },
            60000));
        typist.kill();
        typist.waitForFinished(20000);
        QVERIFY2(!QFile::exists(log), baton::test::readFile(log).constData());

        // The guard itself: a program that reads the file is recorded.
        QProcess reader;
        reader.setProcessEnvironment(env);
        reader.start("cat", {db});
        QVERIFY(reader.waitForFinished(20000));
        QVERIFY2(baton::test::readFile(log).contains("opened"), "the guard recorded nothing");
    }
};

QTEST_GUILESS_MAIN(TestSharedDatabase)
#include "tst_shared_database.moc"
