// The engine's QtCore facade for the GUI: one engine thread runs jobs (load,
// generate, evaluate, train, fit topics, probe) one at a time in FIFO order. Requests and
// results are value types; progress is throttled at the source (about every 50 ms,
// the first at once); every job ends with exactly one jobFinished. Cancellation is
// cooperative: a cancelled generation keeps what it generated.
#pragma once

#include "baton/engine/error.h"
#include "baton/engine/generator.h"
#include "baton/engine/model.h"
#include "baton/engine/probe.h"
#include "baton/engine/sampling.h"
#include "baton/engine/scoring.h"
#include "baton/engine/state_chunker.h"
#include "baton/engine/topics.h"
#include "baton/engine/training.h"
#include "baton/engine/windows.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <QThread>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace baton::engine {

class EngineWorker;
using JobId = quint64;

// A generation that a layer above the engine drives (a story's continuation, which
// also saves what it writes): it runs on the engine thread with the loaded model and
// passes every event to onToken, which streams generationProgress as generate() does.
// What the task needs besides the model it owns; it touches nothing of another thread.
using GenerationTask = std::function<Result<GenerationResult>(
    const std::shared_ptr<const Model>& model,
    const std::function<bool(const GenerationEvent&)>& onToken, const CancelToken& cancel)>;

struct GenerateRequest {
    // Continue from a state blob (from an earlier GenerationDone or StateChunk), or
    // from nothing when empty; `text` is appended after it (the whole text when there
    // is no state).
    std::vector<uint8_t> state;
    std::string text;
    // Without a state: start the stream with the model's start-of-text token, then
    // `text` (as baton-cli story generate encodes a story, and as a generation from
    // nothing starts). Ignored when continuing from a state.
    bool startOfText = false;
    SamplingOptions sampling;
    WindowSettings windows; // window 0: the model's default
    bool useState = true;   // false: a recurrent model with its state switched off
    int chunkTokens = 16;   // generationChunk about every this many tokens
};

// Streamed text (complete UTF-8) since the previous progress signal.
struct GenerationProgress {
    std::string text;
    int64_t generated = 0;    // tokens so far in this job
    int64_t streamLength = 0; // tokens in the whole stream
    int windowFill = 0;       // positions of the open window in use
    int64_t windowIndex = 0;  // windows rolled over before the open one
    double tokensPerSecond = 0;
};

struct GenerationDone {
    GenerationResult result;
    std::vector<uint8_t> state; // the state after the last token (to continue later)
};

struct EvaluateRequest {
    std::string text;
    std::vector<WindowSettings> settings; // one ScoreResult per setting
    bool alsoWithoutState = false;        // recurrent models: each setting again, state off
    bool keepPerToken = false;
};

// The per-token losses of an evaluation along its text (EvaluateRequest.keepPerToken),
// for colouring the text and drawing its windows: token i ends at byte byteEnd[i] of
// the evaluated text and cost nll[i] nats (token 0 is never predicted: NaN).
struct TokenLosses {
    WindowSettings windows;
    bool withState = true;
    std::vector<int64_t> byteEnd;
    std::vector<float> nll;
};

struct TopicsRequest {
    std::vector<std::string> texts;
    LdaOptions options;
    std::string outPath; // where the fitted model is saved
};

// The topics view of a text (the open story), with the loaded model and a fitted
// topic model: per window, its topic distribution (fold-in) and, for a recurrent
// model, the tokens the state handed to it points to (readStates); and the latest
// generation's context against its continuation.
struct TopicsInspectRequest {
    std::string text;
    WindowSettings windows; // window 0: the model's default
    std::string topicModelPath;
    // The byte where the latest generation begins (-1: none): its context is the T
    // tokens before it, its continuation the text from it on.
    int64_t continuationByte = -1;
    int topWords = 8;
    int stateTokens = 8;
    int inferIterations = 60;
};

struct WindowTopics {
    int64_t window = 0;
    int64_t firstToken = 0;
    int64_t firstByte = 0;
    std::vector<double> theta;            // sums to 1
    std::vector<std::string> stateTokens; // empty for window 0 and baseline models
    std::vector<float> stateProbs;
};

