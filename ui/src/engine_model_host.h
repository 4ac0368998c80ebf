// The server's model host in the app: the server's generations run as jobs of the
// writing engine (EngineController::runGeneration), in one queue with the story
// editor's, so the two never run the model at once. Lives on the GUI thread; run()
// is called from the server's threads and waits there.
#pragma once

#include <baton/engine/engine_controller.h>
#include <baton/server/model_host.h>

#include <QHash>
#include <QObject>

#include <memory>

namespace baton::ui {

class EngineModelHost final : public QObject, public server::ModelHost {
    Q_OBJECT
public:
    explicit EngineModelHost(engine::EngineController& engine, QObject* parent = nullptr);
    ~EngineModelHost() override;

    std::shared_ptr<const engine::Model> current() const override;
    engine::Result<void> run(const server::ModelJob& job, const engine::CancelToken& cancel,
                             const std::function<bool()>& wanted) override;

    // Every job still waiting gives up, and no new one is taken (before the server
    // stops, so that no server thread waits for the GUI thread).
    void close();
    // Learns the engine's model (after a load): a short job on the engine thread.
    void refresh();

private:
    struct Shared;
    struct Pending;
    void enqueue(const std::shared_ptr<Pending>& pending);

    engine::EngineController& m_engine;
    std::shared_ptr<Shared> m_shared;
    QHash<engine::JobId, std::shared_ptr<Pending>> m_pending; // GUI thread only
};

} // namespace baton::ui
