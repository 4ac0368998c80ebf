// The Topics page's fitting, driven through its widgets offscreen on a database of
// its own (the lab engine fits; no language model is needed): with one short book
// (60 KB of Emma, a vocabulary of a few dozen words) a 20-topic fit gives copies of
// one topic, which is refused with the reason and the number of topics the book
// supports; that number fits and is registered, and the "fit a topic model first"
// hint goes. Idle progress bars are hidden. Screenshots of both outcomes. The
// synthetic task's tab shows the report in the writing model's folder (its adapter's
// first), says when there is none, and names a damaged one.
#include "test_support.h"

#include "synthetic_panel.h"
#include "topic_fit_check.h"
#include "topics_panel.h"

#include <baton/engine/qt/model_jobs.h>
#include <baton/engine/synthetic.h>
#include <baton/engine/topics.h>
#include <baton/storage/qt/storage_controller.h>

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace baton;

class TestTopicsPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::unique_ptr<storage::StorageController> m_storage;
    std::unique_ptr<engine::ModelJobs> m_engine, m_lab;
    std::unique_ptr<ui::TopicsPanel> m_panel;

    template <typename T>
    T* child(const char* name) const {
        return m_panel->findChild<T*>(QLatin1String(name));
    }
    QString fitStatus() const { return child<QLabel>("fitStatus")->text(); }
    void screenshot(const QString& name) {
        QDir().mkpath(QStringLiteral(BATON_SCREENSHOT_DIR));
        const QString path = QStringLiteral(BATON_SCREENSHOT_DIR "/") + name;
        QVERIFY2(m_panel->grab().save(path), qPrintable(path));
    }
    // Presses Fit and waits until the fit is checked and registered or refused.
    void fitThrough(int topics, const QString& name) {
        m_panel->setFitOptions(topics, 200, name);
        QSignalSpy ended(m_panel.get(), &ui::TopicsPanel::fitFinished);
        QTest::mouseClick(child<QPushButton>("fitStart"), Qt::LeftButton);
        QVERIFY(m_panel->fitting());
        QVERIFY(!child<QPushButton>("fitStart")->isEnabled());
        QVERIFY(ended.wait(120000));
        QCOMPARE(ended.count(), 1);
        QVERIFY(!m_panel->fitting());
    }

