// A checkpoint's weight files (weight_files.h), torch-free: a sharded checkpoint
// (model.safetensors.index.json and its shards, as transformers writes a large model)
// opens as its shards and matches GPT-2's tensors across them; an index that names a
// file outside the folder, a missing shard, a tensor in the wrong shard or in two, or
// no weight map is refused with its reason. (Loading the shards into a model and its
// logits: tst_checkpoint.)
#include "stored_tensors.h"
#include "test_support.h"
#include "verify_ok.h"

#include "model/hf_config.h"
#include "model/safetensors.h"
#include "model/weight_files.h"
#include "util/files.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <vector>

using namespace baton::engine;

using baton::test::StoredTensor;

class TestWeightFiles : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::vector<StoredTensor> m_tensors; // the fixture's, in file order
    ModelConfig m_config;
    int m_case = 0;

    bool writeShard(const QString& path, size_t from, size_t to) {
        return baton::test::writeTensors(
            path.toStdString(), {m_tensors.begin() + long(from), m_tensors.begin() + long(to)});
    }

    // A folder with the fixture's tensors in two shards and an index; `map` edits the
    // index's entry for each tensor (by default the shard that holds it).
    QString sharded(const std::function<std::string(size_t, const std::string&)>& map = {},
                    const char* indexText = nullptr) {
        const QString dir = m_tmp.filePath(QString("case%1").arg(m_case++));
        QDir().mkpath(dir);
        const size_t half = m_tensors.size() / 2;
        if (!writeShard(dir + "/model-00001-of-00002.safetensors", 0, half) ||
            !writeShard(dir + "/model-00002-of-00002.safetensors", half, m_tensors.size()))
            return {};
        std::string index = R"({"metadata": {"total_size": 0}, "weight_map": {)";
        for (size_t i = 0; i < m_tensors.size(); ++i) {
            std::string shard =
                i < half ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
            if (map)
                shard = map(i, shard);
            index += (i ? ", \"" : "\"") + m_tensors[i].name + "\": \"" + shard + "\"";
        }
        index += "}}";
        baton::test::writeFile(dir + "/model.safetensors.index.json",
                               indexText ? QByteArray(indexText)
                                         : QByteArray::fromStdString(index));
        return dir;
    }

    static void expectRefused(const QString& dir, ErrorCode code, const char* mention) {
        auto files = openWeightFiles(dir.toStdString());
        QVERIFY2(!files.ok(), "a bad index was accepted");
        QVERIFY2(files.error().code == code, files.error().message.c_str());
        QVERIFY2(files.error().message.find(mention) != std::string::npos,
                 files.error().message.c_str());
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        const std::string fixture = baton::test::fixtureDir().toStdString();
        m_tensors = baton::test::readTensors(files::join(fixture, "model.safetensors"));
        QVERIFY2(m_tensors.size() > 4,
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        auto config = readHfConfig(files::join(fixture, "config.json"));
        QVERIFY(config.ok());
        m_config = *config;
    }

    void shardsOpenAndMatchAcrossFiles() {
        const QString dir = sharded();
        QVERIFY(!dir.isEmpty());
        QVERIFY(refusePickles(dir.toStdString()).ok()); // no model.safetensors, no pickle
        auto files = openWeightFiles(dir.toStdString());
        BATON_VERIFY_OK(files);
        QCOMPARE(files->size(), size_t(2));
        auto matched = matchGpt2Tensors(*files, m_config);
        BATON_VERIFY_OK(matched);
        QCOMPARE(matched->size(), expectedGpt2Tensors(m_config).size());
        // Each tensor is found in the shard that holds it.
        size_t inSecond = 0;
        for (const auto& [name, where] : *matched) {
            QVERIFY((*files)[where.file].find(where.tensor->name) == where.tensor);
            inSecond += where.file;
        }
        QVERIFY(inSecond > 0 && inSecond < matched->size());
    }

    void aSingleFileWinsOverAnIndex() {
        const QString dir = sharded();
        QVERIFY(QFile::copy(baton::test::fixtureDir() + "/model.safetensors",
                            dir + "/model.safetensors"));
        auto files = openWeightFiles(dir.toStdString());
        QVERIFY(files.ok());
        QCOMPARE(files->size(), size_t(1));
    }

    void badIndexesAreRefused() {
        expectRefused(sharded({}, R"({"metadata": {}})"), ErrorCode::BadHeader, "weight_map");
        expectRefused(sharded({}, R"({"weight_map": {}})"), ErrorCode::BadHeader, "weight_map");
        expectRefused(sharded({}, "{not json"), ErrorCode::BadHeader, "weight_map");
        expectRefused(sharded({}, R"({"weight_map": {"wte.weight": 3}})"), ErrorCode::BadHeader,
                      "not a string");
        // Outside the folder, or in a subfolder.
        for (const char* name :
             {"../model-00001-of-00002.safetensors", "sub/x.safetensors", "/etc/passwd", ".."})
            expectRefused(sharded([&](size_t i, const std::string& s) {
                              return i == 0 ? std::string(name) : s;
                          }),
                          ErrorCode::BadHeader, "a shard must be a file of the model's folder");
        // A shard that is not there.
        expectRefused(sharded([](size_t i, const std::string& s) {
                          return i == 0 ? std::string("model-00003-of-00002.safetensors") : s;
                      }),
                      ErrorCode::FileNotFound, "model-00003-of-00002.safetensors");
        // A tensor put in the other shard.
        expectRefused(sharded([](size_t i, const std::string& s) {
                          return i == 0 ? std::string("model-00002-of-00002.safetensors") : s;
                      }),
                      ErrorCode::MissingTensor, "which does not hold it");
    }

    void aTensorInTwoShardsIsRefused() {
        const QString dir = sharded();
        // A third shard holds the first tensor again, under its "transformer." name.
        StoredTensor again = m_tensors[0];
        QVERIFY(again.name.rfind("transformer.", 0) != 0);
        again.name = "transformer." + again.name;
        QVERIFY(baton::test::writeTensors((dir + "/extra.safetensors").toStdString(), {again}));
        QString index =
            QString::fromUtf8(baton::test::readFile(dir + "/model.safetensors.index.json"));
        index.replace(QStringLiteral("\"weight_map\": {"),
                      QStringLiteral("\"weight_map\": {\"%1\": \"extra.safetensors\", ")
                          .arg(QString::fromStdString(again.name)));
        baton::test::writeFile(dir + "/model.safetensors.index.json", index.toUtf8());
        auto files = openWeightFiles(dir.toStdString());
        BATON_VERIFY_OK(files);
        QCOMPARE(files->size(), size_t(3));
        auto matched = matchGpt2Tensors(*files, m_config);
        QVERIFY(!matched.ok());
        QCOMPARE(matched.error().code, ErrorCode::BadHeader);
        QVERIFY2(matched.error().message.find("appears twice") != std::string::npos,
                 matched.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestWeightFiles)
#include "tst_weight_files.moc"
