// The app's Server page: started from the app on the writing model, it answers a
// KoboldAI client with the model the story editor uses (its jobs queue on the same
// engine), counts every request it answered (on the page as soon as the client has
// its answer), refuses an open address without a key, and stops.
#include "app_harness.h"
#include "test_support.h"

#include "server_panel.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <QDeadlineTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <thread>
#include <tuple>
#include <vector>

using namespace baton;

class TestServerPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    test::AppHarness m_app;

    template <typename T>
    T* child(const char* name) const {
        return m_app.window->findChild<T*>(QLatin1String(name));
    }

    // A request from a client thread while the GUI thread keeps running (the page's
    // jobs are queued through it).
    std::pair<int, std::string> request(int port, const std::string& method,
                                        const std::string& path, const std::string& body = {}) {
        std::atomic<bool> done{false};
        std::pair<int, std::string> out{0, {}};
        std::thread client([&] {
            httplib::Client c("127.0.0.1", port);
            c.set_read_timeout(60, 0);
            auto r = method == "GET" ? c.Get(path.c_str())
                                     : c.Post(path.c_str(), body, "application/json");
            if (r)
                out = {r->status, r->body};
            done = true;
        });
        QDeadlineTimer deadline(90000);
        while (!done.load() && !deadline.hasExpired())
            QTest::qWait(20);
        client.join(); // the client's own read timeout ends it

        return out;
    }

private Q_SLOTS:
    void initTestCase() {
        test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        m_app.start(m_tmp.filePath(QStringLiteral("baton.db")));
        QVERIFY(!QTest::currentTestFailed());
        QSignalSpy ready(m_app.window.get(), &ui::MainWindow::modelReady);
        m_app.window->loadModel(test::fixtureDir());
        QVERIFY(ready.wait(60000));
    }

    void servesTheWritingModel() {
        m_app.window->showPage(ui::MainWindow::Page::Server);
        auto* page = m_app.window->serverPanel();
        QVERIFY(page && page->isVisible());
        child<QSpinBox>("serverPort")->setValue(0); // any free port
        child<QPushButton>("serverToggle")->click();
        QVERIFY(page->running());
        QVERIFY(child<QLabel>("serverStatus")->text().contains(page->url()));
        QVERIFY(child<QLabel>("serverModel")->text().contains(QStringLiteral("gpt2-tiny-random")));
        const int port = QUrl(page->url()).port();
        QVERIFY(port > 0);

        QTRY_COMPARE_WITH_TIMEOUT(request(port, "GET", "/api/v1/model").first, 200, 30000);
        auto [status, body] = request(port, "GET", "/api/v1/model");
        QCOMPARE(QString::fromStdString(body), QStringLiteral(R"({"result":"gpt2-tiny-random"})"));
        auto [gs, gen] =
            request(port, "POST", "/api/v1/generate",
                    R"({"prompt":"Once upon a time","max_length":12,"sampler_seed":1})");
        QCOMPARE(gs, 200);
        const auto answer = nlohmann::json::parse(gen);
        QVERIFY(!answer["results"][0]["text"].get<std::string>().empty());
        QTRY_VERIFY_WITH_TIMEOUT(
            child<QLabel>("serverServed")->text().contains(QStringLiteral("generations: 1 ")),
            5000);
        m_app.screenshot(QStringLiteral("server_page.png"));

        child<QPushButton>("serverToggle")->click();
        QVERIFY(!page->running());
        QCOMPARE(request(port, "GET", "/api/v1/model").first, 0); // nobody listens
    }

    // Every request is on the page as soon as its client has the answer: N requests of
    // every kind (a model query, a generation, an unknown path, a bad body), N shown,
    // with no wait for a refresh (the page once polled every second and showed 3 of 4).
    void theCounterShowsEveryRequest() {
        m_app.window->showPage(ui::MainWindow::Page::Server);
        auto* page = m_app.window->serverPanel();
        child<QSpinBox>("serverPort")->setValue(0);
        QVERIFY(page->startServer());
        struct Stopped { // however the test ends
            ui::ServerPanel* page;
            ~Stopped() { page->stopServer(); }
        } stopped{page};
        const int port = QUrl(page->url()).port();
        auto* served = child<QLabel>("serverServed");
        const auto shown = [served] {
            QCoreApplication::processEvents(); // what the server posted before answering
            const QRegularExpressionMatch m =
                QRegularExpression(QStringLiteral("Requests: (\\d+)")).match(served->text());
            return m.hasMatch() ? m.captured(1).toInt() : -1;
        };
        QCOMPARE(shown(), 0);
        const std::vector<std::tuple<std::string, std::string, std::string, int>> sent{
            {"GET", "/api/v1/model", "", 200},
            {"POST", "/api/v1/generate", R"({"prompt":"Once","max_length":4,"sampler_seed":2})",
             200},
            {"GET", "/api/v1/nothing-here", "", 404},
            {"POST", "/api/v1/generate", "{not json", 400},
        };
        int n = 0;
        for (const auto& [method, path, body, expected] : sent) {
            QCOMPARE(request(port, method, path, body).first, expected);
            ++n;
            QCOMPARE(shown(), n);
        }
        // The errors are counted once their answers are written (just after).
        QTRY_VERIFY2(served->text().contains(QStringLiteral("answered with an error: 2")),
                     qPrintable(served->text()));
        QCOMPARE(shown(), 4);
    }

    void anOpenAddressNeedsAKey() {
        auto* page = m_app.window->serverPanel();
        child<QLineEdit>("serverHost")->setText(QStringLiteral("0.0.0.0"));
        QVERIFY(!page->startServer());
        QVERIFY(child<QLabel>("serverStatus")->text().contains(QStringLiteral("API key")));
        child<QLineEdit>("serverHost")->setText(QStringLiteral("127.0.0.1"));
    }

    void cleanupTestCase() { m_app.stop(); }
};

QTEST_MAIN(TestServerPage)
#include "tst_server_page.moc"
