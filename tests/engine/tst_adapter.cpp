// Recurrence adapters (train --adapter, LoadOptions::adapter): a run that trains the
// module alone on a frozen baseline base writes OUT/adapter (the module, baton.json
// and the base's identity, nothing of the base); the adapter loads onto its base, as
// a recurrent model whose base weights are the base's own, and is refused on any other
// model; baton-cli generate --adapter writes with it; the CLI's wrong uses are usage
// errors.
#include "cli_run.h"
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include <baton/engine/model.h>
#include <baton/engine/training.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace baton::engine;
using baton::test::cli;

class TestAdapter : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_corpus, m_val, m_adapter;

    TrainConfig adapterRun(const QString& out, const std::string& base) const {
        TrainConfig c;
        c.outDir = m_tmp.filePath(out).toStdString();
        c.baseModel = base;
        c.mode = TrainMode::Recurrent;
        c.scope = TrainScope::Recurrence;
        c.adapter = true;
        c.corpus = {m_corpus.toStdString()};
        c.validation = {m_val.toStdString()};
        c.window = 16;
        c.overlap = 4;
        c.bpttWindows = 2;
        c.batchSize = 2;
        c.steps = 3;
        c.lr = 3e-3;
        c.checkpointEverySteps = 1000;
        c.validateEveryTokens = 0;
        return c;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        const QString austen = baton::test::sharedPath("corpus/books");
        QVERIFY2(QDir(austen).exists(), qPrintable(baton::test::missingMessage(austen)));
        const QStringList books = QDir(austen).entryList({"*.txt"}, QDir::Files, QDir::Name);
        QVERIFY(!books.isEmpty());
        const QByteArray text = baton::test::readFile(austen + "/" + books.first());
        m_corpus = m_tmp.filePath("corpus");
        QDir().mkpath(m_corpus);
        QVERIFY(baton::test::writeFile(m_corpus + "/part.txt", text.mid(20000, 12000)));
        m_val = m_tmp.filePath("val.txt");
        QVERIFY(baton::test::writeFile(m_val, text.mid(60000, 3000)));
    }

    void anAdapterRunWritesTheModuleAlone() {
        auto r = train(adapterRun("run", baton::test::fixture()));
        BATON_VERIFY_OK(r);
        m_adapter = QString::fromStdString(r->modelDir);
        QCOMPARE(m_adapter, m_tmp.filePath("run/adapter"));
        QCOMPARE(QDir(m_adapter).entryList(QDir::Files, QDir::Name),
                 (QStringList{"adapter.json", "baton.json", "recurrence.safetensors"}));
        QVERIFY(!QDir(m_tmp.filePath("run/model")).exists());
        // Small beside its base.
        const qint64 module = QFileInfo(m_adapter + "/recurrence.safetensors").size();
        const qint64 base = QFileInfo(baton::test::fixtureDir() + "/model.safetensors").size();
        QVERIFY2(module * 10 < base, qPrintable(QString("%1 of %2").arg(module).arg(base)));
    }

    void itLoadsOnItsBaseAndNoOther() {
        QVERIFY(!m_adapter.isEmpty());
        auto base = Model::load(baton::test::fixture());
        BATON_VERIFY_OK(base);
        LoadOptions o;
        o.adapter = m_adapter.toStdString();
        auto withAdapter = Model::load(baton::test::fixture(), o);
        BATON_VERIFY_OK(withAdapter);
        const ModelInfo& info = (*withAdapter)->info();
        QVERIFY(info.recurrence.has_value());
        QCOMPARE(info.recurrence->window, 16);
        QCOMPARE(info.adapter, m_adapter.toStdString());
        QVERIFY(info.identity != (*base)->info().identity); // saved states never mix
        // The base's weights are the base's own: the same logits with the state off (a
        // window read without a state is the base model alone).
        const std::vector<int32_t> ids = (*base)->tokenizer()->encode("It was a fine day.");
        auto a = (*base)->windowLogits(ids);
        auto b = (*withAdapter)->windowLogits(ids);
        BATON_VERIFY_OK(a);
        BATON_VERIFY_OK(b);
        QCOMPARE(a->size(), b->size());
        double worst = 0;
        for (size_t i = 0; i < a->size(); ++i)
            worst = std::max(worst, double(std::fabs((*a)[i] - (*b)[i])));
        QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));

        // Another model: refused, naming the base it was trained on.
        const QString other = m_tmp.filePath("other");
        QVERIFY(baton::test::copyFolder(baton::test::fixtureDir(), other));
        {
            QFile f(other + "/model.safetensors");
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek(f.size() - 1));
            char c = 0;
            QVERIFY(f.getChar(&c));
            QVERIFY(f.seek(f.size() - 1));
            QVERIFY(f.putChar(char(c ^ 1)));
        }
        auto wrong = Model::load(other.toStdString(), o);
        QVERIFY(!wrong);
        QCOMPARE(wrong.error().code, ErrorCode::ConfigMismatch);
        QVERIFY2(wrong.error().message.find("was trained on") != std::string::npos,
                 wrong.error().message.c_str());
        // A model with a recurrence module of its own: refused.
        const QString recurrent = m_tmp.filePath("recurrent");
        RecurrenceConfig rec;
        rec.window = 16;
        rec.overlap = 4;
        QVERIFY(baton::test::writeRecurrentFixture(recurrent, rec));
        auto onRecurrent = Model::load(recurrent.toStdString(), o);
        QVERIFY(!onRecurrent);
        QCOMPARE(onRecurrent.error().code, ErrorCode::InvalidArgument);
        // No adapter there.
        o.adapter = m_tmp.filePath("corpus").toStdString();
        QVERIFY(!Model::load(baton::test::fixture(), o));
        // And an adapter is never trained on a recurrent base.
        auto refused = train(adapterRun("from-recurrent", recurrent.toStdString()));
        QVERIFY(!refused);
        QVERIFY(refused.error().message.find("baseline") != std::string::npos);
    }

    void anAdapterNamesItsBasesRunForARunsModel() {
        // A base that is a run's output (RUN/model) is named by the run.
        const QString base = m_tmp.filePath("emma-run/model");
        QVERIFY(baton::test::copyFolder(baton::test::fixtureDir(), base));
        auto r = train(adapterRun("named", base.toStdString()));
        BATON_VERIFY_OK(r);
        const QJsonObject j =
            QJsonDocument::fromJson(
                baton::test::readFile(QString::fromStdString(r->modelDir) + "/adapter.json"))
                .object();
        QCOMPARE(j["base_name"].toString(), QStringLiteral("emma-run"));
    }

    void theCliTrainsAndWritesWithIt() {
        QVERIFY(!m_adapter.isEmpty());
        const auto gen = cli({"generate", "--model", baton::test::fixtureDir(), "--adapter",
                              m_adapter, "--prompt", "Once", "--max-tokens", "8", "--json"});
        QVERIFY2(gen.exitCode == 0, gen.err.constData());
        // --adapter with another scope is a usage error; the run is not started.
        const QString out = m_tmp.filePath("cli-run");
        const auto bad = cli({"train", "--base", baton::test::fixtureDir(), "--corpus", m_corpus,
                              "--out", out, "--adapter", "--train", "all"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(!QDir(out).exists());
        const auto info = cli(
            {"info", "--model", baton::test::fixtureDir(), "--adapter", m_tmp.filePath("nowhere")});
        QCOMPARE(info.exitCode, 1);
        // eval --paired-with the base: the adapter is --model's alone, so the base
        // scores as it does with the adapter's state switched off.
        const QString text = m_tmp.filePath("val.txt");
        const auto paired = cli({"eval", "--model", baton::test::fixtureDir(), "--adapter",
                                 m_adapter, "--paired-with", baton::test::fixtureDir(), "--window",
                                 "16", "--overlap", "0", "--state", "on,off", "--json", text});
        QVERIFY2(paired.exitCode == 0, paired.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(paired.out).object();
        double off = -1, base = -2;
        for (const QJsonValue& r : j["rows"].toArray()) {
            const QJsonObject row = r.toObject();
            if (row["state"].toString() == "off")
                off = row["nll_sum"].toDouble();
            if (row["state"].toString() == "none")
                base = row["nll_sum"].toDouble();
        }
        QCOMPARE(base, off);
    }
};

QTEST_GUILESS_MAIN(TestAdapter)
#include "tst_adapter.moc"
