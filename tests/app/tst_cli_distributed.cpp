// Data-parallel training end to end: baton-cli train as 2 and 3 processes on loopback
// (--nproc, and ranks started by hand as a launcher starts them) against one process,
// a rank killed or hung mid-run, a rank started differently, and the launcher's
// variables.
#include "cli_run.h"
#include "stored_tensors.h"
#include "test_support.h"
#include "training_fixture.h"

#include <baton/engine/training.h>

#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <map>

namespace {

using baton::test::cli;
using baton::test::finish;
using Run = baton::test::CliRun;

// A short recurrent or baseline run on the fixture checkpoint: batch 4 (shared out
// unevenly among 3 ranks), two micro-batches per step.
QStringList trainArgs(const QString& out, const QString& corpus, const QString& val,
                      const QString& mode, int steps) {
    return baton::test::fixtureTrainArgs(out, corpus, val, mode, steps, 4) << "--accumulate"
                                                                           << "2";
}

const auto events = baton::test::jsonEvents;

// A port the kernel hands out as free on 127.0.0.1.
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    int port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        ::close(fd);
    return port;
}

// Rank `rank` of `size` started by hand, as torchrun starts one.
void startRank(QProcess& p, const QStringList& args, int rank, int size, int port,
               const QString& dir = {}) {
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("RANK", QString::number(rank));
    env.insert("WORLD_SIZE", QString::number(size));
    env.insert("LOCAL_RANK", QString::number(rank));
    env.insert("MASTER_ADDR", "127.0.0.1");
    env.insert("MASTER_PORT", QString::number(port));
    p.setProcessEnvironment(env);
    if (!dir.isEmpty())
        p.setWorkingDirectory(dir);
    p.start(QStringLiteral(BATON_CLI_PATH), args);
}

// Waits until the process has printed `count` step events (false if it ended first).
bool waitForSteps(QProcess& p, QByteArray& seen, int count) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 120000) {
        p.waitForReadyRead(200);
        seen += p.readAllStandardOutput();
        if (int(events(seen, "step").size()) >= count)
            return true;
        if (p.state() == QProcess::NotRunning)
            return false;
    }
    return false;
}

// Ranks 0 and 1 of 2 on a free port; once rank 0 has reported `steps` steps (its output
// so far in `seen`), rank 1 gets `signal`. False when rank 0 ended before.
bool signalRank1AfterSteps(QProcess& r0, QProcess& r1, const QStringList& args, int steps,
                           int signal, QByteArray& seen) {
    const int port = freePort();
    startRank(r0, args, 0, 2, port);
    startRank(r1, args, 1, 2, port);
    if (!waitForSteps(r0, seen, steps))
        return false;
    ::kill(pid_t(r1.processId()), signal);
    return true;
}

// The largest absolute difference between two runs' final weights (-1: unreadable or
// not the same tensors).
double maxWeightDifference(const QString& a, const QString& b) {
    double worst = 0;
    for (const char* file : {"model.safetensors", "recurrence.safetensors"}) {
        const bool inA = QFile::exists(a + "/" + file), inB = QFile::exists(b + "/" + file);
        if (inA != inB)
            return -1;
        if (!inA) // a baseline has no recurrence module
            continue;
        const auto x = baton::test::readTensors((a + "/" + file).toStdString());
        const auto y = baton::test::readTensors((b + "/" + file).toStdString());
        if (x.size() != y.size() || x.empty())
            return -1;
        for (size_t i = 0; i < x.size(); ++i) {
            if (x[i].name != y[i].name || x[i].bytes.size() != y[i].bytes.size() ||
                x[i].dtype != baton::engine::StDtype::F32)
                return -1;
            const auto* p = reinterpret_cast<const float*>(x[i].bytes.data());
            const auto* q = reinterpret_cast<const float*>(y[i].bytes.data());
            for (size_t k = 0; k < x[i].bytes.size() / 4; ++k)
                worst = std::max(worst, double(std::abs(p[k] - q[k])));
        }
    }
    return worst;
}

} // namespace