private Q_SLOTS:
    void initTestCase() {
        test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        qRegisterMetaType<ui::ErrorText>();
        m_storage = std::make_unique<storage::StorageController>();
        QSignalSpy opened(m_storage.get(), &storage::StorageController::opened);
        m_storage->open(m_tmp.filePath(QStringLiteral("topics.db")));
        QVERIFY(opened.wait(10000));
        m_engine = std::make_unique<engine::ModelJobs>();
        m_lab = std::make_unique<engine::ModelJobs>();
        m_panel = std::make_unique<ui::TopicsPanel>(*m_storage, *m_engine, *m_lab);
        m_panel->setTopicsFolder(m_tmp.filePath(QStringLiteral("topics")));
        m_panel->resize(1280, 800);
        m_panel->setVisible(true); // (TopicsPanel::show draws an inspection)
        QVERIFY(QTest::qWaitForWindowExposed(m_panel.get()));
        m_panel->refresh();

        const QByteArray emma =
            test::readFile(test::sharedPath("corpus/books/austen-emma.txt")).mid(20000, 60000);
        QVERIFY2(emma.size() == 60000, qPrintable(test::missingMessage("corpus/books")));
        storage::Book book;
        book.title = "Emma, 60 KB";
        book.text = emma.toStdString();
        book.textBytes = emma.size();
        book.checksum = "emma-60k";
        bool added = false;
        m_storage->addBooks({book}, this, [&](bool) { added = true; });
        QTRY_VERIFY(added);
    }

    void idleProgressBarsAreHidden() {
        QVERIFY(!child<QProgressBar>("fitProgress")->isVisible());
        QVERIFY(!child<QProgressBar>("topicsProgress")->isVisible());
        // The form says what a topic needs before anything is fitted.
        QVERIFY(child<QLabel>("fitAbout")->text().contains(QStringLiteral("10 words")));
    }

    void tooManyTopicsForTheVocabularyAreRefused() {
        // Nothing to analyse with yet: the hint.
        QTest::mouseClick(child<QPushButton>("topicsAnalyze"), Qt::LeftButton);
        QVERIFY(child<QLabel>("topicsStatus")->text().contains("Fit a topic model first"));

        QSignalSpy fitted(m_panel.get(), &ui::TopicsPanel::fitted);
        fitThrough(20, QStringLiteral("Twenty"));
        const QString said = fitStatus();
        QVERIFY2(said.startsWith(QStringLiteral("Not kept")), qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("share most of their top words")), qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("Fit at most")), qPrintable(said));
        // Not registered, and its file is gone.
        QCOMPARE(fitted.count(), 0);
        m_panel->refresh();
        QTest::qWait(200);
        QCOMPARE(m_panel->topicModelCount(), 0);
        QVERIFY(QDir(m_tmp.filePath(QStringLiteral("topics")))
                    .entryList({QStringLiteral("*.json")}, QDir::Files)
                    .isEmpty());
        QVERIFY(child<QLabel>("topicsStatus")->text().contains("Fit a topic model first"));
        screenshot(QStringLiteral("topics_refused.png"));
        m_suggested = QRegularExpression(QStringLiteral("Fit at most (\\d+) topics"))
                          .match(said)
                          .captured(1)
                          .toInt();
        QVERIFY2(m_suggested >= 2 && m_suggested < 20, qPrintable(said));
    }

    void theSuggestedNumberIsKept() {
        QVERIFY2(m_suggested > 0, "needs the previous test's suggestion");
        QSignalSpy fitted(m_panel.get(), &ui::TopicsPanel::fitted);
        fitThrough(m_suggested, QStringLiteral("A few"));
        QCOMPARE(fitted.count(), 1);
        QVERIFY2(fitStatus().contains(QStringLiteral("is ready")), qPrintable(fitStatus()));
        QTRY_COMPARE(m_panel->topicModelCount(), 1);
        // The model is there: the hint to fit one is gone.
        QVERIFY2(!child<QLabel>("topicsStatus")->text().contains("Fit a topic model first"),
                 qPrintable(child<QLabel>("topicsStatus")->text()));
        // The registered model's topics are distinct.
        auto model = engine::TopicModel::load(fitted.at(0).at(0).toString().toStdString());
        QVERIFY(model);
        const ui::TopicFitCheck check = ui::checkTopicModel(*model);
        QCOMPARE(check.topics, m_suggested);
        QCOMPARE(check.repeated(), 0);
        QVERIFY(!child<QProgressBar>("fitProgress")->isVisible());
        screenshot(QStringLiteral("topics_fitted.png"));
    }

    // The check itself on a model built by hand: topics 2 and 3 copy topic 1.
    void repeatedTopicsAreFound() {
        const std::vector<std::string> vocabulary{"ash", "bay", "cove", "dune", "elm", "fen"};
        // [topic][word] counts: topic 0 favours ash, bay, cove; 1 and 2 the same; 3 the rest.
        const std::vector<int32_t> counts{9, 8, 7, 0, 0, 0, 9, 8, 7, 0, 0, 1,
                                          7, 9, 8, 1, 0, 0, 0, 0, 0, 9, 8, 7};
        const engine::TopicModel model(4, 0.5, 0.01, vocabulary, counts);
        const ui::TopicFitCheck c = ui::checkTopicModel(model);
        QCOMPARE(c.vocabulary, 6);
        QCOMPARE(c.repeats, (std::vector<int>{-1, 0, 0, -1}));
        QCOMPARE(c.repeated(), 2);
        QCOMPARE(c.distinct(), 2);
        QVERIFY(c.smallVocabulary());
        QCOMPARE(c.suggestedTopics(), 0); // 6 words: too few for two topics
        QCOMPARE(c.sharedWords(), QStringLiteral("ash, bay, cove"));
    }

    void theSyntheticCurveOfTheWritingModel() {
        auto* panel = m_panel->syntheticPanel();
        auto* tabs = child<QTabWidget>("topicsBelowTabs");
        tabs->setCurrentWidget(panel);
        const QString base = m_tmp.filePath(QStringLiteral("synthetic-base"));
        const QString adapter = m_tmp.filePath(QStringLiteral("synthetic-adapter"));
        QVERIFY(QDir().mkpath(base) && QDir().mkpath(adapter));
        auto status = [&] { return panel->findChild<QLabel*>("syntheticStatus")->text(); };
        engine::ModelInfo info;
        info.path = base.toStdString();
        Q_EMIT m_engine->modelLoaded(info);
        QVERIFY(!panel->report());
        QVERIFY(status().contains(QStringLiteral("holds no synthetic-task result")));

        // A report of a recurrent design: d = 0 right, d = 1 carried, later at chance.
        engine::SyntheticReport r;
        r.config.design = "write4all";
        r.config.layers = 2;
        r.config.embd = 64;
        r.steps = 3000;
        r.evaluation.chance = 1.0 / r.config.task.values;
        r.evaluation.sequences = 1000;
        r.evaluation.windows = 10;
        const std::vector<std::pair<int, std::array<int, 2>>> correct{
            {0, {950, 948}}, {1, {700, 62}}, {2, {300, 60}}, {4, {70, 64}}, {8, {66, 61}}};
        for (const auto& [d, c] : correct)
            for (int s = 0; s < 2; ++s) {
                engine::SyntheticCell cell;
                cell.distance = d;
                cell.state = s == 0 ? "on" : "off";
                cell.questions = 1000;
                cell.correct = c[size_t(s)];
                cell.meanProbability = 0.5;
                r.evaluation.cells.push_back(cell);
            }
        QVERIFY(test::writeFile(adapter + QStringLiteral("/synthetic.json"),
                                QByteArray::fromStdString(engine::syntheticReportJson(r))));
        // The adapter's folder is read, not the base's.
        info.adapter = adapter.toStdString();
        Q_EMIT m_engine->modelLoaded(info);
        QVERIFY(panel->report());
        QCOMPARE(panel->report()->config.design, std::string("write4all"));
        QVERIFY2(status().contains(QStringLiteral("state on: 0.95 / 0.70 / 0.30 / 0.07 / 0.07")),
                 qPrintable(status()));
        QVERIFY(status().contains(QStringLiteral("not on text")));
        QVERIFY(!status().contains(QStringLiteral("curriculum")));
        // Trained with a curriculum: its stages and where training reached them.
        r.config.curriculum = {1, 2, 4, 10};
        r.config.bpttWindows = 10;
        r.stages = {{1, 0, 0.95, 0}, {2, 400, 0.91, 1}, {4, 700, -1, 0}};
        QVERIFY(test::writeFile(adapter + QStringLiteral("/synthetic.json"),
                                QByteArray::fromStdString(engine::syntheticReportJson(r))));
        Q_EMIT m_engine->modelLoaded(info);
        QVERIFY2(status().contains(QStringLiteral("curriculum of 1, 2, 4, 10 windows per "
                                                  "sequence; reached: 1 from step 1, 2 from "
                                                  "step 401, 4 from step 701.")),
                 qPrintable(status()));
        QCoreApplication::processEvents(); // the chart's title is laid out on the next pass
        screenshot(QStringLiteral("topics_synthetic.png"));

        QVERIFY(test::writeFile(adapter + QStringLiteral("/synthetic.json"), "{\"format\": 3"));
        Q_EMIT m_engine->modelLoaded(info);
        QVERIFY(!panel->report());
        QVERIFY(status().contains(QStringLiteral("could not be read")));
        panel->showFolder(QString());
        QVERIFY(status().contains(QStringLiteral("No model is loaded")));
    }

    void cleanupTestCase() {
        m_panel.reset();
        m_lab.reset();
        m_engine.reset();
        m_storage.reset();
    }

private:
    int m_suggested = 0;
};

QTEST_MAIN(TestTopicsPage)
#include "tst_topics_page.moc"
