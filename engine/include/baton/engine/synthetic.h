// The synthetic memory task: can a recurrent state carry a fact at all?
//
// The memory probe (probe.h) asks about facts in book text, and baton-mini cannot copy
// a name from its own window, so it cannot say whether the state could carry one. This
// task can: a model trained on it from scratch copies a fact inside its window (the
// control, d = 0), and the question is whether a recurrent design carries the fact to
// a later window (d >= 1), where a baseline is at chance.
//
// The task (every token id is the task's own; there is no tokenizer):
//  - A sequence is `windows` windows of T tokens, run disjointly (o = 0).
//  - Each window holds `factsPerWindow` facts "SET k v" and the questions "ASK k v"
//    that fall in it, at random places, in filler. k is a key (a closed set of `keys`),
//    v a value (`values`); a key is stated at most once per sequence, so every question
//    has one right answer. Every fact is asked about later in its own window (d = 0:
//    the control, which gives training as many copying answers as memory ones) and
//    once more d windows later, d drawn uniformly from the positive `distances` (a
//    fact whose window n + d lies past the sequence is not asked about again). With
//    askTwice false, a fact is asked about once only, at d drawn from all `distances`.
//    With recallMarker (the default), a question about a fact of an earlier window reads
//    "RECALL k v" instead of "ASK k v": the model is told the fact is not in its window
//    (not where it is), so a baseline needs no test of absence to learn to copy (without
//    the marker, that test held 2-layer models at about 0.84 at d = 0; models README).
//    No question can be answered from another question of its own window.
//    Two items of a window are at least `gap` filler tokens apart (0 lets them touch).
//  - Filler: words of a first-order Markov grammar over `fillerWords` words, each with
//    `fillerSuccessors` successors drawn once from `grammarSeed`.
//  - The score: at the position of the question's key, the model's likeliest value
//    among all `values` values must be v (chance 1 / values).
// Ids: 0 start (unused), 1 SET, 2 ASK, 3 RECALL (with recallMarker), then the keys, the
// values, the filler words.
#pragma once

#include "baton/engine/cancel.h"
#include "baton/engine/error.h"
#include "baton/engine/model_info.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace baton::engine {

struct SyntheticTask {
    int window = 64; // T
    int keys = 64;
    int values = 16;
    int fillerWords = 32;
    int fillerSuccessors = 3;
    int factsPerWindow = 2;
    std::vector<int> distances{0, 1, 2, 4, 8};
    bool askTwice = true;
    bool recallMarker = true;
    // A fact's later question takes its distance from the positive distances that land
    // inside the sequence (none: asked in its own window only), so that short sequences
    // (a curriculum's first stages) ask as many memory questions as long ones. False:
    // from all of them, a question past the sequence's end not asked.
    bool fitDistances = false;
    int gap = 2; // at least this many filler tokens between two items of a window
    uint64_t grammarSeed = 41;

    int maxDistance() const;
};

struct SyntheticVocab {
    int set = 1, ask = 2;
    int recall = -1; // 3 with the task's recallMarker, else none (questions all read ASK)
    int firstKey = 3, firstValue = 0, firstFiller = 0;
    int size = 0; // ids in use
};
SyntheticVocab syntheticVocab(const SyntheticTask& task);

// InvalidArgument when the task cannot be built with sequences of `windows` windows
// (too many items for a window, too few keys for the facts, ...).
Result<void> validateSyntheticTask(const SyntheticTask& task, int windows);

struct SyntheticQuestion {
    int64_t answerAt =
        0;            // index of the answer token v in the sequence (predicted from answerAt - 1)
    int distance = 0; // windows between the fact and the question
    int answer = 0;   // the value's index in [0, values)
};

struct SyntheticSequence {
    std::vector<int32_t> tokens; // windows * T
    std::vector<SyntheticQuestion> questions;
};

// One sequence of `windows` windows, fully determined by the task and `seed`.
SyntheticSequence makeSyntheticSequence(const SyntheticTask& task, int windows, uint64_t seed);

// The task's definition as JSON text, and its identity (16 hex digits over that text):
// a synthetic model's baton.json names it where a text model names its tokenizer.
std::string syntheticTaskJson(const SyntheticTask& task);
std::string syntheticTaskIdentity(const SyntheticTask& task);