class TestCliDistributed : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    QString m_corpus, m_val;
    std::map<QString, Run> m_single; // one process, by mode

    const Run& single(const QString& mode) {
        if (!m_single.count(mode))
            m_single[mode] =
                cli(trainArgs(m_tmp.filePath("single-" + mode), m_corpus, m_val, mode, 4));
        return m_single[mode];
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        QVERIFY2(!baton::engine::distributedBackends().empty(),
                 "this build has no distributed engine (libgloo-dev missing at configure)");
        const auto texts = baton::test::writeTrainingTexts(m_tmp.path());
        QVERIFY2(texts.error.isEmpty(), qPrintable(texts.error));
        m_corpus = texts.corpus;
        m_val = texts.val;
    }

    // N ranks, each with its share of every batch, follow one process with the whole
    // batch: the same loss at every step (the gradients' sums differ only in float32
    // rounding: measured 5e-8 relative) and the same weights after 4 steps (Adam turns
    // that rounding into at most 2.3e-5 here, for weights whose gradient is near 0).
    void ranksMatchOneProcess_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<int>("ranks");
        QTest::newRow("recurrent, 2 ranks") << "recurrent" << 2;
        QTest::newRow("recurrent, 3 ranks") << "recurrent" << 3;
        QTest::newRow("baseline, 2 ranks") << "baseline" << 2;
    }
    void ranksMatchOneProcess() {
        QFETCH(QString, mode);
        QFETCH(int, ranks);
        const Run& one = single(mode);
        QVERIFY2(one.exitCode == 0, one.err.constData());
        const QString out = m_tmp.filePath(QString("dp-%1-%2").arg(mode).arg(ranks));
        auto args = trainArgs(out, m_corpus, m_val, mode, 4);
        args << "--nproc" << QString::number(ranks);
        const Run many = cli(args);
        QVERIFY2(many.exitCode == 0, many.err.constData());
        const auto a = events(one.out, "step"), b = events(many.out, "step");
        QCOMPARE(int(a.size()), 4);
        QCOMPARE(int(b.size()), 4); // rank 0 alone reports
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(b[i]["tokens"].toInteger(), a[i]["tokens"].toInteger());
            const double la = a[i]["loss"].toDouble(), lb = b[i]["loss"].toDouble();
            QVERIFY2(std::abs(la - lb) <= 1e-6 * std::abs(la),
                     qPrintable(QString("step %1: %2 vs %3").arg(i + 1).arg(la).arg(lb)));
            const double ga = a[i]["grad_norm"].toDouble(), gb = b[i]["grad_norm"].toDouble();
            QVERIFY2(
                std::abs(ga - gb) <= 1e-5 * ga,
                qPrintable(QString("step %1: gradient norm %2 vs %3").arg(i + 1).arg(ga).arg(gb)));
            QVERIFY(b[i]["comm_bytes"].toDouble() > 0);
        }
        const auto va = events(one.out, "validation"), vb = events(many.out, "validation");
        QCOMPARE(int(vb.size()), 1);
        QVERIFY(std::abs(va[0]["val_loss"].toDouble() - vb[0]["val_loss"].toDouble()) < 1e-6);
        const double diff =
            maxWeightDifference(m_tmp.filePath("single-" + mode + "/model"), out + "/model");
        QVERIFY2(diff >= 0 && diff < 2e-4, qPrintable(QString("weights differ by %1").arg(diff)));
    }

    // A rank killed mid-run stops the other at once with an error naming the failure;
    // every rank restarted with --resume (here with another number of ranks) continues
    // from the last checkpoint and ends where an uninterrupted run ends.
    void killedRankStopsTheOthersAndTheRunResumes() {
        const QString out = m_tmp.filePath("killed");
        QProcess r0, r1;
        const auto args = trainArgs(out, m_corpus, m_val, "recurrent", 12);
        QByteArray seen;
        QVERIFY2(signalRank1AfterSteps(r0, r1, args, 3, SIGKILL, seen),
                 r0.readAllStandardError().constData());
        QElapsedTimer t;
        t.start();
        const Run a = finish(r0, 60000);
        QVERIFY2(t.elapsed() < 30000, "rank 0 did not notice its peer's death in 30 s");
        QCOMPARE(a.exitCode, 1);
        QVERIFY2(a.err.contains("[peer-failed]") && a.err.contains("--resume"), a.err.constData());
        finish(r1, 10000);

        // Resumed by 3 ranks from the last checkpoint (step 2 or later: rank 0 wrote
        // step 2's before it reported step 3).
        const Run resumed = cli({"train", "--out", out, "--resume", "--nproc", "3",
                                 "--json-progress", "--threads", "1"});
        QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
        const auto info = events(resumed.out, "info");
        QVERIFY(!info.empty());
        const QString resumedAt = info[0]["message"].toString();
        QVERIFY2(resumedAt.startsWith("resuming at step ") && resumedAt.mid(17).toInt() >= 2,
                 qPrintable(resumedAt));
        const auto done = events(resumed.out, "done");
        QCOMPARE(int(done.size()), 1);
        QCOMPARE(done[0]["step"].toInt(), 12);
        // It ends where one process that was never interrupted ends.
        const QString whole = m_tmp.filePath("uninterrupted");
        const Run one = cli(trainArgs(whole, m_corpus, m_val, "recurrent", 12));
        QVERIFY2(one.exitCode == 0, one.err.constData());
        QCOMPARE(events(resumed.out, "step").back()["tokens"].toInteger(),
                 events(one.out, "step").back()["tokens"].toInteger());
        const double diff = maxWeightDifference(whole + "/model", out + "/model");
        QVERIFY2(diff >= 0 && diff < 2e-4, qPrintable(QString("weights differ by %1").arg(diff)));
    }

    // Ctrl+C on one rank alone (SIGINT to rank 1) stops every rank after the same step:
    // the ranks vote with each step's exchange, and rank 0 writes the checkpoint.
    void cancelOnOneRankStopsAll() {
        const QString out = m_tmp.filePath("cancelled");
        const auto args = trainArgs(out, m_corpus, m_val, "baseline", 400);
        QProcess r0, r1;
        QByteArray seen;
        QVERIFY2(signalRank1AfterSteps(r0, r1, args, 2, SIGINT, seen),
                 r0.readAllStandardError().constData());
        const Run a = finish(r0, 60000), b = finish(r1, 60000);
        QCOMPARE(a.exitCode, 130);
        QCOMPARE(b.exitCode, 130);
        const auto done = events(seen + a.out, "done");
        QCOMPARE(int(done.size()), 1);
        QCOMPARE(done[0]["message"].toString(), QString("cancelled"));
        const int step = done[0]["step"].toInt();
        QVERIFY(step >= 2 && step < 400);
        QVERIFY2(
            done[0]["path"].toString().endsWith(QString("step-%1").arg(step, 9, 10, QChar('0'))),
            qPrintable(done[0]["path"].toString()));
    }

    // Ranks that cannot start together say why: no rank 0 at the address (after the
    // timeout), a run folder that is not shared (rank 1 finds none of rank 0's
    // checkpoints), and rank 0's own setup failing (a run already in the folder).
    void ranksThatCannotStartSayWhy_data() {
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QByteArray>("rank1Says");
        QTest::newRow("no rank 0") << "no rank 0" << QByteArray("is rank 0 running there?");
        QTest::newRow("folder not shared") << "not shared" << QByteArray("shared filesystem");
        QTest::newRow("rank 0 fails") << "rank 0 fails" << QByteArray("rank 0 failed: ");
    }
    void ranksThatCannotStartSayWhy() {
        QFETCH(QString, problem);
        QFETCH(QByteArray, rank1Says);
        const QString out = m_tmp.filePath("cannot-start-" + problem.left(4));
        if (problem == "rank 0 fails") {
            QDir().mkpath(out);
            QVERIFY(baton::test::writeFile(out + "/run.json", "{}"));
        }
        auto args = trainArgs(out, m_corpus, m_val, "baseline", 2);
        args << "--dist-timeout"
             << "2";
        auto args1 = args;
        if (problem == "not shared")
            args1[args1.indexOf("--out") + 1] = out + "-elsewhere";
        const int port = freePort();
        QProcess r0, r1;
        if (problem != "no rank 0")
            startRank(r0, args, 0, 2, port);
        startRank(r1, args1, 1, 2, port);
        const Run b = finish(r1, 60000);
        QCOMPARE(b.exitCode, 1);
        QVERIFY2(b.err.contains(rank1Says), b.err.constData());
        if (problem != "no rank 0") {
            const Run a = finish(r0, 60000);
            QCOMPARE(a.exitCode, 1);
            QVERIFY2(a.err.startsWith("error: "), a.err.constData());
        }
        if (problem == "rank 0 fails")
            QVERIFY(b.err.contains("already holds a training run"));
    }

    // A rank that stops answering (SIGSTOP) makes the others fail after --dist-timeout.
    void hungRankTimesOut() {
        const QString out = m_tmp.filePath("hung");
        auto args = trainArgs(out, m_corpus, m_val, "baseline", 400);
        args << "--dist-timeout"
             << "3";
        QProcess r0, r1;
        QByteArray seen;
        QVERIFY2(signalRank1AfterSteps(r0, r1, args, 2, SIGSTOP, seen),
                 r0.readAllStandardError().constData());
        QElapsedTimer t;
        t.start();
        const Run a = finish(r0, 60000);
        ::kill(pid_t(r1.processId()), SIGKILL);
        finish(r1, 10000);
        QVERIFY2(t.elapsed() < 30000, "rank 0 waited for a hung peer past its timeout");
        QCOMPARE(a.exitCode, 1);
        QVERIFY2(a.err.contains("stayed silent for 3 s"), a.err.constData());
    }

    // A rank started with another setting, or another corpus under the same name, is
    // refused at the rendezvous by every rank, before anything is written.
    void mismatchedRankIsRefused_data() {
        QTest::addColumn<bool>("otherCorpus");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("another --lr") << false << QByteArray("another configuration");
        QTest::newRow("another corpus") << true << QByteArray("another corpus");
    }
    void mismatchedRankIsRefused() {
        QFETCH(bool, otherCorpus);
        QFETCH(QByteArray, expected);
        // Relative corpus paths: the second rank runs in another folder, where
        // "corpus" holds other text under the same names.
        const QString here = m_tmp.filePath(otherCorpus ? "mm-a" : "mm-lr");
        const QString there = m_tmp.filePath(otherCorpus ? "mm-b" : "mm-lr");
        for (const QString& dir : {here, there}) {
            QDir().mkpath(dir + "/corpus");
            for (int i = 0; i < 3; ++i)
                QFile::copy(m_corpus + QString("/part%1.txt").arg(i),
                            dir + QString("/corpus/part%1.txt").arg(i));
        }
        if (otherCorpus)
            QVERIFY(baton::test::writeFile(there + "/corpus/part2.txt",
                                           baton::test::readFile(m_corpus + "/part0.txt")));
        const QString out = m_tmp.filePath(otherCorpus ? "mm-corpus-run" : "mm-lr-run");
        const auto args = trainArgs(out, "corpus", m_val, "recurrent", 2);
        auto other = args;
        if (!otherCorpus)
            other[other.indexOf("--lr") + 1] = "1e-3";
        const int port = freePort();
        QProcess r0, r1;
        startRank(r0, args, 0, 2, port, here);
        startRank(r1, other, 1, 2, port, there);
        const Run a = finish(r0, 60000), b = finish(r1, 60000);
        QCOMPARE(a.exitCode, 1);
        QCOMPARE(b.exitCode, 1);
        for (const Run* r : {&a, &b})
            QVERIFY2(r->err.contains("rank 1 started with " + expected) &&
                         r->err.contains("[config-mismatch]"),
                     r->err.constData());
        // The configuration is compared before rank 0 writes anything.
        QCOMPARE(QFile::exists(out + "/run.json"), otherCorpus);
        QVERIFY(!QFile::exists(out + "/model"));
        QVERIFY(b.out.isEmpty()); // ranks other than 0 print only their errors
    }

    // torchrun's and Slurm's variables, and what is refused.
    void launcherVariables() {
        using Env = std::map<std::string, std::string>;
        auto read = [](const Env& env) {
            return baton::engine::distributedFromEnvironment([&env](const char* n) {
                auto it = env.find(n);
                return it == env.end() ? nullptr : it->second.c_str();
            });
        };
        auto none = read({});
        QVERIFY(none.ok());
        QVERIFY(!none->active());
        auto torchrun = read({{"RANK", "3"},
                              {"WORLD_SIZE", "4"},
                              {"LOCAL_RANK", "1"},
                              {"MASTER_ADDR", "node7"},
                              {"MASTER_PORT", "29400"}});
        QVERIFY(torchrun.ok());
        QCOMPARE(torchrun->rank, 3);
        QCOMPARE(torchrun->worldSize, 4);
        QCOMPARE(torchrun->localRank, 1);
        QCOMPARE(torchrun->masterAddr, std::string("node7"));
        QCOMPARE(torchrun->masterPort, 29400);
        auto slurm = read({{"SLURM_PROCID", "5"},
                           {"SLURM_NTASKS", "8"},
                           {"SLURM_LOCALID", "1"},
                           {"MASTER_ADDR", "n01"}});
        QVERIFY(slurm.ok());
        QCOMPARE(slurm->rank, 5);
        QCOMPARE(slurm->worldSize, 8);
        QCOMPARE(slurm->localRank, 1);
        QCOMPARE(slurm->masterPort, 29500);
        for (const Env& bad :
             {Env{{"RANK", "4"}, {"WORLD_SIZE", "4"}}, Env{{"RANK", "x"}, {"WORLD_SIZE", "4"}},
              Env{{"RANK", "1"}}, Env{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}},
              Env{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}}) {
            auto r = read(bad);
            QVERIFY(!r.ok());
            QVERIFY(r.error().message.rfind("distributed training: ", 0) == 0);
        }
        // The command line refuses what does not fit together.
        const QString out = m_tmp.filePath("never");
        for (const QStringList& extra :
             {QStringList{"--rank", "1"}, QStringList{"--world-size", "2", "--rank", "2"},
              QStringList{"--nproc", "2", "--world-size", "2", "--rank", "0"},
              QStringList{"--master", "host"}, QStringList{"--master", "host:70000"},
              QStringList{"--nproc", "5"}}) {
            const Run r = cli(trainArgs(out, m_corpus, m_val, "recurrent", 1) + extra);
            QVERIFY2(r.exitCode == 2 || r.exitCode == 1, r.err.constData());
            QVERIFY2(r.err.startsWith("error: "), r.err.constData());
        }
        QVERIFY(!QFile::exists(out + "/model"));
    }
};

QTEST_GUILESS_MAIN(TestCliDistributed)
#include "tst_cli_distributed.moc"
