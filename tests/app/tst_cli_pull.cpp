// baton-cli pull as a user runs it, against the hub stand-in on loopback (HF_ENDPOINT):
// the fixture GPT-2 downloaded into the data folder, printed, loadable with --model;
// pulled again, already there; usage errors and the hub's refusals as exit codes.
#include "hub_stand_in.h"
#include "test_support.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

using baton::test::HubStandIn;

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

std::string fixtureFile(const char* name) {
    return baton::test::readFile(baton::test::fixtureDir() + "/" + name).toStdString();
}

} // namespace

class TestCliPull : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::unique_ptr<HubStandIn> m_hub;

    Run cli(const QStringList& args) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HF_ENDPOINT", QString::fromStdString(m_hub->endpoint()));
        env.insert("XDG_DATA_HOME", m_tmp.path() + "/data"); // never the user's own
        env.remove("HF_TOKEN");
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(BATON_CLI_PATH), args);
        p.closeWriteChannel();
        p.waitForFinished(120000);
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                p.readAllStandardOutput(), p.readAllStandardError()};
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        QVERIFY2(QFile::exists(baton::test::fixtureDir() + "/config.json"),
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        m_hub = std::make_unique<HubStandIn>();
        HubStandIn::Repo repo;
        for (const char* name : {"config.json", "vocab.json", "merges.txt"})
            repo.files[name] = {fixtureFile(name), false};
        repo.files["model.safetensors"] = {fixtureFile("model.safetensors"), true};
        repo.files["pytorch_model.bin"] = {"not to be fetched", true};
        m_hub->addRepo("baton-test/gpt2-tiny", repo);
        // The same weights as a one-shard checkpoint with its index.
        const std::string weights = fixtureFile("model.safetensors");
        quint64 headerLength = 0;
        std::memcpy(&headerLength, weights.data(), 8); // little-endian, as the format says
        const QJsonObject header =
            QJsonDocument::fromJson(QByteArray::fromStdString(weights.substr(8, headerLength)))
                .object();
        QJsonObject map;
        for (const QString& name : header.keys())
            if (name != QLatin1String("__metadata__"))
                map[name] = QStringLiteral("model-00001-of-00001.safetensors");
        QVERIFY(map.size() > 4);
        repo.files.erase("model.safetensors");
        repo.files["model-00001-of-00001.safetensors"] = {weights, true};
        repo.files["model.safetensors.index.json"] = {
            QJsonDocument(QJsonObject{{"metadata", QJsonObject{}}, {"weight_map", map}})
                .toJson()
                .toStdString(),
            false};
        m_hub->addRepo("baton-test/gpt2-sharded", repo);
    }
    void cleanupTestCase() { m_hub.reset(); }

    void pullsIntoTheDataFolderAndTheModelLoads() {
        const Run r = cli({"pull", "baton-test/gpt2-tiny"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString folder = m_tmp.path() + "/data/baton/models/baton-test--gpt2-tiny";
        QCOMPARE(r.out.trimmed(), folder.toUtf8());
        QVERIFY(r.err.contains("every file checked"));
        QVERIFY(r.err.contains("--model " + folder.toUtf8()));
        QVERIFY(!QFile::exists(folder + "/pytorch_model.bin"));
        const Run info = cli({"info", "--model", folder});
        QVERIFY2(info.exitCode == 0, info.err.constData());
        // Again: already there, as JSON.
        const Run again = cli({"pull", "baton-test/gpt2-tiny", "--json"});
        QCOMPARE(again.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(again.out).object();
        QCOMPARE(j["already_there"].toBool(), true);
        QCOMPARE(j["loadable"].toBool(), true);
        QCOMPARE(j["folder"].toString(), folder);
    }

    void aShardedCheckpointPullsAndLoads() {
        const Run r = cli({"pull", "baton-test/gpt2-sharded", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["loadable"].toBool(), true);
        const QString folder = j["folder"].toString();
        QVERIFY(QFile::exists(folder + "/model-00001-of-00001.safetensors"));
        QVERIFY(!QFile::exists(folder + "/model.safetensors"));
        const Run gen =
            cli({"generate", "--model", folder, "--prompt", "Once", "--max-tokens", "4"});
        QVERIFY2(gen.exitCode == 0, gen.err.constData());
    }

    void errorsAndTheirExitCodes() {
        QCOMPARE(cli({"pull", "not a repo"}).exitCode, 2);
        QCOMPARE(cli({"pull"}).exitCode, 2);
        const Run missing = cli({"pull", "nobody/nothing", "--dest", m_tmp.path() + "/x"});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains("HF_TOKEN") && missing.err.contains("[unauthorized]"),
                 missing.err.constData());
        const Run help = cli({"pull", "--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("HF_ENDPOINT"));
    }
};

QTEST_GUILESS_MAIN(TestCliPull)
#include "tst_cli_pull.moc"
