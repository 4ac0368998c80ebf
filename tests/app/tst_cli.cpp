// baton-cli end to end: --help everywhere, machine-readable output that agrees
// with the reference, and clear errors with non-zero exits.
#include "test_support.h"
#include "tiny_model.h"

#include <baton/engine/text.h>
#include <baton/engine/tokenizer.h>

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QThread>

#include <QtTest>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run cli(const QStringList& args, const QByteArray& stdinData = {},
        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(BATON_CLI_PATH), args);
    if (!stdinData.isEmpty())
        p.write(stdinData);
    p.closeWriteChannel();
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
    QString m_model;
    QString m_text;
    QJsonObject m_ref;
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        m_model = baton::test::fixtureDir();
        m_text = m_model + "/text.txt";
        QVERIFY2(QFile::exists(m_text), qPrintable(baton::test::missingMessage(m_text)));
        m_ref = baton::test::readJsonObject(m_model + "/reference.json");
    }

    void helpEverywhere_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("top") << QStringList{"--help"};
        for (const char* c : {"info", "tokenize", "score", "generate", "eval"})
            QTest::newRow(c) << QStringList{c, "--help"};
    }
    void helpEverywhere() {
        QFETCH(QStringList, args);
        const Run r = cli(args);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("Usage: baton-cli"));
    }

    void info() {
        const Run r = cli({"info", "--model", m_model, "--json"});
        QCOMPARE(r.exitCode, 0);
        const auto j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["n_layer"].toInt(), 2);
        QCOMPARE(j["n_embd"].toInt(), 64);
        QCOMPARE(j["tokenizer"].toString(), QString("gpt2-bpe"));
        QVERIFY(j["parameters"].toDouble() > 3e6);
    }

    // info describes a recurrent model's module (how it was trained, its design) and
    // says a baseline has none, in text and JSON.
    void infoDescribesTheRecurrence() {
        const QString dir = m_tmp.filePath("recurrent-info");
        baton::engine::RecurrenceConfig rec;
        rec.window = 32;
        rec.overlap = 4;
        rec.slots = 2;
        rec.poolLast = 8;
        rec.sink = true;
        QVERIFY(baton::test::writeRecurrentFixture(dir, rec));
        const Run text = cli({"info", "--model", dir});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("recurrence   trained at T = 32, o = 4; 2 state slots into "
                                   "block 1, residual FFN 3 x 200, pooled over the last 8 "
                                   "positions, attention sink\n"),
                 text.out.constData());
        const Run json = cli({"info", "--model", dir, "--json"});
        QCOMPARE(json.exitCode, 0);
        const auto r = QJsonDocument::fromJson(json.out).object()["recurrence"].toObject();
        QCOMPARE(r["window"].toInt(), 32);
        QCOMPARE(r["overlap"].toInt(), 4);
        QCOMPARE(r["slots"].toInt(), 2);
        QCOMPARE(r["pool_last"].toInt(), 8);
        QCOMPARE(r["sink"].toBool(), true);
        QCOMPARE(r["slot_bias"].toBool(), false);
        QCOMPARE(r["residual"].toBool(), true);

        QVERIFY(cli({"info", "--model", m_model})
                    .out.contains("recurrence   none (a baseline model)\n"));
        const auto base = QJsonDocument::fromJson(cli({"info", "--model", m_model, "--json"}).out);
        QVERIFY(base.object().contains("recurrence"));
        QVERIFY(base.object()["recurrence"].isNull());
    }

    // The F32 fixture held f32: its weights are the file's mapped pages, all of them,
    // unless --no-map asks for a copy; the plain text says so too.
    void infoSaysWhatIsMapped() {
        const qint64 fileBytes = QFileInfo(m_model + "/model.safetensors").size();
        const Run mapped = cli({"info", "--model", m_model, "--json"});
        QCOMPARE(mapped.exitCode, 0);
        const double bytes =
            QJsonDocument::fromJson(mapped.out).object()["mapped_bytes"].toDouble();
        QVERIFY2(bytes > 0.99 * double(fileBytes) && bytes < double(fileBytes),
                 qPrintable(QString::number(bytes)));
        const Run copied = cli({"info", "--model", m_model, "--json", "--no-map"});
        QCOMPARE(copied.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(copied.out).object()["mapped_bytes"].toDouble(), 0.0);
        const Run text = cli({"info", "--model", m_model});
        QVERIFY2(text.out.contains("of them the file's mapped pages (no copy)"),
                 text.out.constData());
        QVERIFY(!cli({"info", "--model", m_model, "--no-map"}).out.contains("mapped pages"));
    }

    // The model's content hash is remembered in $XDG_CACHE_HOME/baton/model-ids: the
    // memo is written on the first load and read on the next (a planted digest changes
    // the identity); without it the identity is computed again, the same as before.
    void theModelsHashIsRemembered() {
        // (Files changed in the last three seconds are not remembered.)
        const QFileInfo weights(m_model + "/model.safetensors");
        const qint64 age = weights.metadataChangeTime().secsTo(QDateTime::currentDateTime());
        if (age < 5)
            QThread::sleep(unsigned(5 - std::max<qint64>(age, 0)));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_CACHE_HOME", m_tmp.filePath("cache"));
        const QString memo = m_tmp.filePath("cache/baton/model-ids");
        auto identity = [&] {
            const Run r = cli({"info", "--model", m_model, "--json"}, {}, env);
            return QJsonDocument::fromJson(r.out).object()["identity"].toString();
        };
        const QString first = identity();
        QVERIFY(!first.isEmpty());
        const QStringList memos = QDir(memo).entryList({"*.id"}, QDir::Files);
        QCOMPARE(memos.size(), 1);
        QCOMPARE(identity(), first);
        const QString path = QDir(memo).filePath(memos[0]);
        QByteArray text = baton::test::readFile(path);
        const qsizetype digest = text.size() - 17;
        text.replace(digest, 16, "00000000000000aa");
        QVERIFY(baton::test::writeFile(path, text));
        const QString planted = identity();
        QVERIFY(!planted.isEmpty() && planted != first);
        QVERIFY(QDir(memo).removeRecursively());
        QCOMPARE(identity(), first);
    }

    // A model loaded in int8 a second time maps the weights the first load converted and
    // kept in $XDG_CACHE_HOME/baton/converted-weights; `cache` lists them by model and
    // format, `cache --clear` removes them. (After the test above: the model's files are
    // old enough for their hash to be remembered.)
    void convertedWeightsAreKeptListedAndCleared() {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_CACHE_HOME", m_tmp.filePath("kept-cache"));
        auto keptBytes = [&] {
            const Run r = cli({"info", "--model", m_model, "--json", "--weights", "int8"}, {}, env);
            return QJsonDocument::fromJson(r.out).object()["kept_bytes"].toDouble(-1);
        };
        QCOMPARE(keptBytes(), 0.0);
        QVERIFY(keptBytes() > 0);
        const Run list = cli({"cache", "--json"}, {}, env);
        QCOMPARE(list.exitCode, 0);
        const auto files = QJsonDocument::fromJson(list.out).object()["files"].toArray();
        QCOMPARE(files.size(), 1);
        QCOMPARE(files[0].toObject()["format"].toString(), QStringLiteral("int8"));
        QCOMPARE(QDir(files[0].toObject()["model"].toString()).canonicalPath(),
                 QDir(m_model).canonicalPath());
        const Run text = cli({"cache"}, {}, env);
        QVERIFY2(text.out.contains("int8") && text.out.contains("1 file,"), text.out.constData());
        const Run clear = cli({"cache", "--clear"}, {}, env);
        QCOMPARE(clear.exitCode, 0);
        QVERIFY2(clear.out.startsWith("removed 1 kept file"), clear.out.constData());
        const Run after = cli({"cache", "--json"}, {}, env);
        QVERIFY(QJsonDocument::fromJson(after.out).object()["files"].toArray().isEmpty());
        QCOMPARE(keptBytes(), 0.0); // converted (and kept) again
    }

    // --weights q4 holds 4-bit blocks and generates with them (nothing mapped: the
    // blocks are made at load time).
    void fourBitWeights() {
        const Run info = cli({"info", "--model", m_model, "--json", "--weights", "q4"});
        QCOMPARE(info.exitCode, 0);
        const auto j = QJsonDocument::fromJson(info.out).object();
        QCOMPARE(j["weights"].toString(), QStringLiteral("q4"));
        QVERIFY(j["mapped_bytes"].toDouble() <
                0.2 * QFileInfo(m_model + "/model.safetensors").size());
        const Run gen = cli({"generate", "--model", m_model, "--weights", "q4", "--prompt", "Once",
                             "--max-tokens", "8", "--seed", "3"});
        QVERIFY2(gen.exitCode == 0, gen.err.constData());
        QVERIFY(!gen.out.isEmpty());
    }

    // info reports the runtime and OpenMP's waiting policy (bug reports about speed
    // on a busy machine need it).
    void openMpWaitPolicy_data() {
        QTest::addColumn<QString>("given");
        QTest::addColumn<QString>("seen");
        QTest::newRow("unset") << QString() << "libgomp default";
        QTest::newRow("passive") << "PASSIVE"
                                 << "PASSIVE";
    }
    void openMpWaitPolicy() {
        QFETCH(QString, given);
        QFETCH(QString, seen);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("OMP_WAIT_POLICY");
        if (!given.isEmpty())
            env.insert("OMP_WAIT_POLICY", given);
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(BATON_CLI_PATH), {"info", "--model", m_model, "--json"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const auto j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(j["openmp_wait_policy"].toString(), seen);
        QVERIFY(j["runtime"].toString().contains("LibTorch"));
    }

    void tokenizeJson() {
        const Run r = cli({"tokenize", "--model", m_model, "--json", m_text});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(r.out).object()["ids"].toArray(), m_ref["ids"].toArray());
        const Run fromStdin =
            cli({"tokenize", "--model", m_model, "--json", "-"}, baton::test::readFile(m_text));
        QCOMPARE(fromStdin.out, r.out);
    }

    void scoreJson() {
        const Run r = cli({"score", "--model", m_model, "--json", m_text});
        QCOMPARE(r.exitCode, 0);
        const auto j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["scored_tokens"].toInt(), 127);
        QVERIFY(std::abs(j["nll_sum"].toDouble() - m_ref["nll_sum"].toDouble()) < 1e-3);
        QVERIFY(j["token_ppl"].toDouble() > 1);
        QVERIFY(j["word_ppl"].toDouble() > j["token_ppl"].toDouble());
        const auto per = j["per_token"].toArray();
        QCOMPARE(per.size(), 127);
        const auto expected = m_ref["next_token_logprob"].toArray();
        for (int i = 0; i < 127; ++i)
            QVERIFY(std::abs(per[i].toObject()["logprob"].toDouble() - expected[i].toDouble()) <
                    1e-4);
    }

    void scoreInWindows() {
        const Run r = cli({"score", "--model", m_model, "--window", "16", "--summary", m_text});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("window 16"));
    }

    void generateStreamsJsonLines() {
        const Run r = cli({"generate", "--model", m_model, "--prompt", "Emma", "--greedy",
                           "--max-tokens", "12", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 0);
        const auto lines = r.out.trimmed().split('\n');
        QVERIFY(lines.size() >= 13);
        const auto done = QJsonDocument::fromJson(lines.last()).object();
        QCOMPARE(done["event"].toString(), QString("done"));
        QCOMPARE(done["ids"].toArray().size(), 12);
        QString joined;
        for (int i = 0; i + 1 < lines.size(); ++i)
            joined += QJsonDocument::fromJson(lines[i]).object()["text"].toString();
        QCOMPARE(joined, done["text"].toString());
        // Greedy is deterministic.
        const Run again = cli({"generate", "--model", m_model, "--prompt", "Emma", "--greedy",
                               "--max-tokens", "12", "--json", "--quiet"});
        const auto againDone =
            QJsonDocument::fromJson(again.out.trimmed().split('\n').last()).object();
        QCOMPARE(againDone["ids"].toArray(), done["ids"].toArray());
    }

    void generateLongerThanTheModelsPositions() {
        const Run r =
            cli({"generate", "--model", m_model, "--prompt", "Emma", "--max-tokens", "300",
                 "--window", "32", "--overlap", "8", "--ignore-eos", "--json", "--quiet"});
        QCOMPARE(r.exitCode, 0);
        const auto done = QJsonDocument::fromJson(r.out.trimmed().split('\n').last()).object();
        QCOMPARE(done["ids"].toArray().size(), 300);
        QVERIFY(done["rollovers"].toInt() >= 10);
    }

    void evalJson() {
        const QString perToken = m_tmp.filePath("per-token.tsv");
        const Run r = cli({"eval", "--model", m_model, "--window", "16,32", "--overlap", "0,4",
                           "--json", "--per-token", perToken, m_text});
        QCOMPARE(r.exitCode, 0);
        const auto json = QJsonDocument::fromJson(r.out).object();
        const auto rows = json["rows"].toArray();
        QCOMPARE(rows.size(), 4);
        // Bits per byte: every row's NLL over the text's bytes, whatever the tokenizer.
        const double bytes = double(baton::test::readFile(m_text).size());
        QCOMPARE(json["bytes"].toDouble(), bytes);
        QCOMPARE(json["tokens"].toInt(), 128);
        QVERIFY(std::abs(json["bytes_per_token"].toDouble() - bytes / 128) < 1e-9);
        const auto sums = m_ref["windowed_nll_sum"].toObject();
        for (const auto v : rows) {
            const auto row = v.toObject();
            for (const char* key : {"window", "overlap", "scored_tokens", "nll_sum", "token_ppl",
                                    "word_ppl", "flops_per_token", "flops_per_token_with_head"})
                QVERIFY2(row.contains(key), key);
            QCOMPARE(row["scored_tokens"].toInt(), 127);
            QVERIFY(std::abs(row["bits_per_byte"].toDouble() -
                             row["nll_sum"].toDouble() / std::log(2.0) / bytes) < 1e-9);
            QVERIFY(row["flops_per_token_with_head"].toDouble() >
                    row["flops_per_token"].toDouble());
            const QString key =
                QString("%1:%2").arg(row["window"].toInt()).arg(row["overlap"].toInt());
            if (sums.contains(key))
                QVERIFY(std::abs(row["nll_sum"].toDouble() - sums[key].toDouble()) < 1e-3);
        }
        const auto lines = baton::test::readFile(perToken).trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 4 * 127);
        QVERIFY(lines[0].startsWith("file\tmodel\twindow_size\toverlap"));
    }

    // --unwrap scores a hard-wrapped book as training reads it: the same as scoring the
    // unwrapped text itself, and not the same as the wrapped text.
    void evalUnwrapsLikeTraining() {
        // Two thousand bytes of a Gutenberg book (hard-wrapped at about 70 columns).
        const QByteArray wrapped =
            baton::test::readFile(baton::test::sharedPath("corpus/books/austen-emma.txt"))
                .mid(3000, 2000);
        QVERIFY2(wrapped.size() == 2000, qPrintable(baton::test::missingMessage("corpus/books")));
        const QString wrappedFile = m_tmp.filePath("wrapped.txt");
        const QString flatFile = m_tmp.filePath("flat.txt");
        QVERIFY(baton::test::writeFile(wrappedFile, wrapped));
        const std::string flat = baton::engine::unwrapText(wrapped.toStdString());
        QVERIFY(flat != wrapped.toStdString());
        QVERIFY(baton::test::writeFile(flatFile, QByteArray::fromStdString(flat)));
        const auto nll = [&](const QStringList& args) {
            const Run r = cli(QStringList{"eval", "--model", m_model, "--json"} + args);
            const auto o = QJsonDocument::fromJson(r.out).object();
            return std::make_pair(o["rows"].toArray()[0].toObject()["nll_sum"].toDouble(),
                                  o["unwrap"].toBool());
        };
        const auto unwrapped = nll({"--unwrap", wrappedFile});
        QVERIFY(unwrapped.second);
        QCOMPARE(unwrapped.first, nll({flatFile}).first);
        QVERIFY(unwrapped.first != nll({wrappedFile}).first);
        QVERIFY(!nll({wrappedFile}).second);
    }

    // The long commands' progress bar: nothing on a standard error that is not a
    // terminal (here, a pipe), so logs and scripts see only the results; with
    // BATON_PROGRESS=1 the bar (share done, rate, time left) redrawn on one line and
    // cleared at the end; the results on standard output are the same either way.
    void progressBarOnlyOnATerminal() {
        const QStringList args{"eval", "--model", m_model, "--window", "16", "--json", m_text};
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("BATON_PROGRESS");
        const Run piped = cli(args, {}, env);
        QCOMPARE(piped.exitCode, 0);
        QVERIFY2(!piped.err.contains('\r') && !piped.err.contains("eval ["), piped.err.constData());
        env.insert("BATON_PROGRESS", "1");
        const Run forced = cli(args, {}, env);
        QCOMPARE(forced.exitCode, 0);
        QVERIFY2(forced.err.contains("\r\033[Keval [") && forced.err.contains("%"),
                 forced.err.constData());
        QVERIFY(forced.err.endsWith("\r\033[K")); // the bar's line is cleared at the end
        const auto rows = [](const Run& r) {
            QJsonArray out;
            for (const auto v : QJsonDocument::fromJson(r.out).object()["rows"].toArray()) {
                QJsonObject row = v.toObject();
                row.remove("seconds"); // wall time differs from run to run
                out.append(row);
            }
            return out;
        };
        QVERIFY(!rows(piped).isEmpty());
        QCOMPARE(rows(forced), rows(piped));
    }

    void evalRecurrentWithAndWithoutState() {
        const QString dir = m_tmp.filePath("recurrent");
        QVERIFY(baton::test::copyFolder(m_model, dir));
        auto tok = baton::engine::loadTokenizer(dir.toStdString());
        baton::engine::RecurrenceConfig rec;
        rec.window = 16;
        rec.overlap = 0;
        baton::engine::ModelConfig c;
        c.nLayer = 2;
        c.nHead = 4;
        c.nEmbd = 64;
        QVERIFY(baton::test::writeRecurrence(dir.toStdString(), c, rec, (*tok)->identity()));
        const Run r = cli({"eval", "--model", dir, "--no-state", "--json", m_text});
        QCOMPARE(r.exitCode, 0);
        const auto rows = QJsonDocument::fromJson(r.out).object()["rows"].toArray();
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0].toObject()["state"].toString(), QString("on"));
        QCOMPARE(rows[1].toObject()["state"].toString(), QString("off"));
        QCOMPARE(rows[0].toObject()["window"].toInt(), 16); // the trained T by default
        const auto bands = rows[0].toObject()["bands"].toArray();
        QCOMPARE(bands.size(), 3);
        QVERIFY(bands[0].toObject().contains("slot_attention"));
        QVERIFY(rows[0].toObject()["nll_sum"].toDouble() !=
                rows[1].toObject()["nll_sum"].toDouble());
        // Another overlap than the trained one works and warns.
        const Run other = cli({"eval", "--model", dir, "--overlap", "4", m_text});
        QCOMPARE(other.exitCode, 0);
        QVERIFY(other.err.contains("warning:"));
        QVERIFY(other.out.contains("slot attn"));
        // --no-state needs a recurrent model.
        QCOMPARE(cli({"eval", "--model", m_model, "--no-state", m_text}).exitCode, 2);

        // Every ablation, and the paired differences against the baseline.
        const Run ablations = cli({"eval", "--model", dir, "--state", "on,off,mean,far,shuffled",
                                   "--paired-with", m_model, "--json", m_text});
        QVERIFY2(ablations.exitCode == 0, ablations.err.constData());
        const auto all = QJsonDocument::fromJson(ablations.out).object();
        QCOMPARE(all["rows"].toArray().size(), 6);
        const auto pairs = all["paired"].toArray();
        QCOMPARE(pairs.size(), 5);
        QCOMPARE(pairs[0].toObject()["a"].toString(), QString("a:off"));
        QCOMPARE(pairs[0].toObject()["b"].toString(), QString("a:on"));
        QCOMPARE(pairs[4].toObject()["a"].toString(), QString("a:on"));
        QCOMPARE(pairs[4].toObject()["b"].toString(), QString("b"));
        for (const auto p : pairs) {
            const auto d = p.toObject()["difference"].toObject();
            QVERIFY(d["std_error"].toDouble() >= 0);
            QVERIFY(d["windows"].toInt() > 1);
            QCOMPARE(p.toObject()["bands"].toArray().size(), 3);
        }
        // The off ablation is the baseline computation (the module's weights are the
        // fixture's): the paired difference of off against the baseline row is zero.
        const auto ablationRows = all["rows"].toArray();
        QCOMPARE(ablationRows[1].toObject()["nll_sum"].toDouble(),
                 ablationRows[5].toObject()["nll_sum"].toDouble());
        QCOMPARE(cli({"eval", "--model", dir, "--state", "sideways", m_text}).exitCode, 2);

        // A model of another tokenizer (the bundled one, SentencePiece) pairs by spans of
        // bytes: the difference is the two rows' bits per byte apart, over every span.
        const Run spans =
            cli({"eval", "--model", m_model, "--window", "16", "--paired-with",
                 baton::test::bundledModelDir(), "--span-bytes", "64", "--json", m_text});
        QVERIFY2(spans.exitCode == 0, spans.err.constData());
        const auto byBytes = QJsonDocument::fromJson(spans.out).object();
        const auto spanRows = byBytes["rows"].toArray();
        QCOMPARE(spanRows.size(), 2);
        const auto spanPair = byBytes["paired"].toArray()[0].toObject();
        QCOMPARE(spanPair["by"].toString(), QString("span"));
        const auto bits = spanPair["difference_bits_per_byte"].toObject();
        const double textBytes = double(baton::test::readFile(m_text).size());
        QCOMPARE(bits["bytes"].toDouble(), textBytes);
        QCOMPARE(bits["spans"].toInt(), int(std::ceil(textBytes / 64)));
        QVERIFY(bits["std_error"].toDouble() > 0);
        QVERIFY(std::abs(bits["mean"].toDouble() -
                         (spanRows[0].toObject()["bits_per_byte"].toDouble() -
                          spanRows[1].toObject()["bits_per_byte"].toDouble())) < 1e-9);
        const Run spanText = cli({"eval", "--model", m_model, "--window", "16", "--paired-with",
                                  baton::test::bundledModelDir(), m_text});
        QCOMPARE(spanText.exitCode, 0);
        QVERIFY(spanText.out.contains("paired by spans of 4096 bytes"));

        // The memory probe on the recurrent model and the fixture as its baseline.
        const QString book = baton::test::sharedPath("corpus/books/austen-pride-and-prejudice.txt");
        const Run probe = cli({"probe", "--model", dir, "--baseline", m_model, "--episodes", "3",
                               "--distances", "0,1", "--json", book});
        QVERIFY2(probe.exitCode == 0, probe.err.constData());
        const auto models = QJsonDocument::fromJson(probe.out).object()["models"].toArray();
        QCOMPARE(models.size(), 2);
        QCOMPARE(models[0].toObject()["results"].toArray().size(), 2 * 3); // on, off, shuffled
        QCOMPARE(models[1].toObject()["results"].toArray().size(), 2);
        QCOMPARE(models[1].toObject()["window"].toInt(), 16); // the model's windows
        const Run human = cli({"probe", "--model", dir, "--episodes", "2", "--distances", "1",
                               "--state", "on", book});
        QCOMPARE(human.exitCode, 0);
        QVERIFY(human.out.contains("chance 0.125"));
        QCOMPARE(cli({"probe", "--model", dir, "--episodes", "0", book}).exitCode, 2);
    }

    void defaultModelIsTheBundledOne() {
        // Without --model, commands use the bundled baton-mini, looked up first in
        // $BATON_MODELS_DIR: here a copy of the fixture under that name.
        const QString models = m_tmp.filePath("models");
        QVERIFY(baton::test::copyFolder(m_model, models + "/baton-mini"));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("BATON_MODELS_DIR", models);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(BATON_CLI_PATH), {"info", "--json"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QVERIFY2(j["path"].toString().endsWith("models/baton-mini"),
                 qPrintable(j["path"].toString()));
    }

    void errors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << 2 << "unknown command";
        QTest::newRow("unknown option") << QStringList{"info", "--bogus"} << 2 << "--bogus";
        QTest::newRow("missing model")
            << QStringList{"info", "--model", "/nonexistent/model"} << 1 << "not found";
        QTest::newRow("bad temperature")
            << QStringList{"generate", "--model", "M", "--prompt", "x", "--temperature", "-1"} << 2
            << "--temperature";
        QTest::newRow("bad number")
            << QStringList{"generate", "--model", "M", "--prompt", "x", "--max-tokens", "lots"} << 2
            << "integer";
        QTest::newRow("missing file")
            << QStringList{"score", "--model", "M", "/nonexistent.txt"} << 1 << "cannot open";
        QTest::newRow("window too large")
            << QStringList{"score", "--model", "M", "--window", "4096", "T"} << 1 << "window";
        QTest::newRow("bad weights")
            << QStringList{"info", "--model", "M", "--weights", "f8"} << 2 << "--weights";
        QTest::newRow("bias without a value")
            << QStringList{"generate", "--model", "M", "--prompt", "x", "--bias", "x"} << 2
            << "--bias";
        QTest::newRow("bias out of range")
            << QStringList{"generate", "--model", "M", "--prompt", "x", "--bias", "x=500"} << 2
            << "--bias";
        QTest::newRow("empty banned phrase")
            << QStringList{"generate", "--model", "M", "--prompt", "x", "--ban", ""} << 2
            << "--ban";
        QTest::newRow("empty sampler name")
            << QStringList{"generate", "--model", "M", "--prompt", "x", "--sampler-order", "top_k,"}
            << 2 << "--sampler-order";
        QTest::newRow("unknown sampler")
            << QStringList{"generate", "--model",         "M",         "--prompt",
                           "x",        "--sampler-order", "top_k,nope"}
            << 1 << "unknown sampler 'nope'";
        QTest::newRow("unknown training device")
            << QStringList{"train", "--base", "M", "--corpus", "T", "--out", "O", "--device", "tpu"}
            << 1 << "--device must be cpu, cuda or cuda:N";
    }
    void errors() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        args.replaceInStrings(QRegularExpression("^M$"), m_model);
        args.replaceInStrings(QRegularExpression("^T$"), m_text);
        args.replaceInStrings(QRegularExpression("^O$"), m_tmp.filePath("never-trained"));
        const Run r = cli(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains("error:") && r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY(r.out.isEmpty());
    }

    void invalidUtf8Input() {
        const QString bad = m_tmp.filePath("bad.txt");
        baton::test::writeFile(bad, "fine text \xFF\xFE then garbage");
        const Run r = cli({"score", "--model", m_model, bad});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("not valid UTF-8") && r.err.contains("offset 10"),
                 r.err.constData());
    }

    void pickledModelIsRefused() {
        const QString dir = m_tmp.filePath("pickled");
        QDir().mkpath(dir);
        for (const char* f : {"config.json", "vocab.json", "merges.txt"})
            QFile::copy(m_model + "/" + f, dir + "/" + f);
        baton::test::writeFile(dir + "/pytorch_model.bin", "\x80\x02}q\x00.");
        const Run r = cli({"info", "--model", dir});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("arbitrary code") && r.err.contains("pickle-refused"),
                 r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