struct TopicsInspection {
    int topics = 0;
    std::vector<std::vector<std::string>> topWords; // per topic, most probable first
    std::vector<WindowTopics> windows;
    bool recurrent = false;
    std::vector<double> context, continuation; // empty without a continuation
    double jsdBits = -1;                       // JSD(context, continuation); -1: none
};

class EngineController : public QObject {
    Q_OBJECT
public:
    explicit EngineController(QObject* parent = nullptr);
    // Cancels every job, waits for the engine thread to stop.
    ~EngineController() override;

    JobId loadModel(const QString& folder, WeightFormat weights = WeightFormat::F32,
                    const QString& device = QStringLiteral("cpu"));
    JobId generate(const GenerateRequest& request);
    // Runs `task` (GenerationTask): generationProgress while it streams, then
    // generationDone with its result (and no state) and jobFinished.
    JobId runGeneration(GenerationTask task);
    JobId evaluate(const EvaluateRequest& request);
    JobId train(const TrainConfig& config);
    JobId fitTopics(const TopicsRequest& request);
    JobId inspectTopics(const TopicsInspectRequest& request);
    // The memory probe (probe.h) with the loaded model on the texts: progress by
    // episodes, then probed and jobFinished. options.cancel and options.progress are
    // the job's own.
    JobId probe(const std::vector<std::string>& texts, const ProbeOptions& options);

    void cancel(JobId job);
    void cancelAll();
    // Jobs queued or running.
    int pendingJobs() const { return int(m_tokens.size()); }
    // The model the last successful load produced (a GUI-side copy of its info).
    const std::optional<ModelInfo>& model() const { return m_model; }

Q_SIGNALS:
    void jobStarted(baton::engine::JobId job);
    // Load, evaluate and topic fitting: the fraction done (0..1) and a short message.
    void jobProgress(baton::engine::JobId job, double fraction, QString message);
    void modelLoaded(baton::engine::JobId job, baton::engine::ModelInfo info);
    void generationProgress(baton::engine::JobId job, baton::engine::GenerationProgress progress);
    void generationChunk(baton::engine::JobId job, baton::engine::StateChunk chunk);
    void generationDone(baton::engine::JobId job, baton::engine::GenerationDone done);
    void evaluationRow(baton::engine::JobId job, baton::engine::ScoreResult row, bool withState);
    // With keepPerToken: after each evaluationRow, the same setting's per-token losses.
    void tokenLosses(baton::engine::JobId job, baton::engine::TokenLosses losses);
    void trainingEvent(baton::engine::JobId job, baton::engine::TrainEvent event);
    void topicsFitted(baton::engine::JobId job, QString path, int topics, int vocabularySize);
    void topicsInspected(baton::engine::JobId job, baton::engine::TopicsInspection inspection);
    void probed(baton::engine::JobId job, baton::engine::ProbeResult result);
    // Always the last signal of a job. ok = false carries the error (Cancelled for a
    // cancelled load, evaluation, training or fit; a stopped generation is ok).
    void jobFinished(baton::engine::JobId job, bool ok, baton::engine::Error error);

private:
    void connectWorker();
    JobId enqueue(const std::function<void(EngineWorker&, JobId, const CancelToken&)>& run);

    QThread m_thread;
    EngineWorker* m_worker = nullptr; // lives in m_thread
    JobId m_next = 1;
    QHash<JobId, CancelToken> m_tokens;
    std::optional<ModelInfo> m_model;
};

} // namespace baton::engine

Q_DECLARE_METATYPE(baton::engine::ModelInfo)
Q_DECLARE_METATYPE(baton::engine::GenerationProgress)
Q_DECLARE_METATYPE(baton::engine::StateChunk)
Q_DECLARE_METATYPE(baton::engine::GenerationDone)
Q_DECLARE_METATYPE(baton::engine::ScoreResult)
Q_DECLARE_METATYPE(baton::engine::TokenLosses)
Q_DECLARE_METATYPE(baton::engine::TrainEvent)
Q_DECLARE_METATYPE(baton::engine::TopicsInspection)
Q_DECLARE_METATYPE(baton::engine::ProbeResult)
Q_DECLARE_METATYPE(baton::engine::Error)
