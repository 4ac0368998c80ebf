#include "baton/engine/engine_controller.h"

#include "engine_worker.h"

#include <QMetaObject>

#include <exception>

namespace baton::engine {

EngineController::EngineController(QObject* parent)
    : QObject(parent) {
    qRegisterMetaType<JobId>("baton::engine::JobId");
    qRegisterMetaType<ModelInfo>();
    qRegisterMetaType<GenerationProgress>();
    qRegisterMetaType<StateChunk>();
    qRegisterMetaType<GenerationDone>();
    qRegisterMetaType<ScoreResult>();
    qRegisterMetaType<TokenLosses>();
    qRegisterMetaType<TrainEvent>();
    qRegisterMetaType<TopicsInspection>();
    qRegisterMetaType<ProbeResult>();
    qRegisterMetaType<Error>();
    m_thread.setObjectName(QStringLiteral("baton-engine"));
    m_worker = new EngineWorker;
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connectWorker();
    m_thread.start();
}

EngineController::~EngineController() {
    cancelAll();
    m_thread.quit();
    m_thread.wait();
}

// Every value that crosses threads goes through here: worker signals are re-emitted
// by the controller on the GUI thread (queued connections, value types only).
void EngineController::connectWorker() {
    connect(m_worker, &EngineWorker::jobStarted, this, &EngineController::jobStarted);
    connect(m_worker, &EngineWorker::jobProgress, this, &EngineController::jobProgress);
    connect(m_worker, &EngineWorker::modelLoaded, this, [this](JobId job, const ModelInfo& info) {
        m_model = info;
        Q_EMIT modelLoaded(job, info);
    });
    connect(m_worker, &EngineWorker::generationProgress, this,
            &EngineController::generationProgress);
    connect(m_worker, &EngineWorker::generationChunk, this, &EngineController::generationChunk);
    connect(m_worker, &EngineWorker::generationDone, this, &EngineController::generationDone);
    connect(m_worker, &EngineWorker::evaluationRow, this, &EngineController::evaluationRow);
    connect(m_worker, &EngineWorker::tokenLosses, this, &EngineController::tokenLosses);
    connect(m_worker, &EngineWorker::trainingEvent, this, &EngineController::trainingEvent);
    connect(m_worker, &EngineWorker::topicsFitted, this, &EngineController::topicsFitted);
    connect(m_worker, &EngineWorker::topicsInspected, this, &EngineController::topicsInspected);
    connect(m_worker, &EngineWorker::probed, this, &EngineController::probed);
    connect(m_worker, &EngineWorker::jobFinished, this,
            [this](JobId job, bool ok, const Error& error) {
                m_tokens.remove(job);
                Q_EMIT jobFinished(job, ok, error);
            });
}

JobId EngineController::enqueue(
    const std::function<void(EngineWorker&, JobId, const CancelToken&)>& run) {
    const JobId job = m_next++;
    CancelToken token;
    m_tokens.insert(job, token);
    EngineWorker* worker = m_worker;
    QMetaObject::invokeMethod(
        m_worker,
        [worker, run, job, token] {
            try {
                run(*worker, job, token);
            } catch (const std::exception& e) {
                Q_EMIT worker->jobFinished(
                    job, false, Error{ErrorCode::Internal, std::string("engine: ") + e.what()});
            }
        },
        Qt::QueuedConnection);
    return job;
}

JobId EngineController::loadModel(const QString& folder, WeightFormat weights,
                                  const QString& device) {
    return enqueue([folder, weights, device](EngineWorker& w, JobId job, const CancelToken& c) {
        w.runLoad(job, folder, weights, device, c);
    });
}

JobId EngineController::runGeneration(GenerationTask task) {
    return enqueue([task = std::move(task)](EngineWorker& w, JobId job, const CancelToken& c) {
        w.runTask(job, task, c);
    });
}

JobId EngineController::generate(const GenerateRequest& request) {
    return enqueue([request](EngineWorker& w, JobId job, const CancelToken& c) {
        w.runGenerate(job, request, c);
    });
}

JobId EngineController::evaluate(const EvaluateRequest& request) {
    return enqueue([request](EngineWorker& w, JobId job, const CancelToken& c) {
        w.runEvaluate(job, request, c);
    });
}

JobId EngineController::train(const TrainConfig& config) {
    return enqueue(
        [config](EngineWorker& w, JobId job, const CancelToken& c) { w.runTrain(job, config, c); });
}

JobId EngineController::fitTopics(const TopicsRequest& request) {
    return enqueue([request](EngineWorker& w, JobId job, const CancelToken& c) {
        w.runTopics(job, request, c);
    });
}

JobId EngineController::inspectTopics(const TopicsInspectRequest& request) {
    return enqueue([request](EngineWorker& w, JobId job, const CancelToken& c) {
        w.runInspect(job, request, c);
    });
}

JobId EngineController::probe(const std::vector<std::string>& texts, const ProbeOptions& options) {
    return enqueue([texts, options](EngineWorker& w, JobId job, const CancelToken& c) {
        w.runProbe(job, texts, options, c);
    });
}

void EngineController::cancel(JobId job) {
    if (auto it = m_tokens.find(job); it != m_tokens.end())
        it->cancel();
}

void EngineController::cancelAll() {
    for (const auto& token : std::as_const(m_tokens))
        token.cancel();
}

} // namespace baton::engine
