#include "server_panel.h"

#include "model_catalog.h"
#include "panel_util.h"

#include <baton/server/server.h>

#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

namespace baton::ui {

ServerPanel::ServerPanel(engine::ModelJobs& engine, QWidget* parent)
    : QWidget(parent)
    , m_engine(engine) {
    setObjectName(QStringLiteral("serverPanel"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(sectionTitle(tr("Serve the writing model to other front ends")));
    auto* intro = new QLabel(
        tr("KoboldAI and OpenAI clients (SillyTavern, KoboldAI Lite, scripts) can write with "
           "Baton's model. In SillyTavern choose <i>KoboldAI Classic</i> with "
           "<tt>%1/api</tt>, or <i>Text Completion</i> &gt; <i>KoboldCpp</i>; OpenAI "
           "clients use <tt>%1/v1</tt>. A long story costs no more per request: Baton "
           "reads only what changed since the last one.")
            .arg(QStringLiteral("http://127.0.0.1:5001")));
    intro->setWordWrap(true);
    intro->setTextFormat(Qt::RichText);
    layout->addWidget(intro);

    QSettings settings;
    auto* form = new QFormLayout;
    m_address = new QLineEdit(
        settings.value(QStringLiteral("server/host"), QStringLiteral("127.0.0.1")).toString());
    m_address->setObjectName(QStringLiteral("serverHost"));
    m_address->setToolTip(tr("127.0.0.1: this computer only. Any other address needs an "
                             "API key."));
    m_port = new QSpinBox;
    m_port->setObjectName(QStringLiteral("serverPort"));
    m_port->setRange(0, 65535);
    m_port->setSpecialValueText(tr("any free port"));
    m_port->setValue(settings.value(QStringLiteral("server/port"), 5001).toInt());
    m_key = new QLineEdit;
    m_key->setObjectName(QStringLiteral("serverKey"));
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setPlaceholderText(tr("none (this computer only)"));
    form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
    m_address->setMinimumWidth(280);
    m_key->setMinimumWidth(280);
    form->addRow(tr("Address"), m_address);
    form->addRow(tr("Port"), m_port);
    form->addRow(tr("API key"), m_key);
    layout->addLayout(form);

    auto* row = new QHBoxLayout;
    m_toggle = new QPushButton(tr("Start server"));
    m_toggle->setObjectName(QStringLiteral("serverToggle"));
    row->addWidget(m_toggle);
    row->addStretch(1);
    layout->addLayout(row);

    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("serverStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_model = new QLabel;
    m_model->setObjectName(QStringLiteral("serverModel"));
    m_served = new QLabel;
    m_served->setObjectName(QStringLiteral("serverServed"));
    for (auto* l : {m_status, m_model, m_served})
        layout->addWidget(l);
    layout->addStretch(1);

    m_refresh = new QTimer(this);
    m_refresh->setInterval(1000);
    connect(m_refresh, &QTimer::timeout, this, &ServerPanel::updateStatus);
    connect(m_toggle, &QPushButton::clicked, this, [this] {
        if (running())
            stopServer();
        else
            startServer();
    });
    connect(&m_engine, &engine::ModelJobs::modelLoaded, this, &ServerPanel::updateStatus);
    updateStatus();
}

ServerPanel::~ServerPanel() {
    stopServer();
}

bool ServerPanel::startServer() {
    if (m_server)
        return true;
    server::ServerOptions options;
    options.host = m_address->text().trimmed().toStdString();
    options.port = m_port->value();
    options.apiKey = m_key->text().toStdString();
    options.statesDatabase = m_databasePath.toStdString();
    // A serving thread posts a refresh to this (the GUI) thread, at most one pending:
    // the figures then include every request the server has counted. The server is
    // stopped before this panel goes (stopServer), and a posted call dies with it.
    options.onActivity = [this] {
        if (!m_refreshPosted.exchange(true))
            QMetaObject::invokeMethod(
                this,
                [this] {
                    m_refreshPosted = false;
                    updateStatus();
                },
                Qt::QueuedConnection);
    };
    if (auto ok = server::validateServerOptions(options); !ok) {
        m_status->setText(QString::fromStdString(ok.error().message));
        return false;
    }
    // The server's requests are jobs of the writing model's queue, in one line with the
    // story editor's generations.
    auto server = std::make_unique<server::Server>(m_engine.queue(), options);
    if (auto started = server->start(); !started) {
        m_status->setText(QString::fromStdString(started.error().message));
        return false;
    }
    m_server = std::move(server);
    QSettings settings;
    settings.setValue(QStringLiteral("server/host"), m_address->text().trimmed());
    settings.setValue(QStringLiteral("server/port"), m_port->value());
    m_refresh->start();
    updateStatus();
    return true;
}

void ServerPanel::stopServer() {
    if (!m_server)
        return;
    m_server.reset(); // cancels what it runs and what waits in the queue
    m_refresh->stop();
    updateStatus();
}

QString ServerPanel::url() const {
    return m_server ? QString::fromStdString(m_server->url()) : QString();
}

void ServerPanel::updateStatus() {
    const bool on = running();
    m_toggle->setText(on ? tr("Stop server") : tr("Start server"));
    for (QWidget* w : {static_cast<QWidget*>(m_address), static_cast<QWidget*>(m_port),
                       static_cast<QWidget*>(m_key)})
        w->setEnabled(!on);
    const auto& model = m_engine.model();
    m_model->setText(
        model ? tr("Model: %1 (the writing model; load another in Models)").arg(modelName(*model))
              : tr("Model: none loaded yet (requests get 503 until one is)"));
    if (!on) {
        m_served->clear();
        if (!m_status->text().startsWith(QStringLiteral("Listening")))
            return;
        m_status->setText(tr("Stopped."));
        return;
    }
    m_status->setText(tr("Listening on %1 — KoboldAI: %1/api, OpenAI: %1/v1").arg(url()));
    const auto s = m_server->stats();
    m_served->setText(
        tr("Requests: %1 (answered with an error: %2) · generations: %3 (running or waiting: %4) "
           "· prompt tokens read from saved states: %5 of %6")
            .arg(s.requests)
            .arg(s.rejected)
            .arg(s.generations)
            .arg(s.queued)
            .arg(s.completions.reusedTokens)
            .arg(s.completions.promptTokens));
}

} // namespace baton::ui
