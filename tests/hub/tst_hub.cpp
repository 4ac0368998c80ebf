// Downloads from the hub (hub/hub.h) against a stand-in on loopback that answers as
// the real hub does: a whole GPT-2 folder, a sharded one, the token sent to the hub
// and never to the CDN, a transfer cut off and resumed, a download stopped and pulled
// again, wrong bytes refused, a repository that is missing, gated or has only pickles,
// a full disk (the file size limit), and a folder that is not ours left alone. No test
// reaches the internet.
#include "hub_stand_in.h"
#include "test_support.h"

#include <baton/hub/hub.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <set>

using namespace baton;
using test::HubStandIn;

namespace {

std::string bytesOf(size_t n, char seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
        s[i] = char(seed + (i * 7919) % 251);
    return s;
}

// A GPT-2 repository as the official ones are laid out (with the files Baton skips).
HubStandIn::Repo gpt2Repo() {
    HubStandIn::Repo r;
    r.files["config.json"] = {R"({"model_type":"gpt2","n_layer":2})", false};
    r.files["generation_config.json"] = {R"({"bos_token_id":50256})", false};
    r.files["vocab.json"] = {bytesOf(3000, 'v'), false};
    r.files["merges.txt"] = {bytesOf(2000, 'm'), false};
    r.files["tokenizer.json"] = {bytesOf(1500, 't'), false};
    r.files["model.safetensors"] = {bytesOf(200000, 'w'), true};
    r.files["pytorch_model.bin"] = {bytesOf(5000, 'p'), true};
    r.files["onnx/decoder_model.onnx"] = {bytesOf(500, 'o'), true};
    r.files["README.md"] = {"# GPT-2", false};
    r.files["special_tokens_map.json"] = {"", false}; // an empty file downloads too
    return r;
}

std::set<std::string> filesIn(const std::string& folder) {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(folder))
        names.insert(e.path().filename().string());
    return names;
}

std::string readAll(const std::string& path) {
    QFile f(QString::fromStdString(path));
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
}

} // namespace

