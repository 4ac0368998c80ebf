// SentencePiece inside a process that also runs LibTorch (through the dlopen'ed
// module), training through the trainer API, lossless round trips, and models
// that carry tokenizer.model.
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include "tokenizer/sentencepiece_tokenizer.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/scoring.h>

#include <QTemporaryDir>
#include <QtTest>

using namespace baton::engine;

namespace {

std::map<std::string, std::string> losslessOptions(const std::string& type, int vocab) {
    return {{"model_type", type},
            {"vocab_size", std::to_string(vocab)},
            {"character_coverage", "1.0"},
            {"byte_fallback", "true"},
            {"add_dummy_prefix", "false"},
            {"remove_extra_whitespaces", "false"},
            {"normalization_rule_name", "identity"},
            {"split_digits", "true"},
            {"allow_whitespace_only_pieces", "true"},
            {"num_threads", "2"},
            {"minloglevel", "2"}};
}

} // namespace

class TestSentencePiece : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::string m_corpus;

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        const QString book = baton::test::sharedPath("corpus/books/austen-emma.txt");
        QVERIFY2(QFile::exists(book), qPrintable(baton::test::missingMessage(book)));
        m_corpus = baton::test::readFile(book).left(400000).toStdString();
    }

    void trainsAndRoundTrips_data() {
        QTest::addColumn<QString>("type");
        QTest::newRow("bpe") << "bpe";
        QTest::newRow("unigram") << "unigram";
    }
    void trainsAndRoundTrips() {
        QFETCH(QString, type);
        const std::string path = m_tmp.filePath(type + ".model").toStdString();
        auto trained = SentencePieceTokenizer::train(
            {m_corpus}, losslessOptions(type.toStdString(), 600), path);
        BATON_VERIFY_OK(trained);
        auto tok = SentencePieceTokenizer::fromFile(path);
        BATON_VERIFY_OK(tok);
        QCOMPARE((*tok)->vocabSize(), 600);
        QCOMPARE((*tok)->kind(), std::string("sentencepiece"));
        for (const std::string& s : {std::string("Emma Woodhouse, handsome, clever, and rich."),
                                     std::string("  two spaces\nand a new line\n\n"),
                                     std::string("na\xC3\xAFve caf\xC3\xA9 \xF0\x9F\xA4\x96"),
                                     std::string("1234 <|endoftext|> \xE6\x97\xA5\xE6\x9C\xAC")}) {
            const auto ids = (*tok)->encode(s);
            QVERIFY(!ids.empty());
            QCOMPARE(QByteArray::fromStdString((*tok)->decode(ids)), QByteArray::fromStdString(s));
            StreamDecoder dec(*tok);
            std::string streamed;
            for (auto id : ids)
                streamed += dec.push(id);
            streamed += dec.finish();
            QCOMPARE(QByteArray::fromStdString(streamed), QByteArray::fromStdString(s));
        }
        // Invalid UTF-8: each bad byte becomes U+FFFD before encoding.
        QCOMPARE((*tok)->decode((*tok)->encode("a\xFF"
                                               "b")),
                 std::string("a\xEF\xBF\xBD"
                             "b"));
    }

    void corruptModelFile() {
        const std::string path = m_tmp.filePath("bad.model").toStdString();
        baton::test::writeFile(QString::fromStdString(path), "this is not a protobuf");
        auto tok = SentencePieceTokenizer::fromFile(path);
        QVERIFY(!tok.ok());
        QCOMPARE(tok.error().code, ErrorCode::TokenizerInvalid);
    }

    void badTrainerOptionIsAnError() {
        auto r = SentencePieceTokenizer::train({m_corpus}, {{"model_type", "nonsense"}},
                                               m_tmp.filePath("x.model").toStdString());
        QVERIFY(!r.ok());
        QVERIFY(!QFile::exists(m_tmp.filePath("x.model")));
    }

    void modelWithSentencePieceTokenizer() {
        const QString dir = m_tmp.filePath("spm-model");
        QDir().mkpath(dir);
        QVERIFY(SentencePieceTokenizer::train({m_corpus}, losslessOptions("bpe", 500),
                                              (dir + "/tokenizer.model").toStdString())
                    .ok());
        ModelConfig c;
        c.nLayer = 2;
        c.nHead = 2;
        c.nEmbd = 32;
        c.nInner = 128;
        c.nPositions = 64;
        c.vocabSize = 500;
        QVERIFY(baton::test::writeTinyGpt2(dir.toStdString(), c));
        auto model = Model::load(dir.toStdString());
        BATON_VERIFY_OK(model);
        QCOMPARE((*model)->info().tokenizerKind, std::string("sentencepiece"));
        auto score = scoreText(**model, "Emma was not at all sure of that.", {});
        QVERIFY(score.ok());
        QVERIFY(score->scoredTokens > 3);
        auto gen = Generator::create(*model);
        QVERIFY(gen.ok());
        QVERIFY((*gen)->appendText("Emma").ok());
        SamplingOptions o;
        o.maxTokens = 20;
        auto r = (*gen)->generate(o);
        QVERIFY(r.ok());
        QCOMPARE(r->tokens.size(), size_t(20));
    }

    void tokenizerLargerThanModelIsRefused() {
        const QString dir = m_tmp.filePath("too-small");
        QDir().mkpath(dir);
        QVERIFY(SentencePieceTokenizer::train({m_corpus}, losslessOptions("bpe", 500),
                                              (dir + "/tokenizer.model").toStdString())
                    .ok());
        ModelConfig c;
        c.nLayer = 1;
        c.nHead = 2;
        c.nEmbd = 16;
        c.nInner = 64;
        c.nPositions = 32;
        c.vocabSize = 300;
        QVERIFY(baton::test::writeTinyGpt2(dir.toStdString(), c));
        auto model = Model::load(dir.toStdString());
        QVERIFY(!model.ok());
        QCOMPARE(model.error().code, ErrorCode::TokenizerMismatch);
    }
};

QTEST_GUILESS_MAIN(TestSentencePiece)
#include "tst_sentencepiece.moc"
