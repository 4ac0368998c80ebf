// The engine thread's side of EngineController: owns the model and the live
// generator, runs one job at a time, and reports through signals with value types.
#pragma once

#include "baton/engine/engine_controller.h"

#include <QElapsedTimer>
#include <QObject>

#include <memory>

namespace baton::engine {

class EngineWorker : public QObject {
    Q_OBJECT
public:
    void runLoad(JobId job, const QString& folder, WeightFormat weights, const QString& device,
                 const CancelToken& cancel);
    void runGenerate(JobId job, const GenerateRequest& request, const CancelToken& cancel);
    void runTask(JobId job, const GenerationTask& task, const CancelToken& cancel);
    void runEvaluate(JobId job, const EvaluateRequest& request, const CancelToken& cancel);
    void runTrain(JobId job, const TrainConfig& config, const CancelToken& cancel);
    void runTopics(JobId job, const TopicsRequest& request, const CancelToken& cancel);
    void runInspect(JobId job, const TopicsInspectRequest& request, const CancelToken& cancel);
    void runProbe(JobId job, const std::vector<std::string>& texts, ProbeOptions options,
                  const CancelToken& cancel);

Q_SIGNALS:
    void jobStarted(baton::engine::JobId job);
    void jobProgress(baton::engine::JobId job, double fraction, QString message);
    void modelLoaded(baton::engine::JobId job, baton::engine::ModelInfo info);
    void generationProgress(baton::engine::JobId job, baton::engine::GenerationProgress progress);
    void generationChunk(baton::engine::JobId job, baton::engine::StateChunk chunk);
    void generationDone(baton::engine::JobId job, baton::engine::GenerationDone done);
    void evaluationRow(baton::engine::JobId job, baton::engine::ScoreResult row, bool withState);
    void tokenLosses(baton::engine::JobId job, baton::engine::TokenLosses losses);
    void trainingEvent(baton::engine::JobId job, baton::engine::TrainEvent event);
    void topicsFitted(baton::engine::JobId job, QString path, int topics, int vocabularySize);
    void topicsInspected(baton::engine::JobId job, baton::engine::TopicsInspection inspection);
    void probed(baton::engine::JobId job, baton::engine::ProbeResult result);
    void jobFinished(baton::engine::JobId job, bool ok, baton::engine::Error error);

private:
    // Throttled generationProgress for a stream of generation events (the first at
    // once, then about every 50 ms; the text since the last one).
    class ProgressStream {
    public:
        ProgressStream(EngineWorker& worker, JobId job);
        bool onEvent(const GenerationEvent& event);
        void finish(); // the text not yet sent
    private:
        void flush();
        EngineWorker& m_worker;
        JobId m_job;
        QElapsedTimer m_timer, m_clock;
        bool m_first = true;
        GenerationProgress m_pending;
        GenerationEvent m_last;
    };

    // Starts a job: false (and jobFinished with Cancelled) when it was cancelled
    // while it waited in the queue.
    bool begin(JobId job, const CancelToken& cancel);
    // begin(), then false (and jobFinished with an error) when no model is loaded.
    bool beginWithModel(JobId job, const CancelToken& cancel);
    void fail(JobId job, const Error& error) { Q_EMIT jobFinished(job, false, error); }
    void succeed(JobId job) { Q_EMIT jobFinished(job, true, Error{}); }
    // True when a throttled progress signal is due (the first at once).
    bool due(QElapsedTimer& timer, bool& first);
    Result<std::unique_ptr<Generator>> generatorFor(const GenerateRequest& request,
                                                    const CancelToken& cancel);

    std::shared_ptr<Model> m_model;
    // The generator of the last generation and the state it ended in: a request that
    // continues from exactly that state reuses it and re-encodes nothing.
    std::unique_ptr<Generator> m_live;
    std::vector<uint8_t> m_liveState;
    bool m_liveUsesState = true;
};

} // namespace baton::engine
