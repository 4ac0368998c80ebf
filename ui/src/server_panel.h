// The Server page: Baton as a backend for KoboldAI and OpenAI front ends (SillyTavern,
// KoboldAI Lite, scripts), from the app. Start and stop it, see its address, the model
// it serves (the writing model: the server's generations queue with the story's on the
// same engine) and what it has served. The figures refresh when the server reports
// activity (a request counted as it arrives, an answer written), so a client that has
// its answer finds its request counted on the page; a slow timer adds nothing but the
// queue's changes in between.
#pragma once

#include <baton/engine/qt/model_jobs.h>

#include <QWidget>

#include <atomic>
#include <memory>

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTimer;

namespace baton::server {
class Server;
}

namespace baton::ui {

class ServerPanel : public QWidget {
    Q_OBJECT
public:
    explicit ServerPanel(engine::ModelJobs& engine, QWidget* parent = nullptr);
    ~ServerPanel() override; // stops the server

    // Starts with the fields' settings; false (and the reason shown) when it cannot.
    bool startServer();
    void stopServer();
    bool running() const { return m_server != nullptr; }
    // http://host:port while running, else "".
    QString url() const;
    // The story database: prompt states are saved there too (from the next start).
    void setDatabasePath(const QString& path) { m_databasePath = path; }

private:
    void updateStatus();

    engine::ModelJobs& m_engine;
    std::unique_ptr<server::Server> m_server;
    QLineEdit* m_address = nullptr;
    QSpinBox* m_port = nullptr;
    QLineEdit* m_key = nullptr;
    QPushButton* m_toggle = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_model = nullptr;
    QLabel* m_served = nullptr;
    QTimer* m_refresh = nullptr;
    QString m_databasePath;
    // Set by a serving thread that posted a refresh not run yet (one at a time).
    std::atomic<bool> m_refreshPosted{false};
};

} // namespace baton::ui
