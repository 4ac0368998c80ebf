// GPT-2 byte-level BPE: exact on the golden file from an independent
// implementation, lossless on any bytes, and strict about malformed files.
#include "test_support.h"
#include "verify_ok.h"

#include "tokenizer/gpt2_bpe.h"
#include "tokenizer/pretokenizer.h"

#include <baton/engine/tokenizer.h>

#include <QJsonArray>
#include <QtTest>

#include <random>

using namespace baton::engine;
using baton::test::sharedPath;

class TestGpt2Tokenizer : public QObject {
    Q_OBJECT
    std::shared_ptr<const Tokenizer> m_tok;

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        const QString dir = sharedPath("tokenizers/gpt2");
        QVERIFY2(QFile::exists(dir + "/vocab.json"), qPrintable(baton::test::missingMessage(dir)));
        auto tok = loadTokenizer(dir.toStdString());
        BATON_VERIFY_OK(tok);
        m_tok = *tok;
        QCOMPARE(m_tok->kind(), std::string("gpt2-bpe"));
        QCOMPARE(m_tok->vocabSize(), 50257);
        QCOMPARE(m_tok->eosId(), 50256);
    }

    void golden() {
        const QString path = sharedPath("tokenizers/gpt2/golden.jsonl");
        QFile f(path);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(baton::test::missingMessage(path)));
        int lines = 0;
        while (!f.atEnd()) {
            const QByteArray line = f.readLine().trimmed();
            if (line.isEmpty())
                continue;
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            const std::string text = o["text"].toString().toStdString();
            std::vector<int32_t> expected;
            for (const auto v : o["ids"].toArray())
                expected.push_back(v.toInt());
            const auto ids = m_tok->encode(text);
            if (ids != expected) {
                QString got, want;
                for (auto i : ids)
                    got += QString::number(i) + " ";
                for (auto i : expected)
                    want += QString::number(i) + " ";
                QFAIL(qPrintable("line " + QString::number(lines + 1) + ": " +
                                 QString::fromStdString(text).left(60) + "\n got:  " + got +
                                 "\n want: " + want));
            }
            QCOMPARE(QByteArray::fromStdString(m_tok->decode(ids)),
                     QByteArray::fromStdString(text));
            ++lines;
        }
        QVERIFY(lines >= 40);
    }

    void endOfTextInTextIsOrdinaryText() {
        const auto ids = m_tok->encode("a <|endoftext|> b");
        for (auto id : ids)
            QVERIFY(id != m_tok->eosId());
        QCOMPARE(m_tok->decode(ids), std::string("a <|endoftext|> b"));
        // The special token itself contributes no text when the engine inserts it.
        QCOMPARE(m_tok->tokenBytes(m_tok->eosId()), std::string());
    }

    void roundTripRandomUtf8() {
        std::mt19937 rng(1234);
        const std::vector<std::string> alphabet = {"a",
                                                   "Z",
                                                   " ",
                                                   "  ",
                                                   "\n",
                                                   "\t",
                                                   "'s",
                                                   "'",
                                                   "9",
                                                   "42",
                                                   "\xC3\xA9",
                                                   "\xE2\x80\x94",
                                                   "\xF0\x9F\xA4\x96",
                                                   "\xE6\x97\xA5",
                                                   ".",
                                                   "!?",
                                                   "\r\n",
                                                   "\xC2\xA0",
                                                   "\xE3\x80\x80",
                                                   "<|endoftext|>",
                                                   "\xD9\xA3",
                                                   "ll",
                                                   "ve"};
        for (int trial = 0; trial < 500; ++trial) {
            std::string s;
            const int n = static_cast<int>(rng() % 40);
            for (int i = 0; i < n; ++i)
                s += alphabet[rng() % alphabet.size()];
            QCOMPARE(QByteArray::fromStdString(m_tok->decode(m_tok->encode(s))),
                     QByteArray::fromStdString(s));
        }
    }

    // The rule for invalid UTF-8: every byte is kept (byte-level BPE can encode any
    // byte), invalid bytes are pre-tokenized like punctuation, and decoding gives
    // back exactly the input.
    void invalidUtf8IsLossless() {
        const std::string bad = std::string("caf\xC3") + " ok \xFF\xFE\x80 end\xE2\x82";
        const auto ids = m_tok->encode(bad);
        QCOMPARE(QByteArray::fromStdString(m_tok->decode(ids)), QByteArray::fromStdString(bad));
        std::mt19937 rng(99);
        for (int trial = 0; trial < 300; ++trial) {
            std::string s(rng() % 30, '\0');
            for (auto& c : s)
                c = static_cast<char>(rng() % 256);
            QCOMPARE(QByteArray::fromStdString(m_tok->decode(m_tok->encode(s))),
                     QByteArray::fromStdString(s));
        }
    }

    void preTokenizerSplits() {
        auto pieces = [](const std::string& s) {
            QStringList out;
            for (auto [b, e] : gpt2PreTokenize(s))
                out << QString::fromStdString(s.substr(b, e - b));
            return out;
        };
        QCOMPARE(pieces("Hello world"), (QStringList{"Hello", " world"}));
        QCOMPARE(pieces("I'll go"), (QStringList{"I", "'ll", " go"}));
        QCOMPARE(pieces("a   b"), (QStringList{"a", "  ", " b"}));
        QCOMPARE(pieces("x\n\ny"), (QStringList{"x", "\n", "\n", "y"}));
        QCOMPARE(pieces("end  "), (QStringList{"end", "  "}));
        QCOMPARE(pieces("9 apples!!"), (QStringList{"9", " apples", "!!"}));
    }

    void longRunsAreFast() {
        // 200 KB of one piece must not take quadratic time.
        std::string s(200000, '=');
        QElapsedTimer t;
        t.start();
        const auto ids = m_tok->encode(s);
        QVERIFY(!ids.empty());
        QCOMPARE(m_tok->decode(ids), s);
        QVERIFY2(t.elapsed() < 20000, "encoding a long run took far too long");
    }

    void malformedFilesAreRefused_data() {
        QTest::addColumn<QByteArray>("vocab");
        QTest::addColumn<QByteArray>("merges");
        QTest::addColumn<int>("code");
        const QByteArray okMerges = "#version: 0.2\n";
        QTest::newRow("not json") << QByteArray("{oops") << okMerges << int(ErrorCode::InvalidJson);
        QTest::newRow("not utf-8")
            << QByteArray("{\"a\xFF\": 1}") << okMerges << int(ErrorCode::InvalidUtf8);
        QTest::newRow("array") << QByteArray("[1, 2]") << okMerges
                               << int(ErrorCode::TokenizerInvalid);
        QTest::newRow("missing bytes")
            << QByteArray("{\"a\": 0}") << okMerges << int(ErrorCode::TokenizerInvalid);
        QTest::newRow("negative id")
            << QByteArray("{\"a\": -1}") << okMerges << int(ErrorCode::TokenizerInvalid);
    }
    void malformedFilesAreRefused() {
        QFETCH(QByteArray, vocab);
        QFETCH(QByteArray, merges);
        QFETCH(int, code);
        auto r = Gpt2BpeTokenizer::fromData(vocab.toStdString(), merges.toStdString());
        QVERIFY(!r.ok());
        QCOMPARE(int(r.error().code), code);
        QVERIFY(!r.error().message.empty());
    }

    void mergeNamingUnknownTokenIsRefused() {
        const QByteArray vocab = baton::test::readFile(sharedPath("tokenizers/gpt2/vocab.json"));
        auto r = Gpt2BpeTokenizer::fromData(vocab.toStdString(), "#version: 0.2\nQQQQ ZZZZ\n");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::TokenizerInvalid);
        QVERIFY(r.error().message.find("line 2") != std::string::npos);
        auto r2 = Gpt2BpeTokenizer::fromData(vocab.toStdString(), "#version: 0.2\nonly-one-part\n");
        QVERIFY(!r2.ok());
    }

    void missingTokenizerFiles() {
        QTemporaryDir dir;
        auto r = loadTokenizer(dir.path().toStdString());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::FileNotFound);
    }
};

QTEST_GUILESS_MAIN(TestGpt2Tokenizer)
#include "tst_gpt2_tokenizer.moc"
