// baton-cli story end to end: new, list, show, export, import (UTF-8 checked),
// generate with the fixture model (chunks and states saved, resumed from the saved
// state), the global --db and the default database in the user's data folder.
#include "epub_fixture.h"
#include "test_support.h"

#include <baton/storage/database.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run cli(const QStringList& args,
        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(BATON_CLI_PATH), args);
    p.closeWriteChannel();
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

} // namespace

class TestCliStory : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_db;
    QString m_model;

    qint64 newStory(const QString& title) {
        const Run r = cli({"--db", m_db, "story", "new", "--title", title, "--model", m_model});
        if (r.exitCode != 0)
            return -1;
        return r.out.trimmed().toLongLong();
    }

    QByteArray exportTxt(qint64 id) {
        return cli({"--db", m_db, "story", "export", QString::number(id), "--format", "txt"}).out;
    }

    // Greedy with a repetition penalty (so the text depends on the window) and the
    // end-of-text token suppressed (the random model would stop at once).
    Run generate(qint64 id, int tokens) {
        return cli({"--db", m_db, "story", "generate", QString::number(id), "--max-tokens",
                    QString::number(tokens), "--greedy", "--repetition-penalty", "10",
                    "--ignore-eos", "--chunk-tokens", "4"});
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        m_db = m_tmp.path() + "/stories.db";
        m_model = baton::test::fixtureDir();
        QVERIFY2(QFile::exists(m_model + "/config.json"),
                 qPrintable(baton::test::missingMessage(m_model)));
    }

    void help_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("story") << QStringList{"story", "--help"};
        for (const char* c : {"new", "list", "show", "export", "import", "generate", "tokens"})
            QTest::newRow(c) << QStringList{"story", c, "--help"};
    }
    void help() {
        QFETCH(QStringList, args);
        const Run r = cli(args);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("Usage: baton-cli"));
        QVERIFY(r.out.contains("--db"));
        QVERIFY(cli({"--help"}).out.contains("story"));
    }

    void newListShow() {
        const qint64 a = newStory("First story");
        QVERIFY(a > 0);
        const Run b = cli({"story", "new", "--db", m_db, "--title", "An adventure", "--mode",
                           "adventure"}); // --db after the subcommand works too
        QCOMPARE(b.exitCode, 0);
        const qint64 bid = b.out.trimmed().toLongLong();
        QVERIFY(bid > a);
        const Run list = cli({"--db", m_db, "story", "list"});
        QCOMPARE(list.exitCode, 0);
        const auto lines = list.out.trimmed().split('\n');
        QVERIFY(lines.size() >= 2);
        QVERIFY(lines[0].startsWith(QByteArray::number(bid) + "\tadventure\t"));
        QVERIFY(lines[0].endsWith("\tAn adventure"));
        const Run json = cli({"--db", m_db, "story", "list", "--json"});
        const auto arr = QJsonDocument::fromJson(json.out).array();
        QVERIFY(arr.size() >= 2);
        QCOMPARE(arr[0].toObject()["title"].toString(), QString("An adventure"));
        const Run show = cli({"--db", m_db, "story", "show", QString::number(a)});
        QCOMPARE(show.exitCode, 0);
        QVERIFY(show.out.contains("title: First story"));
        QVERIFY(show.out.contains("mode: story"));
        QVERIFY(show.out.contains("model: " + m_model.toUtf8()));

        // Errors: usage (2) and failures (1), with clear messages.
        QCOMPARE(cli({"--db", m_db, "story", "new"}).exitCode, 2);
        QCOMPARE(cli({"--db", m_db, "story", "new", "--title", "x", "--mode", "novel"}).exitCode,
                 2);
        const Run missing = cli({"--db", m_db, "story", "show", "99999"});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY(missing.err.contains("no story with id 99999"));
        QCOMPARE(cli({"--db", m_db, "story", "frobnicate"}).exitCode, 2);
        QCOMPARE(cli({"--db"}).exitCode, 2);
    }

    void defaultDatabaseIsInTheDataFolder() {
        QTemporaryDir home;
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", home.path() + "/xdg");
        env.insert("HOME", home.path());
        const Run r = cli({"story", "new", "--title", "Default"}, env);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(QFile::exists(home.path() + "/xdg/baton/baton.db"));
        env.remove("XDG_DATA_HOME");
        QCOMPARE(cli({"story", "new", "--title", "Home"}, env).exitCode, 0);
        QVERIFY(QFile::exists(home.path() + "/.local/share/baton/baton.db"));
    }

    void exportImportRoundTrip() {
        const QString md = m_tmp.path() + "/in.md";
        const QByteArray text = "It was a bright cold day in April — and the clocks were "
                                "striking thirteen.\n\nSecond paragraph, ünïcode.\n";
        QVERIFY(baton::test::writeFile(md, "# Imported title\n\n" + text));
        const Run imp = cli({"--db", m_db, "story", "import", md});
        QCOMPARE(imp.exitCode, 0);
        const qint64 id = imp.out.trimmed().toLongLong();
        QCOMPARE(exportTxt(id), text);
        const Run exMd = cli({"--db", m_db, "story", "export", QString::number(id)});
        QCOMPARE(exMd.out, "# Imported title\n\n" + text);
        // md -> import -> md is the identity; txt takes the file name as title.
        const QString out = m_tmp.path() + "/out.md";
        QCOMPARE(cli({"--db", m_db, "story", "export", QString::number(id), "--format", "md",
                      "--output", out})
                     .exitCode,
                 0);
        const qint64 again = cli({"--db", m_db, "story", "import", out}).out.trimmed().toLongLong();
        QCOMPARE(cli({"--db", m_db, "story", "export", QString::number(again)}).out, exMd.out);
        const QString txt = m_tmp.path() + "/My Novel.txt";
        QVERIFY(baton::test::writeFile(txt, text));
        const qint64 t = cli({"--db", m_db, "story", "import", txt}).out.trimmed().toLongLong();
        QVERIFY(cli({"--db", m_db, "story", "show", QString::number(t)})
                    .out.contains("title: My Novel"));
        QCOMPARE(exportTxt(t), text);
        QCOMPARE(cli({"--db", m_db, "story", "export", "1", "--format", "pdf"}).exitCode, 2);
    }

    // A book: an EPUB gives its title and its chapters' paragraphs; hard-wrapped text
    // is joined into paragraphs (its verse kept), unless asked to keep its lines.
    void importBooks() {
        namespace epub = baton::test::epub;
        const QString book = m_tmp.path() + "/tern.epub";
        QVERIFY(epub::writeZip(book.toStdString(), epub::goodBook()));
        const Run imp = cli({"--db", m_db, "story", "import", book});
        QCOMPARE(imp.exitCode, 0);
        const qint64 id = imp.out.trimmed().toLongLong();
        QVERIFY(cli({"--db", m_db, "story", "show", QString::number(id)})
                    .out.contains("title: The Voyage of the Tern"));
        const QByteArray text = exportTxt(id);
        QVERIFY(text.startsWith("Chapter One\n\nThe ship was called Tern,"));
        QVERIFY(!text.contains('<') && !text.contains("alert"));
        const QString locked = m_tmp.path() + "/locked.epub";
        QVERIFY(epub::writeZip(locked.toStdString(),
                               epub::with(epub::goodBook(), "META-INF/rights.xml", "<r/>")));
        const Run refused = cli({"--db", m_db, "story", "import", locked});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains("DRM"), refused.err.constData());

        const QString wrapped = m_tmp.path() + "/wrapped.txt";
        // Two paragraphs wrapped at 66 columns, as Project Gutenberg wraps, then verse.
        QByteArray gutenberg, paragraph;
        for (int p = 0; p < 2; ++p) {
            QByteArray line;
            for (int w = 0; w < 90; ++w) {
                const QByteArray word = (w % 3 == 0 ? "possession" : w % 3 == 1 ? "of" : "fortune");
                if (line.size() + 1 + word.size() > 66) {
                    gutenberg += line + "\n";
                    paragraph += line + " ";
                    line.clear();
                }
                line += (line.isEmpty() ? "" : " ") + word;
            }
            gutenberg += line + "\n\n";
            paragraph += line + "\n\n";
        }
        gutenberg += "    The rose is red,\n    The violet blue.\n";
        QVERIFY(baton::test::writeFile(wrapped, gutenberg));
        const qint64 w = cli({"--db", m_db, "story", "import", wrapped}).out.trimmed().toLongLong();
        const QByteArray joined = exportTxt(w);
        QVERIFY2(joined.startsWith(paragraph), joined.constData()); // one line per paragraph
        QVERIFY(joined.contains("The rose is red,\n") && joined.contains("The violet blue."));
        const qint64 kept = cli({"--db", m_db, "story", "import", wrapped, "--keep-line-breaks"})
                                .out.trimmed()
                                .toLongLong();
        QCOMPARE(exportTxt(kept), gutenberg);
    }

    void importRefusesInvalidUtf8() {
        const QString bad = m_tmp.path() + "/latin1.txt";
        QVERIFY(baton::test::writeFile(bad, "caf\xe9 au lait\n"));
        const int before =
            QJsonDocument::fromJson(cli({"--db", m_db, "story", "list", "--json"}).out)
                .array()
                .size();
        const Run r = cli({"--db", m_db, "story", "import", bad});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("not valid UTF-8") && r.err.contains("offset 3"),
                 r.err.constData());
        const int after =
            QJsonDocument::fromJson(cli({"--db", m_db, "story", "list", "--json"}).out)
                .array()
                .size();
        QCOMPARE(after, before); // nothing created
    }

    void generateSavesChunksAndStates() {
        const qint64 id = newStory("Generated");
        const Run r = generate(id, 12);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.err.contains("12 tokens"));
        const QByteArray streamed = r.out.chopped(1); // the closing newline
        QVERIFY(!streamed.isEmpty());
        QCOMPARE(exportTxt(id), streamed);
        auto db = baton::storage::Database::open(m_db.toStdString());
        QVERIFY(db.ok());
        auto path = (*db)->stories().currentPath(id);
        QVERIFY(path->size() >= 2); // saved in chunks
        for (const auto& p : *path)
            QCOMPARE(p.author, baton::storage::PassageAuthor::Model);
        // Every chunk's state of the open window is kept (all 12 tokens lie in window 0:
        // an edit resumes from the chunk before it); the last one is after start-of-text
        // and the 12 tokens.
        QCOMPARE(*(*db)->states().countForStory(id), int64_t(path->size()));
        auto states = (*db)->states().forPassage(path->back().id);
        QCOMPARE(states->size(), size_t(1));
        QCOMPARE(states->front().tokenOffset, int64_t(13));
        QCOMPARE(states->front().window, 128); // the fixture's positions
    }

    void secondGenerateResumesFromTheSavedState() {
        const qint64 split = newStory("Split");
        const qint64 whole = newStory("Whole");
        const Run first = generate(split, 12);
        QCOMPARE(first.exitCode, 0);
        const Run second = generate(split, 12);
        QCOMPARE(second.exitCode, 0);
        QVERIFY2(second.err.contains("resumed from the state saved at passage"),
                 second.err.constData());
        QVERIFY(!second.err.contains("bytes of story text"));
        QCOMPARE(generate(whole, 24).exitCode, 0);
        // Resuming from the state continues exactly: 12 + 12 tokens == 24 tokens.
        QCOMPARE(exportTxt(split), exportTxt(whole));
        QVERIFY(exportTxt(whole).size() > 24);
    }

    void importedTextIsEncodedOnceThenResumed() {
        const QString txt = m_tmp.path() + "/opening.txt";
        QVERIFY(baton::test::writeFile(txt, "Emma Woodhouse, handsome, clever, and rich"));
        const qint64 id = cli({"--db", m_db, "story", "import", txt, "--model", m_model})
                              .out.trimmed()
                              .toLongLong();
        const Run first = generate(id, 8);
        QCOMPARE(first.exitCode, 0);
        QVERIFY2(first.err.contains("bytes of story text"), first.err.constData());
        QVERIFY(exportTxt(id).startsWith("Emma Woodhouse, handsome, clever, and rich"));
        const Run second = generate(id, 8);
        QVERIFY(second.err.contains("resumed from the state saved at passage"));
    }

    void memoryAndAuthorsNoteAreReadNotSaved() {
        // The memory is read exactly as if it opened the story: a story with memory M
        // writes what a story whose text is "M\n\n" writes after it.
        const QString memory = QStringLiteral("The keeper's name is Ada.");
        const Run created = cli({"--db", m_db, "story", "new", "--title", "With memory", "--model",
                                 m_model, "--memory", memory});
        QVERIFY2(created.exitCode == 0, created.err.constData());
        const qint64 withMemory = created.out.trimmed().toLongLong();
        const QString txt = m_tmp.path() + "/memory.txt";
        QVERIFY(baton::test::writeFile(txt, (memory + "\n\n").toUtf8()));
        const qint64 asText = cli({"--db", m_db, "story", "import", txt, "--model", m_model})
                                  .out.trimmed()
                                  .toLongLong();
        QVERIFY(asText > 0);
        QCOMPARE(generate(withMemory, 10).exitCode, 0);
        QCOMPARE(generate(asText, 10).exitCode, 0);
        const QByteArray written = exportTxt(withMemory);
        QVERIFY(!written.isEmpty());
        QVERIFY(!written.contains("Ada")); // read, not saved as story text
        QCOMPARE(exportTxt(asText), (memory + "\n\n").toUtf8() + written);
        const Run show = cli({"--db", m_db, "story", "show", QString::number(withMemory)});
        QVERIFY(show.out.contains("memory: The keeper's name is Ada.\n"));
        QVERIFY(!show.out.contains("author's note:"));

        // An author's note changes what is written next, and is not saved either.
        const qint64 plain = newStory("Plain");
        const qint64 noted = cli({"--db", m_db, "story", "new", "--title", "Noted", "--model",
                                  m_model, "--note", "Write about storms."})
                                 .out.trimmed()
                                 .toLongLong();
        QCOMPARE(generate(plain, 10).exitCode, 0);
        QCOMPARE(generate(noted, 10).exitCode, 0);
        QVERIFY(!exportTxt(noted).contains("storms"));
        QVERIFY(exportTxt(noted) != exportTxt(plain));
        QVERIFY(cli({"--db", m_db, "story", "show", QString::number(noted)})
                    .out.contains("author's note: Write about storms.\n"));

        // A memory or note that is not UTF-8 is refused, naming the option (the
        // bytes go through a shell: QProcess arguments are always UTF-8).
        for (const char* option : {"--memory", "--note"}) {
            QProcess sh;
            sh.start(QStringLiteral("/bin/sh"),
                     {QStringLiteral("-c"),
                      QStringLiteral("\"$0\" --db \"$1\" story new --title T %1 \"$(printf "
                                     "'caf\\351')\"")
                          .arg(QLatin1String(option)),
                      QStringLiteral(BATON_CLI_PATH), m_db});
            QVERIFY(sh.waitForFinished(60000));
            QCOMPARE(sh.exitCode(), 2);
            QVERIFY2(sh.readAllStandardError().contains(QByteArray(option) + " is not valid UTF-8"),
                     option);
        }
    }

    void worldInfoEntriesAreEditedAndRead() {
        const qint64 id = newStory("Lore");
        const QString sid = QString::number(id);
        auto lore = [&](QStringList args) {
            return cli(QStringList{"--db", m_db, "story", "lore"} + args);
        };
        const Run added = lore({"add", sid, "--keys", "lamp, Lantern", "--content",
                                "The lamp is lit.", "--order", "7", "--depth", "64"});
        QVERIFY2(added.exitCode == 0, added.err.constData());
        const QString entry = QString::fromUtf8(added.out.trimmed());
        QVERIFY(entry.toLongLong() > 0);
        QCOMPARE(lore({"add", sid, "--keys", "castle", "--content", "Off.", "--disabled"}).exitCode,
                 0);
        Run list = lore({"list", sid, "--json"});
        QCOMPARE(list.exitCode, 0);
        auto entries = QJsonDocument::fromJson(list.out).array();
        QCOMPARE(entries.size(), 2);
        const auto first = entries[0].toObject();
        QCOMPARE(QString::number(first["id"].toInteger()), entry);
        QCOMPARE(first["keys"].toArray().size(), 2);
        QCOMPARE(first["keys"][1].toString(), QString("Lantern"));
        QCOMPARE(first["order"].toInt(), 7);
        QCOMPARE(first["scan_depth"].toInt(), 64);
        QVERIFY(!entries[1].toObject()["enabled"].toBool());
        // Refused with a clear error, nothing changed.
        Run bad = lore({"add", sid, "--keys", " , ", "--content", "x"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("at least one key"), bad.err.constData());
        QCOMPARE(lore({"add", sid, "--keys", "k"}).exitCode, 2); // no content
        QCOMPARE(lore({"edit", "987654", "--content", "x"}).exitCode, 1);
        QCOMPARE(lore({"add", "987654", "--keys", "k", "--content", "x"}).exitCode, 1);
        QCOMPARE(lore({"remove", "x"}).exitCode, 2);
        QCOMPARE(lore({"frobnicate"}).exitCode, 2);
        QCOMPARE(
            lore({"edit", entry, "--content", "The lamp is lit, and the sea is calm."}).exitCode,
            0);
        list = lore({"list", sid});
        QVERIFY2(list.out.contains("The lamp is lit, and the sea is calm."), list.out.constData());

        // The context view and generation read it when a key occurs in the recent text.
        const Run context = cli({"--db", m_db, "story", "context", sid, "--text",
                                 "He raised the lamp.", "--lore-budget", "64", "--json"});
        QVERIFY2(context.exitCode == 0, context.err.constData());
        const auto view = QJsonDocument::fromJson(context.out).object();
        QCOMPARE(view["lore"].toArray().size(), 1);
        QCOMPARE(view["lore"][0]["key"].toString(), QString("lamp"));
        QVERIFY(view["lore"][0]["placed"].toBool());
        int tokens = 0;
        bool worldInfo = false;
        for (const auto& span : view["spans"].toArray()) {
            tokens += span.toObject()["tokens"].toInt();
            worldInfo = worldInfo || span.toObject()["kind"].toString() == "world-info";
        }
        QCOMPARE(tokens, view["used"].toInt());
        QCOMPARE(view["used"].toInt() + view["room"].toInt(), view["window"].toInt());
        QVERIFY(worldInfo);
        const Run quiet = cli({"--db", m_db, "story", "generate", sid, "--max-tokens", "2",
                               "--lore-budget", "64", "--ignore-eos"});
        QCOMPARE(quiet.exitCode, 0);
        QVERIFY2(!quiet.err.contains("world info"), quiet.err.constData()); // no key in the text
        const QString txt = m_tmp.path() + "/lamp.txt";
        QVERIFY(baton::test::writeFile(txt, "The keeper lit the LAMP at dusk."));
        const QString imported = QString::fromUtf8(
            cli({"--db", m_db, "story", "import", txt, "--model", m_model}).out.trimmed());
        const Run lampEntry = lore({"add", imported, "--keys", "lamp", "--content", "Lit."});
        QCOMPARE(lampEntry.exitCode, 0);
        const Run read =
            cli({"--db", m_db, "story", "generate", imported, "--max-tokens", "2", "--ignore-eos"});
        QCOMPARE(read.exitCode, 0);
        QVERIFY2(
            read.err.contains("[world info read: entry " + lampEntry.out.trimmed() + ", key lamp]"),
            read.err.constData());
        QCOMPARE(lore({"remove", entry}).exitCode, 0);
        QCOMPARE(lore({"remove", entry}).exitCode, 1);
    }

    // Recall (issue 69): story context lists what is recalled, --recall off stops it,
    // bad values are refused.
    void contextListsRecalledText() {
        const QString txt = m_tmp.path() + "/vault.txt";
        QVERIFY(baton::test::writeFile(
            txt, ("The key to the vault lies beneath the crimson lantern.\n\n" +
                  QString("The road went on through the hills while the rain fell. ").repeated(40))
                     .toUtf8()));
        const QString sid = QString::fromUtf8(
            cli({"--db", m_db, "story", "import", txt, "--model", m_model}).out.trimmed());
        const Run context = cli({"--db", m_db, "story", "context", sid, "--text",
                                 " She thought of the vault.", "--window", "64", "--json"});
        QVERIFY2(context.exitCode == 0, context.err.constData());
        const auto recall = QJsonDocument::fromJson(context.out).object()["recall"].toObject();
        QVERIFY(recall["enabled"].toBool());
        QVERIFY(recall["terms"].toArray().contains(QJsonValue("vault")));
        const auto chunk = recall["chunks"][0].toObject();
        QCOMPARE(chunk["text"].toString(),
                 QString("The key to the vault lies beneath the crimson lantern.\n"));
        QCOMPARE(chunk["matched"][0].toString(), QString("vault"));
        QVERIFY(chunk["placed"].toBool());
        QCOMPARE(chunk["window"].toInt(), 0);
        QVERIFY(chunk["end"].toInt() <= recall["window_start"].toInt());
        const Run text = cli({"--db", m_db, "story", "context", sid, "--text",
                              " She thought of the vault.", "--window", "64"});
        QVERIFY2(text.out.contains("recalled from window 1"), text.out.constData());
        const Run off = cli({"--db", m_db, "story", "context", sid, "--text", " The vault.",
                             "--window", "64", "--recall", "off", "--json"});
        const auto none = QJsonDocument::fromJson(off.out).object()["recall"].toObject();
        QVERIFY(!none["enabled"].toBool());
        QVERIFY(none["chunks"].toArray().isEmpty());
        QCOMPARE(cli({"--db", m_db, "story", "context", sid, "--recall", "maybe"}).exitCode, 2);
        QCOMPARE(cli({"--db", m_db, "story", "context", sid, "--recall-chunks", "0"}).exitCode, 2);
        QCOMPARE(cli({"--db", m_db, "story", "context", sid, "--recall-budget", "-3"}).exitCode, 2);
    }

    void memoryLayoutIsChosenPerRun() {
        const Run created = cli({"--db", m_db, "story", "new", "--title", "Layouts", "--model",
                                 m_model, "--memory", "Ada keeps the lighthouse."});
        const QString sid = QString::fromUtf8(created.out.trimmed());
        const Run every = cli({"--db", m_db, "story", "context", sid, "--text", "Night fell."});
        QVERIFY2(every.exitCode == 0, every.err.constData());
        QVERIFY2(every.out.contains("memory: in every window"), every.out.constData());
        // Windows are counted from 1, as the app counts them (issue 65: "window 12" in the
        // CLI where the app said 13).
        QVERIFY2(every.out.startsWith("window 1 of the story"), every.out.constData());
        const Run once = cli({"--db", m_db, "story", "context", sid, "--text", "Night fell.",
                              "--memory-layout", "once"});
        QVERIFY2(once.out.contains("memory: read once"), once.out.constData());
        QCOMPARE(
            cli({"--db", m_db, "story", "context", sid, "--memory-layout", "sometimes"}).exitCode,
            2);
        // A memory longer than half the window is refused in every window, not once.
        QCOMPARE(cli({"--db", m_db, "story", "generate", sid, "--window", "8", "--max-tokens", "1"})
                     .exitCode,
                 1);
        QCOMPARE(cli({"--db", m_db, "story", "generate", sid, "--window", "8", "--max-tokens", "1",
                      "--memory-layout", "once"})
                     .exitCode,
                 0);
    }

    // story edit replaces the last occurrence, rewrites only the passage it is in and
    // keeps the states before it; story context then reports where the next generation
    // resumes and how many tokens it reads.
    void editKeepsTheStatesBeforeIt() {
        const qint64 id = newStory("Edited");
        QCOMPARE(generate(id, 40).exitCode, 0);
        auto db = baton::storage::Database::open(m_db.toStdString());
        QVERIFY(db.ok());
        const auto path = *(*db)->stories().currentPath(id);
        QVERIFY(path.size() >= 8);
        const int64_t states = *(*db)->states().countForStory(id);
        const std::string& lastText = path.back().text;
        const QString sid = QString::number(id);
        const Run edit =
            cli({"--db", m_db, "story", "edit", sid, "--find", QString::fromStdString(lastText),
                 "--replace", QString::fromStdString(lastText) + " Anne", "--json"});
        QVERIFY2(edit.exitCode == 0, edit.err.constData());
        const auto result = QJsonDocument::fromJson(edit.out).object();
        QCOMPARE(result["edited"].toArray().size(), 1);
        QCOMPARE(qint64(result["edited"][0]["passage"].toDouble()), qint64(path.back().id));
        QCOMPARE(result["states_deleted"].toInt(), 1); // the last chunk's
        QCOMPARE(*(*db)->states().countForStory(id), states - 1);
        QVERIFY(exportTxt(id).endsWith(QByteArray::fromStdString(lastText + " Anne")));
        // The next generation resumes from the chunk before the edit.
        const Run context = cli({"--db", m_db, "story", "context", sid, "--json"});
        QVERIFY2(context.exitCode == 0, context.err.constData());
        const auto view = QJsonDocument::fromJson(context.out).object();
        QCOMPARE(qint64(view["resumed_from_passage"].toDouble()), qint64(path[path.size() - 2].id));
        QVERIFY(view["read_tokens"].toInt() > 0);
        QVERIFY(view["read_tokens"].toInt() <= 40 + 8);
        // Text that is not there, and an empty search, are refused and change nothing.
        const Run missing =
            cli({"--db", m_db, "story", "edit", sid, "--find", "Wentworth", "--replace", "x"});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("does not occur"), missing.err.constData());
        QCOMPARE(cli({"--db", m_db, "story", "edit", sid, "--find", "", "--replace", "x"}).exitCode,
                 2);
        QCOMPARE(*(*db)->states().countForStory(id), states - 1);
    }

    void tokensListsAlternativesAndGenerateBranches() {
        const qint64 id = newStory("Alternatives");
        QCOMPARE(generate(id, 12).exitCode, 0);
        const Run listed = cli({"--db", m_db, "story", "tokens", QString::number(id), "--json"});
        QVERIFY2(listed.exitCode == 0, listed.err.constData());
        const QJsonArray passages = QJsonDocument::fromJson(listed.out).array();
        QVERIFY(passages.size() >= 2);
        // Every generated token is listed, the passages' texts made of theirs.
        int tokens = 0;
        for (const QJsonValue& p : passages)
            tokens += p[QStringLiteral("tokens")].toArray().size();
        QCOMPARE(tokens, 12);
        // The second passage's first token, with an alternative not written there.
        const QJsonObject passage = passages[1].toObject();
        const qint64 pid = passage[QStringLiteral("passage")].toInteger();
        const QJsonObject first = passage[QStringLiteral("tokens")][0].toObject();
        const QJsonArray alternatives = first[QStringLiteral("alternatives")].toArray();
        int pick = 0;
        while (pick < alternatives.size() &&
               alternatives[pick][QStringLiteral("text")] == first[QStringLiteral("text")])
            ++pick;
        QVERIFY(pick < alternatives.size());
        QVERIFY(alternatives[pick][QStringLiteral("logprob")].toDouble() <= 0);
        const QString branch = QStringLiteral("%1:0:%2").arg(pid).arg(pick);
        const Run branched =
            cli({"--db", m_db, "story", "generate", QString::number(id), "--branch", branch,
                 "--max-tokens", "4", "--greedy", "--ignore-eos"});
        QVERIFY2(branched.exitCode == 0, branched.err.constData());
        QVERIFY(branched.err.contains("[branched: passage "));
        // The current path: the passage before, the picked token, the continuation.
        auto db = baton::storage::Database::open(m_db.toStdString());
        const auto path = *(*db)->stories().currentPath(id);
        QCOMPARE(path[0].id, passages[0][QStringLiteral("passage")].toInteger());
        QCOMPARE(QString::fromStdString(path[1].text),
                 alternatives[pick][QStringLiteral("text")].toString());
        QCOMPARE(path[1].parentId, path[0].id);
        // The text view lists the same.
        const Run text = cli({"--db", m_db, "story", "tokens", QString::number(id), "--passage",
                              QString::number(pid)});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.startsWith("passage " + QByteArray::number(pid) + "\n"));
        QVERIFY(text.out.contains("%"));

        // Bad branches: usage errors, or the story's refusal; nothing is written.
        const qint64 before = (*db)->stories().passageCount(id).value();
        for (const QString& bad :
             {QStringLiteral("x"), QStringLiteral("1:2"),
              QStringLiteral("%1:0:%2:9").arg(pid).arg(pick), QStringLiteral("0:0:0")})
            QCOMPARE(cli({"--db", m_db, "story", "generate", QString::number(id), "--branch", bad})
                         .exitCode,
                     2);
        const Run missing = cli({"--db", m_db, "story", "generate", QString::number(id), "--branch",
                                 QStringLiteral("%1:999:0").arg(pid)});
        QVERIFY(missing.exitCode != 0);
        QVERIFY2(missing.err.contains("no token 999"), missing.err.constData());
        QCOMPARE((*db)->stories().passageCount(id).value(), before);

        // None recorded when none are asked for; more than 20 is a usage error.
        const qint64 plain = newStory("Without");
        const Run none = cli({"--db", m_db, "story", "generate", QString::number(plain),
                              "--max-tokens", "6", "--alternatives", "0"});
        QCOMPARE(none.exitCode, 0);
        QCOMPARE(cli({"--db", m_db, "story", "tokens", QString::number(plain)}).out,
                 QByteArray("no token alternatives are recorded on this path\n"));
        QCOMPARE(
            cli({"--db", m_db, "story", "generate", QString::number(plain), "--alternatives", "21"})
                .exitCode,
            2);
    }

    void corruptDatabaseIsReportedAndKept() {
        const QString bad = m_tmp.path() + "/notes.db";
        QVERIFY(baton::test::writeFile(bad, "these are my notes, not a database\n"));
        const Run r = cli({"--db", bad, "story", "list"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("[corrupt"), r.err.constData());
        QCOMPARE(baton::test::readFile(bad), QByteArray("these are my notes, not a database\n"));
    }
};

QTEST_GUILESS_MAIN(TestCliStory)
#include "tst_cli_story.moc"