class TestHub : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::unique_ptr<HubStandIn> m_hub;
    int m_dests = 0;

    hub::HubOptions options(const std::string& token = {}) const {
        hub::HubOptions o;
        o.endpoint = m_hub->endpoint();
        o.token = token;
        o.userAgent = "baton/test";
        return o;
    }
    std::string newDest() {
        return m_tmp.filePath(QString("models-%1").arg(++m_dests)).toStdString();
    }
    static hub::RepoRef ref(const std::string& text) { return *hub::parseRepoRef(text); }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        m_hub = std::make_unique<HubStandIn>();
        m_hub->addRepo("openai-community/gpt2", gpt2Repo());
    }
    void cleanupTestCase() { m_hub.reset(); }
    void init() {
        m_hub->clearSeen();
        m_hub->clearFaults();
        m_hub->addRepo("openai-community/gpt2", gpt2Repo());
    }

    void repositoryIds_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("folder");
        QTest::newRow("owner/name") << "openai-community/gpt2" << true << "openai-community--gpt2";
        QTest::newRow("legacy") << "gpt2" << true << "gpt2";
        QTest::newRow("revision") << "a/b@v1.0" << true << "a--b";
        QTest::newRow("pr ref") << "a/b@refs/pr/1" << true << "a--b";
        QTest::newRow("empty") << "" << false << "";
        QTest::newRow("three parts") << "a/b/c" << false << "";
        QTest::newRow("dot dot") << "../etc" << false << "";
        QTest::newRow("double dash") << "a--b/c" << false << "";
        QTest::newRow("url") << "https://huggingface.co/gpt2" << false << "";
        QTest::newRow("empty revision") << "a/b@" << false << "";
        QTest::newRow("revision ..") << "a/b@../../x" << false << "";
    }
    void repositoryIds() {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(QString, folder);
        auto r = hub::parseRepoRef(text.toStdString());
        QCOMPARE(r.ok(), ok);
        if (ok)
            QCOMPARE(QString::fromStdString(hub::folderName(*r)), folder);
        else
            QCOMPARE(r.error().code, hub::HubErrorCode::InvalidArgument);
    }

    void pullsAGpt2Folder() {
        const std::string dest = newDest();
        std::vector<hub::PullProgress> seen;
        auto r = hub::pull(options("hf_good"), ref("openai-community/gpt2"), dest,
                           [&](const hub::PullProgress& p) { seen.push_back(p); });
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->folder, dest + "/openai-community--gpt2");
        QCOMPARE(r->commit, std::string(40, 'c'));
        // What a GPT-2 folder needs, no pickles, nothing else; the record of the pull.
        QCOMPARE(filesIn(r->folder),
                 (std::set<std::string>{"config.json", "generation_config.json", "vocab.json",
                                        "merges.txt", "tokenizer.json", "model.safetensors",
                                        "special_tokens_map.json", "hub-source.json"}));
        const auto repo = gpt2Repo();
        for (const char* name : {"config.json", "vocab.json", "model.safetensors"})
            QCOMPARE(readAll(r->folder + "/" + name), repo.files.at(name).bytes);
        // No partial folder left; the lock file stays (hidden).
        QCOMPARE(filesIn(dest),
                 (std::set<std::string>{"openai-community--gpt2", ".openai-community--gpt2.lock"}));
        QCOMPARE(r->downloaded, r->bytes);
        QVERIFY(!seen.empty());
        QCOMPARE(seen.back().done, seen.back().total);
        QCOMPARE(seen.back().total, r->bytes);
        // The token went to the hub, never to the CDN; files come from the listed commit.
        int cdn = 0;
        for (const auto& s : m_hub->seen()) {
            if (s.cdn) {
                ++cdn;
                QCOMPARE(QString::fromStdString(s.authorization), QString());
            } else {
                QCOMPARE(QString::fromStdString(s.authorization), QStringLiteral("Bearer hf_good"));
                if (s.path.find("/resolve/") != std::string::npos)
                    QVERIFY(s.path.find("/resolve/" + std::string(40, 'c') + "/") !=
                            std::string::npos);
            }
        }
        QCOMPARE(cdn, 1); // model.safetensors, the one LFS file fetched
        // Pulled again: already there, nothing fetched.
        m_hub->clearSeen();
        auto again = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QVERIFY(again.ok());
        QVERIFY(again->alreadyThere);
        QCOMPARE(m_hub->seen().size(), size_t(1)); // the listing only
    }

    void pullsAShardedCheckpoint() {
        HubStandIn::Repo repo = gpt2Repo();
        repo.files.erase("model.safetensors");
        repo.files["model.safetensors.index.json"] = {
            R"({"metadata":{"total_size":300},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})",
            false};
        repo.files["model-00001-of-00002.safetensors"] = {bytesOf(70000, '1'), true};
        repo.files["model-00002-of-00002.safetensors"] = {bytesOf(50000, '2'), true};
        m_hub->addRepo("big/sharded", repo);
        auto r = hub::pull(options(), ref("big/sharded"), newDest());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const auto files = filesIn(r->folder);
        QVERIFY(files.count("model.safetensors.index.json"));
        QCOMPARE(readAll(r->folder + "/model-00002-of-00002.safetensors"),
                 repo.files["model-00002-of-00002.safetensors"].bytes);
    }

    void aTransferCutOffIsResumed() {
        m_hub->cutOnce("model.safetensors", 70000);
        auto r = hub::pull(options(), ref("openai-community/gpt2"), newDest());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(readAll(r->folder + "/model.safetensors"),
                 gpt2Repo().files.at("model.safetensors").bytes);
        // The second request asked for the rest only.
        QStringList ranges;
        for (const auto& s : m_hub->seen())
            if (s.cdn)
                ranges << QString::fromStdString(s.range);
        QCOMPARE(ranges, (QStringList{QString(), QStringLiteral("bytes=70000-")}));
    }

    void aStoppedPullResumesWhereItStopped() {
        const std::string dest = newDest();
        engine::CancelToken cancel;
        auto stopped = hub::pull(
            options(), ref("openai-community/gpt2"), dest,
            [&](const hub::PullProgress& p) {
                if (p.file == "model.safetensors" && p.done > 0 && p.done < p.total)
                    cancel.cancel();
            },
            cancel);
        QVERIFY(!stopped);
        QCOMPARE(stopped.error().code, hub::HubErrorCode::Cancelled);
        // Nothing looks like a model; the partial folder keeps what came.
        QVERIFY(!std::filesystem::exists(dest + "/openai-community--gpt2"));
        const std::string partial = dest + "/.openai-community--gpt2.partial";
        const auto had = std::filesystem::file_size(partial + "/model.safetensors.incomplete");
        QVERIFY(had > 0 && had < 200000);
        m_hub->clearSeen();
        auto r = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(readAll(r->folder + "/model.safetensors"),
                 gpt2Repo().files.at("model.safetensors").bytes);
        QVERIFY(!std::filesystem::exists(partial));
        // Only the rest: not the config again, nor what came of the weights.
        QCOMPARE(r->downloaded, r->bytes - int64_t(had) -
                                    int64_t(gpt2Repo().files.at("config.json").bytes.size()));
        bool resumed = false;
        for (const auto& s : m_hub->seen())
            resumed = resumed || s.range == "bytes=" + std::to_string(had) + "-";
        QVERIFY(resumed);
    }

    void wrongBytesAreRefused() {
        m_hub->corrupt("model.safetensors");
        const std::string dest = newDest();
        auto r = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QVERIFY(!r);
        QCOMPARE(r.error().code, hub::HubErrorCode::Checksum);
        QVERIFY(r.error().message.find("model.safetensors") != std::string::npos);
        QVERIFY(!std::filesystem::exists(dest + "/openai-community--gpt2"));
        QVERIFY(!std::filesystem::exists(
            dest + "/.openai-community--gpt2.partial/model.safetensors.incomplete"));
        // A small file checked by its git blob id.
        m_hub->addRepo("openai-community/gpt2", gpt2Repo());
        m_hub->corrupt("vocab.json");
        auto small = hub::pull(options(), ref("openai-community/gpt2"), newDest());
        QVERIFY(!small);
        QCOMPARE(small.error().code, hub::HubErrorCode::Checksum);
    }

    void theHubsRefusals() {
        auto missing = hub::pull(options(), ref("nobody/nothing"), newDest());
        QVERIFY(!missing);
        QCOMPARE(missing.error().code, hub::HubErrorCode::Unauthorized); // 401 anonymous
        QCOMPARE(missing.error().httpStatus, 401L);
        auto missingWithToken = hub::pull(options("hf_good"), ref("nobody/nothing"), newDest());
        QCOMPARE(missingWithToken.error().code, hub::HubErrorCode::NotFound);
        auto revision = hub::pull(options(), ref("openai-community/gpt2@nope"), newDest());
        QCOMPARE(revision.error().code, hub::HubErrorCode::NotFound);
        QVERIFY(revision.error().message.find("revision") != std::string::npos);

        HubStandIn::Repo gated = gpt2Repo();
        gated.gated = true;
        m_hub->addRepo("meta/gated", gated);
        auto anonymous = hub::pull(options(), ref("meta/gated"), newDest());
        QCOMPARE(anonymous.error().code, hub::HubErrorCode::Unauthorized);
        QVERIFY(anonymous.error().message.find("gated") != std::string::npos);
        QVERIFY(anonymous.error().message.find("HF_TOKEN") != std::string::npos);
        auto noAccess = hub::pull(options("hf_other"), ref("meta/gated"), newDest());
        QCOMPARE(noAccess.error().httpStatus, 403L);
        QCOMPARE(noAccess.error().code, hub::HubErrorCode::Unauthorized);
        auto granted = hub::pull(options("hf_good"), ref("meta/gated"), newDest());
        QVERIFY2(granted.ok(), granted.ok() ? "" : granted.error().message.c_str());

        // Only pickles: refused before anything is fetched, saying why.
        HubStandIn::Repo pickles = gpt2Repo();
        pickles.files.erase("model.safetensors");
        m_hub->addRepo("old/pickles", pickles);
        m_hub->clearSeen();
        const std::string dest = newDest();
        auto refused = hub::pull(options(), ref("old/pickles"), dest);
        QCOMPARE(refused.error().code, hub::HubErrorCode::NotGpt2);
        QVERIFY(refused.error().message.find("pickled") != std::string::npos);
        QCOMPARE(m_hub->seen().size(), size_t(1));
        QVERIFY(!std::filesystem::exists(dest));

        // No tokenizer.
        HubStandIn::Repo bare = gpt2Repo();
        for (const char* f : {"vocab.json", "merges.txt", "tokenizer.json"})
            bare.files.erase(f);
        m_hub->addRepo("odd/bare", bare);
        auto noTokenizer = hub::pull(options(), ref("odd/bare"), newDest());
        QCOMPARE(noTokenizer.error().code, hub::HubErrorCode::NotGpt2);
        QVERIFY(noTokenizer.error().message.find("tokenizer") != std::string::npos);

        // Nobody there.
        hub::HubOptions down = options();
        down.endpoint = "http://127.0.0.1:1";
        auto unreachable = hub::pull(down, ref("openai-community/gpt2"), newDest());
        QCOMPARE(unreachable.error().code, hub::HubErrorCode::Network);
    }

    void aFullDiskStopsThePullAndLosesNothing() {
        // Writes past 100 kB fail (EFBIG) as they would with ENOSPC on a full disk.
        const std::string dest = newDest();
        rlimit old{};
        QCOMPARE(getrlimit(RLIMIT_FSIZE, &old), 0);
        auto previous = std::signal(SIGXFSZ, SIG_IGN);
        rlimit small = old;
        small.rlim_cur = 100000;
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &small), 0);
        auto r = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &old), 0);
        std::signal(SIGXFSZ, previous);
        QVERIFY(!r);
        QCOMPARE(r.error().code, hub::HubErrorCode::WriteFailed);
        QVERIFY2(r.error().message.find("model.safetensors") != std::string::npos,
                 r.error().message.c_str());
        QVERIFY(!std::filesystem::exists(dest + "/openai-community--gpt2"));
        // With room again, the pull finishes from what was written.
        auto again = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QVERIFY2(again.ok(), again.ok() ? "" : again.error().message.c_str());
        QVERIFY(again->downloaded < again->bytes);
        QCOMPARE(readAll(again->folder + "/model.safetensors"),
                 gpt2Repo().files.at("model.safetensors").bytes);
    }

    void twoPullsOfOneModelAtOnce() {
        // Another process holds the lock (flock locks are per open file, so a second
        // open in this process stands in for it).
        const std::string dest = newDest();
        std::filesystem::create_directories(dest);
        const int fd =
            ::open((dest + "/.openai-community--gpt2.lock").c_str(), O_RDWR | O_CREAT, 0644);
        QVERIFY(fd >= 0);
        QCOMPARE(::flock(fd, LOCK_EX | LOCK_NB), 0);
        auto busy = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QVERIFY(!busy);
        QCOMPARE(busy.error().code, hub::HubErrorCode::Busy);
        ::close(fd);
        auto r = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    }

    void aFolderThatIsNotOursIsLeftAlone() {
        const std::string dest = newDest();
        std::filesystem::create_directories(dest + "/openai-community--gpt2");
        QFile mine(QString::fromStdString(dest + "/openai-community--gpt2/notes.txt"));
        QVERIFY(mine.open(QIODevice::WriteOnly));
        mine.write("mine");
        mine.close();
        auto r = hub::pull(options(), ref("openai-community/gpt2"), dest);
        QVERIFY(!r);
        QCOMPARE(r.error().code, hub::HubErrorCode::AlreadyExists);
        QCOMPARE(filesIn(dest + "/openai-community--gpt2"), (std::set<std::string>{"notes.txt"}));
    }
};

QTEST_GUILESS_MAIN(TestHub)
#include "tst_hub.moc"