// A model trained on the task, from scratch, as a baseline or with a recurrence module.
struct SyntheticRunConfig {
    std::string outDir; // the run's folder; a run found there resumes (same settings)
    SyntheticTask task;
    int layers = 4, heads = 4, embd = 128;
    std::optional<RecurrenceConfig> recurrence; // none: the baseline
    std::string design;                         // a name for the reports ("baseline", ...)
    int bpttWindows = 10; // W: windows per training sequence (gradients flow through all)
    // A curriculum over the windows per training sequence (empty: W throughout). Stage s
    // trains on sequences of curriculum[s] windows (rising; the last one is W); it moves
    // on when the accuracy (state on) at the largest distance its sequences ask about
    // reaches stageAccuracy on stageCheckSequences fresh sequences, checked every
    // stageCheckEvery steps, or after stageSteps steps (0: no budget). The last stage
    // runs to the end of the steps.
    std::vector<int> curriculum;
    double stageAccuracy = 0.9;
    int64_t stageSteps = 0;
    int stageCheckEvery = 100;
    int stageCheckSequences = 200;
    // Mixed lengths: this share of each batch's sequences (rounded down) take the length
    // of an earlier stage, drawn uniformly (none in the first stage).
    double mixShorter = 0;
    int batch = 16; // sequences per step
    int64_t steps = 1500;
    double lr = 1e-3;
    int warmupSteps = 100;
    double minLrRatio = 0.1; // cosine decay to lr * minLrRatio
    double weightDecay = 0.01;
    double clipNorm = 1.0;
    bool lossOnAllTokens = false; // false: only the answers are scored in training
    uint64_t seed = 1;            // initialisation and training data
    int64_t checkpointEvery = 100;
    // Where training and evaluation run: "cpu", "cuda" or "cuda:N" (a CUDA LibTorch), in
    // float32 either way. Not part of the run's settings: a run may resume elsewhere.
    std::string device = "cpu";
    // Evaluation: sequences of evalWindows windows from evalSeed (never a training seed).
    int evalSequences = 500;
    int evalWindows = 0; // 0: maxDistance + 2
    uint64_t evalSeed = 0x5eed0041;
};

Result<void> validateSyntheticRunConfig(const SyntheticRunConfig& config);

// A curriculum stage as training reached it.
struct SyntheticStage {
    int windows = 0;
    int64_t startStep = 0; // the step after which it began (0: the start)
    double accuracy = -1;  // at the check that ended it (-1: not ended by a check)
    int distance = 0;      // the distance that check measured
};

// Accuracy at one distance.
struct SyntheticCell {
    int distance = 0;
    std::string state = "none"; // "on", "off" (recurrent) or "none" (baseline)
    int64_t questions = 0, correct = 0;
    double meanProbability = 0; // of the right value among the values
    double accuracy() const { return questions ? double(correct) / double(questions) : 0.0; }
    double accuracyStdError() const;
};

struct SyntheticEvaluation {
    double chance = 0; // 1 / values
    int sequences = 0, windows = 0;
    uint64_t seed = 0;
    double tokensPerSecond = 0;       // of the evaluation's forward passes (state on)
    std::vector<SyntheticCell> cells; // distance-major, then state (on, off)
};

// What a run reports; written as OUT/synthetic.json and OUT/model/synthetic.json.
struct SyntheticReport {
    SyntheticRunConfig config;
    std::string modelDir;
    int64_t parameters = 0;       // the network's
    int64_t moduleParameters = 0; // the recurrence module's (0 for the baseline)
    int64_t steps = 0, trainTokens = 0;
    double trainSeconds = 0;         // wall time of the training steps (this and earlier sessions)
    double trainTokensPerSecond = 0; // tokens / trainSeconds
    double finalLoss = 0; // mean training loss of the last 50 steps (nats per scored token)
    std::vector<SyntheticStage> stages; // with a curriculum: the stages reached, in order
    SyntheticEvaluation evaluation;
};

struct SyntheticEvent {
    enum class Kind { Info, Step, Checkpoint, Evaluated };
    Kind kind = Kind::Info;
    std::string message;
    int64_t step = 0, totalSteps = 0;
    double loss = 0; // nats per scored token
    double tokensPerSecond = 0;
};

// Trains (or resumes, or finds finished) the run in config.outDir, evaluates it and
// writes the report. onEvent may return false to stop after the current step (a
// checkpoint is written; running it again resumes).
Result<SyntheticReport> runSynthetic(const SyntheticRunConfig& config,
                                     const std::function<bool(const SyntheticEvent&)>& onEvent = {},
                                     const CancelToken& cancel = {});

// Evaluates a synthetic model folder (OUT/model of a run) on `sequences` fresh sequences
// of `windows` windows (0: the task's maxDistance + 2) from `seed`; a recurrent model
// with its state on and off.
Result<SyntheticEvaluation> evaluateSyntheticModel(const std::string& modelDir, int sequences,
                                                   int windows, uint64_t seed,
                                                   const std::string& device = "cpu");

// Torch-free: the report in a folder (a run's folder or its model folder) when it holds
// a synthetic.json, nullopt when it holds none; an error for a damaged one. The app's
// "what the state carries" view reads the curve from here (evaluation.cells).
Result<std::optional<SyntheticReport>> readSyntheticReport(const std::string& folder);
std::string syntheticReportJson(const SyntheticReport& report);
// The evaluation alone, as the report's "evaluation" object.
std::string syntheticEvaluationJson(const SyntheticEvaluation& evaluation);

} // namespace baton::engine
