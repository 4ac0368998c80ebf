// What the fuzzers (tests/fuzz) found, each kept fixed: the input that found it is in
// tests/fuzz/corpus/<target>/regress-*, replayed by the fuzz build; these tests state
// the fixed behaviour in the ordinary suites (and under the sanitize preset).
#include "test_support.h"
#include "verify_ok.h"

#include "books/xhtml_text.h"
#include "inference/state_blob.h"
#include "model/baton_json.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "training/run_config.h"
#include "training/run_progress.h"
#include "util/hash.h"

#include <baton/engine/topics.h>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <vector>

#include <sys/resource.h>

using namespace baton::engine;

class TestFuzzFindings : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    // fuzz_state_blob: hashing nothing passed a null pointer to memcpy (undefined
    // behaviour; UBSan stops the sanitize build here if it comes back).
    void hashOfNothing() {
        ContentHash a, b;
        const std::vector<uint8_t> none;
        a.update(none.data(), none.size());
        a.update(nullptr, 0);
        QCOMPARE(a.hex(), b.hex());
        a.update("x", 1);
        QVERIFY(a.hex() != b.hex());
    }

    // The content hash names models and the states saved with a story: its values
    // never change, however the input is split into updates.
    void hashValuesArePinned() {
        std::string text;
        for (int i = 0; i < 1000; ++i)
            text.push_back(char((i * 131 + 7) % 251));
        const std::pair<size_t, const char*> expected[] = {
            {0, "3fdf455f9dcf1e62"},  {1, "3cbd3ba336d67d53"},  {31, "0e0e0377d4a4adfc"},
            {32, "e4d66d9393e3a596"}, {33, "2f77e96907a9337b"}, {1000, "e04669f618d13c00"}};
        for (const auto& [size, digest] : expected) {
            ContentHash whole, pieces;
            whole.update(text.data(), size);
            for (size_t at = 0; at < size; at += 7)
                pieces.update(text.data() + at, std::min<size_t>(7, size - at));
            QCOMPARE(whole.hex(), std::string(digest));
            QCOMPARE(pieces.hex(), whole.hex());
        }
    }

    // fuzz_state_blob: a blob claiming 2^31 tokens in its window made the decoder
    // allocate (and zero) 8 GB before finding it too short. Lengths are now checked
    // against the bytes there first: claiming 2^28 tokens (1 GB) allocates nothing.
    void stateBlobThatClaimsTooMuch() {
        StateBlob b;
        b.identity = std::string(16, 'a');
        b.window = 8;
        b.width = 4;
        std::vector<uint8_t> bytes = encodeStateBlob(b);
        auto put = [&](size_t at, auto value) {
            std::memcpy(bytes.data() + at, &value, sizeof(value));
        };
        const int32_t claim = 1 << 28;
        put(28, claim);           // window
        put(61, int64_t(claim));  // streamLength = windowStart (0) + count
        put(77, uint32_t(claim)); // count
        bytes.resize(bytes.size() - 8);
        ContentHash h;
        h.update(bytes.data(), bytes.size());
        const uint64_t digest = h.digest();
        bytes.insert(bytes.end(), reinterpret_cast<const uint8_t*>(&digest),
                     reinterpret_cast<const uint8_t*>(&digest) + 8);
        rusage before{}, after{};
        getrusage(RUSAGE_SELF, &before);
        auto r = decodeStateBlob(bytes);
        getrusage(RUSAGE_SELF, &after);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::StateCorrupt);
        QVERIFY2(after.ru_maxrss - before.ru_maxrss < 256 * 1024, // kB
                 qPrintable(QString("decoding grew the process by %1 kB")
                                .arg(after.ru_maxrss - before.ru_maxrss)));
    }

    // fuzz_sentencepiece: a model file with an empty piece made darts-clone (inside
    // SentencePiece) throw through Baton's module, which ended the process. The module
    // now turns every exception into an error.
    void sentencePieceThatThrows() {
        const QByteArray bytes =
            QByteArray::fromBase64("Cg4KBTwwbms+FQAAAAAYAgoNCgQAAHMvFTw+eKowBw==");
        auto t =
            SentencePieceTokenizer::fromData(std::string_view(bytes.data(), size_t(bytes.size())));
        QVERIFY(!t);
        QVERIFY2(QString::fromStdString(t.error().message).contains("zero-length key"),
                 t.error().message.c_str());
    }

    // fuzz_model_config: a baton.json whose "format" is not a string threw out of
    // parseBatonJson (Json::value), which would have ended the app loading the model.
    void batonJsonFormatOfAnotherType_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::newRow("number") << QByteArray(R"({"format": 7, "format_version": 1})");
        QTest::newRow("object") << QByteArray(R"({"format": {"a": 1}})");
        QTest::newRow("null") << QByteArray(R"({"format": null})");
        QTest::newRow("array") << QByteArray(R"([1, 2])");
    }
    void batonJsonFormatOfAnotherType() {
        QFETCH(QByteArray, text);
        ModelConfig model;
        model.nLayer = 2;
        model.nHead = 2;
        model.nEmbd = 8;
        model.nPositions = 16;
        model.vocabSize = 10;
        auto r = parseBatonJson(text.toStdString(), "baton.json", model);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::BadConfig);
        QVERIFY(QString::fromStdString(r.error().message).contains("baton-recurrent"));
    }

    // The same pattern in topic model files.
    void topicFileFormatOfAnotherType() {
        const QString path = m_dir.filePath("topics.json");
        QVERIFY(baton::test::writeFile(path, R"({"format": ["baton-topics"], "version": 1})"));
        auto r = TopicModel::load(path.toStdString());
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::BadHeader);
    }

    // fuzz_epub: a chapter with invalid UTF-8 inside CDATA gave paragraphs that were not
    // UTF-8; a chapter is now refused with its name (readEpub refused the book later).
    void chapterWithInvalidUtf8() {
        auto r = books::xhtmlParagraphs("<html><body><p><![CDATA[\x8e\x9bw]]></p></body></html>",
                                        "ch1.xhtml");
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::BookInvalid);
        QVERIFY(QString::fromStdString(r.error().message).contains("ch1.xhtml"));
        QVERIFY(QString::fromStdString(r.error().message).contains("UTF-8"));
    }

    // fuzz_epub: a character reference to a surrogate gave bytes that are not UTF-8.
    void surrogateReference() {
        auto r = books::xhtmlParagraphs("<html><body><p>a&#xdd48;b</p></body></html>", "ch.xhtml");
        QVERIFY(r);
        QCOMPARE(r->size(), size_t(1));
        // Each byte of the non-character becomes U+FFFD (utf8::sanitize).
        QCOMPARE(QString::fromStdString(r->front()), QString::fromUtf8("a\uFFFD\uFFFD\uFFFDb"));
    }

    // fuzz_run_folder: a run.json number too large for its field (bptt_windows = 2e97)
    // was converted to int (undefined behaviour), and no setting of a resumed run was
    // checked. Now every field is type- and range-checked and the settings validated.
    void runJsonThatLies_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::newRow("huge") << "bptt_windows"
                              << "2e97";
        QTest::newRow("negative") << "batch_size"
                                  << "-3";
        QTest::newRow("zero window") << "window"
                                     << "0";
        QTest::newRow("string") << "lr"
                                << "\"fast\"";
        QTest::newRow("unknown mode") << "mode"
                                      << "\"sideways\"";
        QTest::newRow("overlap") << "overlap"
                                 << "500";
        QTest::newRow("device") << "device"
                                << "\"tpu\"";
        QTest::newRow("precision") << "precision"
                                   << "\"bf16\""; // autocast on the CPU
        QTest::newRow("seed") << "seed"
                              << "-1";
        QTest::newRow("curriculum not an array") << "curriculum"
                                                 << "\"1,2\"";
        QTest::newRow("curriculum of zero windows") << "curriculum"
                                                    << "[0, 20]";
        QTest::newRow("curriculum short of W") << "curriculum"
                                               << "[1, 2]"; // no budget either
        QTest::newRow("mixed lengths, no curriculum") << "mix_shorter"
                                                      << "0.5";
    }
    void runJsonThatLies() {
        QFETCH(QString, field);
        QFETCH(QString, value);
        TrainConfig c;
        c.outDir = m_dir.filePath("run-lies").toStdString();
        c.baseModel = "/models/base";
        c.corpus = {"/books"};
        c.validation = {"/val"};
        const QString good = QString::fromStdString(runConfigText(c));
        QVERIFY(QDir().mkpath(QString::fromStdString(c.outDir)));
        const QString runJson = QString::fromStdString(c.outDir) + "/run.json";
        QVERIFY(baton::test::writeFile(runJson, good.toUtf8()));
        BATON_VERIFY_OK(readRunConfig(c.outDir));
        QRegularExpression line("\"" + field + "\": [^,\n]*");
        QVERIFY(good.contains(line));
        QString bad = good;
        bad.replace(line, "\"" + field + "\": " + value);
        QVERIFY(baton::test::writeFile(runJson, bad.toUtf8()));
        auto r = readRunConfig(c.outDir);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::BadConfig);
        QVERIFY2(QString::fromStdString(r.error().message).contains("run.json is damaged"),
                 r.error().message.c_str());
    }

    // fuzz_run_folder (found by reading its target): LATEST is read from the run's folder
    // and joined to checkpoints/; "../x" led outside the run, so --resume would have
    // loaded a model folder from anywhere.
    void latestStaysInsideTheRun() {
        const QString run = m_dir.filePath("run");
        QVERIFY(QDir().mkpath(run + "/checkpoints/step-000000007"));
        QVERIFY(QDir().mkpath(m_dir.filePath("elsewhere")));
        const std::string dir = run.toStdString();
        for (const char* latest : {"../../elsewhere\n", "/etc\n", "step-7/../../..", "", "step-"}) {
            QVERIFY(baton::test::writeFile(run + "/LATEST", latest));
            QCOMPARE(latestCheckpoint(dir), std::string());
        }
        QVERIFY(baton::test::writeFile(run + "/LATEST", "step-000000007\n"));
        QCOMPARE(latestCheckpoint(dir), dir + "/checkpoints/step-000000007");
        QVERIFY(isCheckpointName(checkpointName(42)));
        QCOMPARE(checkpointName(42), std::string("step-000000042"));
    }
};

QTEST_GUILESS_MAIN(TestFuzzFindings)
#include "tst_fuzz_findings.moc"
