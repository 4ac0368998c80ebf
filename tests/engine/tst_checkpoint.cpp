// Loading Hugging Face GPT-2 folders: every bad-file case gets its own clear
// error before anything is allocated, and converted checkpoints (F16, BF16,
// "transformer." prefix, extra buffers) load and agree within their precision.
#include "stored_tensors.h"
#include "test_support.h"
#include "verify_ok.h"

#include "kernels/weight_matrix.h"
#include "model/checkpoint.h"
#include "model/identity_memo.h"
#include "model/model_impl.h"
#include "model/safetensors.h"
#include "util/files.h"
#include "util/hash.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>

#include <QDir>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <functional>

using namespace baton::engine;

namespace {

using Tensor = baton::test::StoredTensor;
using baton::test::readTensors;
using baton::test::writeTensors;

Tensor* find(std::vector<Tensor>& ts, const std::string& name) {
    for (auto& t : ts)
        if (t.name == name)
            return &t;
    return nullptr;
}

// Re-encodes every F32 tensor with `convert` (2 bytes per value).
void convert16(std::vector<Tensor>& ts, StDtype dtype, uint16_t (*convert)(float)) {
    for (auto& t : ts) {
        std::vector<char> out(t.bytes.size() / 2);
        for (size_t i = 0; i < t.bytes.size() / 4; ++i) {
            float f;
            std::memcpy(&f, t.bytes.data() + 4 * i, 4);
            const uint16_t h = convert(f);
            std::memcpy(out.data() + 2 * i, &h, 2);
        }
        t.bytes = std::move(out);
        t.dtype = dtype;
    }
}

} // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT

    // The rows of a test run once per stored dtype (column "stored").
    static void storedDtypes() {
        QTest::addColumn<QString>("stored");
        QTest::newRow("f32") << "f32";
        QTest::newRow("f16") << "f16";
        QTest::newRow("bf16") << "bf16";
    }

    static float copiedLnfBias(const std::string& folder) {
        auto copied = loadGpt2(folder, CancelToken(), {}, WeightFormat::F32, false);
        return copied.ok() ? copied->net->ln_f->bias[0].item<float>() : 0.f;
    }

    QTemporaryDir m_tmp;
    std::vector<int32_t> m_ids;
    std::vector<double> m_refLogprobs;
    int m_case = 0;

    // A fresh copy of the fixture folder, then `edit` applied to its tensors.
    QString variant(const std::function<void(std::vector<Tensor>&)>& edit = {}) {
        const QString dir = m_tmp.filePath(QString("case%1").arg(m_case++));
        if (!baton::test::copyFolder(baton::test::fixtureDir(), dir))
            return {};
        QFile::remove(dir + "/reference.json");
        QFile::remove(dir + "/text.txt");
        if (edit) {
            const std::string st = (dir + "/model.safetensors").toStdString();
            auto tensors = readTensors(st);
            edit(tensors);
            QFile::remove(QString::fromStdString(st));
            writeTensors(st, tensors);
        }
        return dir;
    }

    void setConfig(const QString& dir, const QString& key, const QJsonValue& value) {
        QJsonObject c = baton::test::readJsonObject(dir + "/config.json");
        c[key] = value;
        baton::test::writeFile(dir + "/config.json", QJsonDocument(c).toJson());
    }

    static void expectError(const QString& dir, ErrorCode code, const char* mention = nullptr) {
        auto r = Model::load(dir.toStdString());
        QVERIFY2(!r.ok(), "a bad checkpoint was accepted");
        QVERIFY2(r.error().code == code,
                 qPrintable(QString("expected %1, got %2: %3")
                                .arg(errorCodeName(code), errorCodeName(r.error().code),
                                     QString::fromStdString(r.error().message))));
        if (mention)
            QVERIFY2(r.error().message.find(mention) != std::string::npos,
                     r.error().message.c_str());
    }

    double worstDifference(const QString& dir) {
        auto model = Model::load(dir.toStdString());
        if (!model.ok()) {
            qWarning() << QString::fromStdString(model.error().message);
            return 1e9;
        }
        auto logits = (*model)->windowLogits(m_ids);
        const size_t V = size_t((*model)->config().vocabSize);
        double worst = 0;
        for (size_t i = 0; i + 1 < m_ids.size(); ++i) {
            const float* r = logits->data() + i * V;
            double mx = *std::max_element(r, r + V), sum = 0;
            for (size_t j = 0; j < V; ++j)
                sum += std::exp(r[j] - mx);
            const double lp = r[m_ids[i + 1]] - mx - std::log(sum);
            worst = std::max(worst, std::abs(lp - m_refLogprobs[i]));
        }
        return worst;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY2(QFile::exists(baton::test::fixtureDir() + "/model.safetensors"),
                 qPrintable(baton::test::missingMessage(baton::test::fixtureDir())));
        const auto ref = baton::test::readJsonObject(baton::test::fixtureDir() + "/reference.json");
        for (const auto v : ref["ids"].toArray())
            m_ids.push_back(v.toInt());
        for (const auto v : ref["next_token_logprob"].toArray())
            m_refLogprobs.push_back(v.toDouble());
    }

    void fixtureLoadsExactly() { QVERIFY(worstDifference(variant()) < 1e-4); }

    void f16LoadsWithinF16Precision() {
        const QString dir =
            variant([](auto& ts) { convert16(ts, StDtype::F16, baton::test::floatToHalf); });
        auto m = Model::load(dir.toStdString());
        QVERIFY(m.ok());
        QCOMPARE((*m)->info().storageDtype, std::string("F16"));
        const double worst = worstDifference(dir);
        QVERIFY2(worst < 5e-3 && worst > 1e-7, qPrintable(QString::number(worst)));
    }

    // A model that holds packed (16- or 8-bit) weights refuses to be saved: its float32
    // parameters are gone, and saving them would write zeros.
    void packedModelsRefuseToBeSaved() {
        LoadOptions o;
        o.weights = WeightFormat::Int8;
        auto model = Model::load(baton::test::fixture(), o);
        QVERIFY(model.ok());
        QTemporaryDir dir;
        const auto r =
            saveGpt2Weights(*ModelAccess::of(**model).net,
                            dir.filePath("model.safetensors").toStdString(), StDtype::F32);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Unsupported);
        QVERIFY(!QFileInfo::exists(dir.filePath("model.safetensors")));
    }

    void bf16LoadsWithinBf16Precision() {
        const QString dir =
            variant([](auto& ts) { convert16(ts, StDtype::BF16, baton::test::floatToBf16); });
        auto m = Model::load(dir.toStdString());
        QVERIFY(m.ok());
        QCOMPARE((*m)->info().storageDtype, std::string("BF16"));
        const double worst = worstDifference(dir);
        QVERIFY2(worst < 5e-2 && worst > 1e-6, qPrintable(QString::number(worst)));
    }

    void prefixedNamesAndBuffersLoad() {
        const QString dir = variant([](auto& ts) {
            const int64_t P = 128;
            std::vector<Tensor> extra;
            for (auto& t : ts)
                t.name = "transformer." + t.name;
            for (int l = 0; l < 2; ++l) {
                // The causal-mask buffers Hugging Face saves are ignored.
                Tensor bias{"transformer.h." + std::to_string(l) + ".attn.bias",
                            StDtype::F32,
                            {1, 1, P, P},
                            std::vector<char>(size_t(P * P * 4), 0)};
                Tensor masked{"transformer.h." + std::to_string(l) + ".attn.masked_bias",
                              StDtype::F32,
                              {},
                              std::vector<char>(4, 0)};
                extra.push_back(bias);
                extra.push_back(masked);
            }
            Tensor head = *find(ts, "transformer.wte.weight");
            head.name = "lm_head.weight"; // tied to wte
            extra.push_back(head);
            ts.insert(ts.end(), extra.begin(), extra.end());
        });
        QVERIFY(worstDifference(dir) < 1e-4);
    }

    void missingConfig() {
        const QString dir = variant();
        QFile::remove(dir + "/config.json");
        expectError(dir, ErrorCode::FileNotFound, "config.json");
    }

    void missingWeights() {
        const QString dir = variant();
        QFile::remove(dir + "/model.safetensors");
        expectError(dir, ErrorCode::FileNotFound, "model.safetensors");
    }

    void missingFolder() { expectError(m_tmp.filePath("nowhere"), ErrorCode::FileNotFound); }

    void pickleIsRefused() {
        const QString dir = variant();
        QFile::remove(dir + "/model.safetensors");
        // A pickle that would run code if it were ever unpickled.
        baton::test::writeFile(dir + "/pytorch_model.bin", "\x80\x02"
                                                           "cos\nsystem\n(S'echo pwned'\ntR.");
        expectError(dir, ErrorCode::PickleRefused, "pytorch_model.bin");
    }

    void shardedCheckpointLoadsAsItsWhole() {
        // The fixture's tensors in two shards with their index, as transformers writes.
        const QString dir = variant();
        auto tensors = readTensors((dir + "/model.safetensors").toStdString());
        QVERIFY(QFile::remove(dir + "/model.safetensors"));
        const size_t half = tensors.size() / 2;
        QString index = R"({"metadata": {}, "weight_map": {)";
        for (size_t i = 0; i < tensors.size(); ++i)
            index += QString(R"(%1"%2": "model-0000%3-of-00002.safetensors")")
                         .arg(i ? ", " : "", QString::fromStdString(tensors[i].name))
                         .arg(i < half ? 1 : 2);
        baton::test::writeFile(dir + "/model.safetensors.index.json", (index + "}}").toUtf8());
        QVERIFY(writeTensors((dir + "/model-00001-of-00002.safetensors").toStdString(),
                             {tensors.begin(), tensors.begin() + long(half)}));
        QVERIFY(writeTensors((dir + "/model-00002-of-00002.safetensors").toStdString(),
                             {tensors.begin() + long(half), tensors.end()}));
        QVERIFY(worstDifference(dir) < 1e-4);
        // Mapped (F32 stored, F32 held) from both files.
        auto model = Model::load(dir.toStdString());
        QVERIFY(model.ok());
        QVERIFY((*model)->info().mappedBytes > 0);
        // A shard cut short is refused as the single file is.
        QFile f(dir + "/model-00002-of-00002.safetensors");
        QVERIFY(f.open(QIODevice::ReadWrite) && f.resize(f.size() / 2));
        f.close();
        expectError(dir, ErrorCode::TruncatedFile);
    }

    void truncatedWeights() {
        const QString dir = variant();
        QFile f(dir + "/model.safetensors");
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.resize(f.size() / 2));
        f.close();
        expectError(dir, ErrorCode::TruncatedFile);
    }

    void missingTensor() {
        const QString dir = variant([](auto& ts) {
            ts.erase(std::remove_if(ts.begin(), ts.end(),
                                    [](const Tensor& t) { return t.name == "h.1.ln_2.bias"; }),
                     ts.end());
        });
        expectError(dir, ErrorCode::MissingTensor, "h.1.ln_2.bias");
    }

    void wronglyShapedTensor() {
        const QString dir = variant([](auto& ts) {
            find(ts, "h.0.attn.c_proj.weight")->shape = {32, 128};
        });
        expectError(dir, ErrorCode::TensorShapeMismatch, "h.0.attn.c_proj.weight");
    }

    void unexpectedTensor() {
        const QString dir = variant([](auto& ts) {
            Tensor t = *find(ts, "ln_f.bias");
            t.name = "h.0.attn.rotary.inv_freq";
            ts.push_back(t);
        });
        expectError(dir, ErrorCode::UnexpectedTensor, "rotary");
    }

    void integerWeightsAreRefused() {
        const QString dir = variant([](auto& ts) {
            Tensor* t = find(ts, "ln_f.bias");
            t->dtype = StDtype::I32;
        });
        expectError(dir, ErrorCode::Unsupported, "ln_f.bias");
    }

    void configDisagreesWithWeights_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("value");
        QTest::newRow("n_embd") << "n_embd" << 128;
        QTest::newRow("n_layer") << "n_layer" << 3;
        QTest::newRow("vocab_size") << "vocab_size" << 50000;
        QTest::newRow("n_positions") << "n_positions" << 256;
    }
    void configDisagreesWithWeights() {
        QFETCH(QString, key);
        QFETCH(int, value);
        const QString dir = variant();
        setConfig(dir, key, value);
        if (key == "n_positions")
            setConfig(dir, "n_ctx", value);
        expectError(dir, ErrorCode::ConfigMismatch, key.toUtf8().constData());
    }

    void badConfigs_data() {
        QTest::addColumn<QByteArray>("config");
        QTest::addColumn<int>("code");
        QTest::newRow("not json") << QByteArray("{\"n_layer\": ") << int(ErrorCode::InvalidJson);
        QTest::newRow("not utf-8")
            << QByteArray("{\"model_type\": \"gpt2\xFF\"}") << int(ErrorCode::InvalidUtf8);
        QTest::newRow("missing n_head")
            << QByteArray(R"({"n_layer":2,"n_embd":64,"n_positions":128,"vocab_size":50257})")
            << int(ErrorCode::BadConfig);
        QTest::newRow("heads do not divide width")
            << QByteArray(
                   R"({"n_layer":2,"n_head":5,"n_embd":64,"n_positions":128,"vocab_size":50257})")
            << int(ErrorCode::BadConfig);
        QTest::newRow("negative layers")
            << QByteArray(
                   R"({"n_layer":-2,"n_head":4,"n_embd":64,"n_positions":128,"vocab_size":50257})")
            << int(ErrorCode::BadConfig);
        QTest::newRow("another architecture")
            << QByteArray(
                   R"({"model_type":"llama","n_layer":2,"n_head":4,"n_embd":64,"n_positions":128,"vocab_size":50257})")
            << int(ErrorCode::BadConfig);
        QTest::newRow("another activation")
            << QByteArray(
                   R"({"n_layer":2,"n_head":4,"n_embd":64,"n_positions":128,"vocab_size":50257,"activation_function":"relu"})")
            << int(ErrorCode::Unsupported);
    }
    void badConfigs() {
        QFETCH(QByteArray, config);
        QFETCH(int, code);
        const QString dir = variant();
        baton::test::writeFile(dir + "/config.json", config);
        expectError(dir, ErrorCode(code));
    }

    void tokenizerLargerThanModel() {
        // A model whose vocabulary is smaller than its tokenizer's cannot be this
        // tokenizer's model.
        const QString dir = variant([](auto& ts) {
            Tensor* wte = find(ts, "wte.weight");
            wte->shape[0] = 1000;
            wte->bytes.resize(size_t(1000 * 64 * 4));
        });
        setConfig(dir, "vocab_size", 1000);
        expectError(dir, ErrorCode::TokenizerMismatch);
    }

    void cancelWhileLoading() {
        LoadOptions o;
        o.cancel.cancel();
        auto r = Model::load(variant().toStdString(), o);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, ErrorCode::Cancelled);
        LoadOptions p;
        int calls = 0;
        p.progress = [&](double) { return ++calls < 3; };
        auto r2 = Model::load(variant().toStdString(), p);
        QVERIFY(!r2.ok());
        QCOMPARE(r2.error().code, ErrorCode::Cancelled);
        QCOMPARE(calls, 3);
    }

    // The loader reads a memory map of the file, converts on the worker team and, for
    // --weights f16|bf16|int8, packs straight from the stored bytes. On a model whose
    // matrices are large enough for the parallel paths, stored in each dtype: the float32
    // weights equal torch's conversion of the stored tensors (Conv1D ones transposed),
    // every packed matrix equals packing those float32 weights afterwards, and the
    // content hash covers every stored byte in parameter order.
    void loadingIntoEachFormat_data() { storedDtypes(); }
    void loadingIntoEachFormat() {
        QFETCH(QString, stored);
        ModelConfig c;
        c.nLayer = 2;
        c.nHead = 4;
        c.nEmbd = 128; // c_fc: 512 x 128 = 2^16 weights, wte: 50257 x 128
        c.nInner = 512;
        c.nPositions = 64;
        c.vocabSize = 50257;
        auto made = createModel(c, nullptr, 3);
        QVERIFY(made.ok());
        const std::string dir = m_tmp.filePath("formats-" + stored).toStdString();
        QVERIFY(saveModelFolder(ModelAccess::of(**made), dir, *storageDtype(stored.toStdString()),
                                baton::test::gpt2TokenizerDir())
                    .ok());

        auto loaded = loadGpt2(dir, CancelToken(), {});
        QVERIFY(loaded.ok());
        auto file = openSafetensors(files::join(dir, "model.safetensors"));
        QVERIFY(file.ok());
        ContentHash hash;
        hash.update(*files::readAll(files::join(dir, "config.json")));
        hash.update(file->headerJson());
        torch::NoGradGuard noGrad;
        const auto conv1d = [](const std::string& n) {
            return n.find(".weight") != std::string::npos &&
                   (n.find("c_attn") != std::string::npos ||
                    n.find("c_proj") != std::string::npos || n.find("c_fc") != std::string::npos);
        };
        for (const auto& item : loaded->net->named_parameters()) {
            const StTensor* t = file->find(item.key());
            QVERIFY2(t != nullptr, item.key().c_str());
            std::vector<char> raw(t->bytes());
            QVERIFY(file->read(*t, raw.data()).ok());
            hash.update(raw.data(), raw.size());
            const auto dtype = t->dtype == StDtype::F32   ? torch::kFloat32
                               : t->dtype == StDtype::F16 ? torch::kFloat16
                                                          : torch::kBFloat16;
            auto expected = torch::from_blob(raw.data(), t->shape, dtype).to(torch::kFloat32);
            if (conv1d(item.key()))
                expected = expected.t();
            QVERIFY2(torch::equal(expected, item.value()), item.key().c_str());
        }
        QCOMPARE(loaded->contentHash, hash.hex());

        for (WeightFormat f :
             {WeightFormat::F16, WeightFormat::BF16, WeightFormat::Int8, WeightFormat::Q4}) {
            auto packed = loadGpt2(dir, CancelToken(), {}, f);
            QVERIFY(packed.ok());
            QCOMPARE(packed->contentHash, loaded->contentHash);
            QVERIFY(packed->net->packed());
            auto reference = loadGpt2(dir, CancelToken(), {});
            reference->net->packWeights(f);
            const auto a = packed->net->packableWeights(), b = reference->net->packableWeights();
            QCOMPARE(a.size(), b.size());
            for (size_t i = 0; i < a.size(); ++i) {
                const auto va = a[i].second->view(), vb = b[i].second->view();
                QCOMPARE(va.bytes(), vb.bytes());
                const size_t scaleBytes =
                    size_t(va.rows * va.blocksPerRow()) * (f == WeightFormat::Int8 ? 4
                                                           : f == WeightFormat::Q4 ? 2
                                                                                   : 0);
                const size_t weightBytes = va.bytes() - scaleBytes;
                QVERIFY2(std::memcmp(va.data, vb.data, weightBytes) == 0, a[i].first.c_str());
                if (f == WeightFormat::Int8)
                    QVERIFY(std::memcmp(va.scales, vb.scales, scaleBytes) == 0);
                if (f == WeightFormat::Q4)
                    QVERIFY(std::memcmp(va.q4Scales, vb.q4Scales, scaleBytes) == 0);
                QCOMPARE(a[i].second->weight.numel(), int64_t(0)); // no float32 copy kept
            }
            QCOMPARE(packed->net->parameterCount(), loaded->net->parameterCount());
        }
    }

    // The content hash is remembered for the very files it was computed from: a model
    // opened again takes it from the memo (a memo planted under the same key shows it
    // is read), a model whose weights were rewritten is hashed again.
    void aRememberedHashNamesTheSameFiles() {
        const QString dir = variant();
        const std::string folder = dir.toStdString();
        const auto fresh = loadGpt2(folder, CancelToken(), {});
        QVERIFY(fresh.ok());
        const QString memo = m_tmp.filePath("memo");
        setIdentityMemoFolder(memo.toStdString(), 0);
        const auto first = loadGpt2(folder, CancelToken(), {}, WeightFormat::F16);
        QVERIFY(first.ok());
        QCOMPARE(first->contentHash, fresh->contentHash);
        const QStringList memos = QDir(memo).entryList({"*.id"}, QDir::Files);
        QCOMPARE(memos.size(), 1);
        const QString path = QDir(memo).filePath(memos[0]);
        QByteArray text = baton::test::readFile(path);
        text.replace(QByteArray::fromStdString(fresh->contentHash), "00000000000000aa");
        QVERIFY(baton::test::writeFile(path, text));
        QCOMPARE(loadGpt2(folder, CancelToken(), {})->contentHash, std::string("00000000000000aa"));

        QThread::msleep(50); // past the file system clock's tick
        const std::string st = folder + "/model.safetensors";
        auto tensors = readTensors(st);
        tensors[0].bytes[0] ^= 1;
        QFile::remove(QString::fromStdString(st));
        writeTensors(st, tensors);
        const auto edited = loadGpt2(folder, CancelToken(), {});
        setIdentityMemoFolder("");
        const auto unremembered = loadGpt2(folder, CancelToken(), {});
        QVERIFY(edited.ok() && unremembered.ok());
        QCOMPARE(edited->contentHash, unremembered->contentHash);
        QVERIFY(edited->contentHash != fresh->contentHash);
    }

    // Weights stored in the format they are held in are the mapped file's pages (no
    // copy; Conv1D weights seen transposed): the same values, the same identity, and
    // the decoder (column-major products) generates what the copied weights generate.
    void mappedWeightsAreTheFilesBytes_data() { storedDtypes(); }
    void mappedWeightsAreTheFilesBytes() {
        QFETCH(QString, stored);
        const WeightFormat held = *parseWeightFormat(stored.toStdString());
        const QString dir = variant([&](auto& ts) {
            if (stored == "f16")
                convert16(ts, StDtype::F16, baton::test::floatToHalf);
            if (stored == "bf16")
                convert16(ts, StDtype::BF16, baton::test::floatToBf16);
        });
        const std::string folder = dir.toStdString();
        auto mapped = loadGpt2(folder, CancelToken(), {}, held, true);
        auto copied = loadGpt2(folder, CancelToken(), {}, held, false);
        QVERIFY(mapped.ok() && copied.ok());
        QCOMPARE(mapped->contentHash, copied->contentHash);
        QCOMPARE(copied->mappedBytes, uint64_t(0));

        auto file = openSafetensors(folder + "/model.safetensors");
        QVERIFY(file.ok());
        const auto packable = mapped->net->packableWeights();
        uint64_t expected = 0; // every tensor in f32, the weight matrices in 16 bits
        for (const auto& t : file->tensors())
            if (held == WeightFormat::F32 ||
                std::any_of(packable.begin(), packable.end(),
                            [&](const auto& p) { return p.first == t.name; }))
                expected += t.bytes();
        QCOMPARE(mapped->mappedBytes, expected);

        torch::NoGradGuard noGrad;
        const auto other = copied->net->packableWeights();
        for (size_t i = 0; i < packable.size(); ++i) {
            const auto& [name, w] = packable[i];
            const bool conv1d = name.find(".weight") != std::string::npos && name != "wte.weight";
            QCOMPARE(w->view().transposed, conv1d);
            QCOMPARE(w->view().format, held);
            QVERIFY2(torch::equal(w->dense(), other[i].second->dense()), name.c_str());
        }
        const auto a = mapped->net->named_parameters(), b = copied->net->named_parameters();
        for (const auto& item : a)
            QVERIFY2(torch::equal(item.value(), b[item.key()]), item.key().c_str());

        // Through the public API: the info says so, and greedy decoding agrees.
        std::vector<std::vector<int32_t>> tokens;
        std::vector<std::vector<float>> logprobs;
        for (bool map : {true, false}) {
            LoadOptions o;
            o.weights = held;
            o.mapWeights = map;
            auto model = Model::load(folder, o);
            BATON_VERIFY_OK(model);
            // BF16 is copied where the CPU multiplies bf16 natively (the faster way).
            const bool shared = map && !(held == WeightFormat::BF16 && cpu::nativeBf16Products());
            QCOMPARE((*model)->info().mappedBytes, shared ? int64_t(expected) : int64_t(0));
            auto g = Generator::create(*model, {});
            BATON_VERIFY_OK(g);
            QVERIFY((*g)->appendText("He was very much pleased with Randalls, and").ok());
            SamplingOptions s;
            s.maxTokens = 24;
            s.temperature = 0;
            s.logprobs = 0;
            s.stopAtEndOfText = false;
            std::vector<float> lp;
            auto r = (*g)->generate(s, [&](const GenerationEvent& e) {
                lp.push_back(e.logprob);
                return true;
            });
            BATON_VERIFY_OK(r);
            tokens.push_back(r->tokens);
            logprobs.push_back(lp);
        }
        QCOMPARE(tokens[0], tokens[1]);
        QCOMPARE(logprobs[0].size(), logprobs[1].size());
        // Copied BF16 weights use native bf16 products where the CPU has them, which
        // round the activations to bf16; the column-major products do not.
        const float tolerance =
            held == WeightFormat::BF16 && cpu::nativeBf16Products() ? 1e-2f : 1e-4f;
        for (size_t i = 0; i < logprobs[0].size(); ++i)
            QVERIFY2(std::abs(logprobs[0][i] - logprobs[1][i]) < tolerance,
                     qPrintable(QString::number(logprobs[0][i] - logprobs[1][i])));
    }

    // A header one byte longer (a trailing space, valid JSON) leaves every tensor at an
    // odd address: nothing can be shared, everything is copied, the values are right.
    void misalignedTensorsAreCopied() {
        const QString dir = variant();
        const std::string path = (dir + "/model.safetensors").toStdString();
        auto bytes = files::readAll(path, size_t(1) << 30);
        QVERIFY(bytes.ok());
        std::string data = *bytes;
        uint64_t headerLen = 0;
        for (int i = 7; i >= 0; --i)
            headerLen = (headerLen << 8) | static_cast<unsigned char>(data[size_t(i)]);
        data.insert(size_t(8 + headerLen), " ");
        ++headerLen;
        for (int i = 0; i < 8; ++i)
            data[size_t(i)] = static_cast<char>((headerLen >> (8 * i)) & 0xff);
        QVERIFY(
            baton::test::writeFile(dir + "/model.safetensors", QByteArray::fromStdString(data)));
        auto model = Model::load(dir.toStdString());
        BATON_VERIFY_OK(model);
        QCOMPARE((*model)->info().mappedBytes, int64_t(0));
        QVERIFY(worstDifference(dir) < 1e-4);
    }

    // A mapped model's weights written in place (as training would) change the
    // process's copy of the page, never the file.
    void writingMappedWeightsLeavesTheFile() {
        const std::string folder = variant().toStdString();
        const std::string path = folder + "/model.safetensors";
        const auto before = files::readAll(path, size_t(1) << 30);
        QVERIFY(before.ok());
        {
            auto mapped = loadGpt2(folder, CancelToken(), {}, WeightFormat::F32, true);
            QVERIFY(mapped.ok() && mapped->mappedBytes > 0);
            torch::NoGradGuard noGrad;
            for (auto& p : mapped->net->parameters())
                p.add_(1.0f);
            QCOMPARE(mapped->net->ln_f->bias[0].item<float>(), copiedLnfBias(folder) + 1.0f);
        }
        QCOMPARE(*files::readAll(path, size_t(1) << 30), *before);
    }

    void progressReachesOne() {
        LoadOptions o;
        double last = 0;
        o.progress = [&](double f) {
            last = f;
            return true;
        };
        QVERIFY(Model::load(variant().toStdString(), o).ok());
        QCOMPARE(last, 1.0);
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
