// Training: fine-tuning baseline and recurrent models with backpropagation through
// windows (../shared/docs/method.md section 5), and pretraining from scratch.
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

enum class TrainMode { Baseline, Recurrent };
enum class TrainScope { All, Recurrence, RecurrenceAndTopBlocks };
enum class LrSchedule { Constant, Cosine };
enum class OptimizerKind { Adam, AdamW };

// Data-parallel training: the run as one of N processes (ranks) on one or several
// machines, through LibTorch's distributed engine (c10d: Gloo for CPU tensors, NCCL for
// CUDA ones). Every rank computes the gradient of its share of each batch; the shares'
// gradients are summed, so every rank takes the same optimizer step. Rank 0 alone
// writes the run folder (run.json, checkpoints, the model), which every rank reads:
// on several machines it must be on a shared filesystem. Not part of run.json: a run
// resumes with any number of ranks.
struct DistributedConfig {
    int rank = 0;
    int worldSize = 1; // 1: one process, nothing is communicated
    int localRank = 0; // the rank's index on its machine: --device cuda means cuda:localRank
    std::string masterAddr = "127.0.0.1"; // rank 0's host (it serves the rendezvous store)
    int masterPort = 29500;
    // A rank that stays silent this long (at the rendezvous or in any exchange) stops
    // the others with an error naming it; rank 0's setup before the first step (the
    // corpus's tokenization, a tokenizer trained for --scratch) may take longer.
    int timeoutSeconds = 300;
    // Set by a launcher's variables or --rank / --world-size: the run goes through the
    // process group even with one rank (as torchrun's single process does).
    bool launched = false;
    bool active() const { return launched || worldSize > 1; }
};

// Reads a launcher's variables through `getenv`: torchrun's (RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or Slurm's (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID, with MASTER_ADDR and MASTER_PORT set by the job script), marked
// `launched`. Returns a one-process configuration when neither is set; an error for
// values out of range.
Result<DistributedConfig>
distributedFromEnvironment(const std::function<const char*(const char*)>& getenv);
// The backends this build has ("gloo", "gloo, nccl"), or "" when it was built
// without the distributed engine (worldSize > 1 is then refused).
std::string distributedBackends();

// The longest stretch of validation or held-out text a training corpus may hold.
constexpr int64_t kMostSharedTokens = 256;

struct TrainConfig {
    // Where the run lives: checkpoints, the token cache, the log, the outputs.
    std::string outDir;
    bool resume = false; // continue the run in outDir from its latest checkpoint

    // Start from a checkpoint folder, or from scratch.
    std::string baseModel;
    bool scratch = false;
    ModelConfig scratchModel;             // n_layer, n_head, n_embd, n_positions, vocab_size
    std::string scratchTokenizer = "bpe"; // SentencePiece "bpe" or "unigram"
    // The text the scratch tokenizer learns from: the whole corpus when it is smaller,
    // else whole documents spread evenly over it up to this many bytes.
    int64_t tokenizerSampleBytes = int64_t(256) << 20;
    // A model folder whose tokenizer the scratch model uses instead of learning one (its
    // size is then the vocabulary's); empty: learn one.
    std::string scratchTokenizerFrom;

    TrainMode mode = TrainMode::Recurrent;
    RecurrenceConfig recurrence; // FFN shape, insertion block, remedies (window/overlap below)
    // With recurrence.slotBias: the slot's per-head logit bias starts here. A negative
    // value starts near a no-op (the slot takes little attention) instead of as an
    // attention sink (method.md section 5, "The state can die").
    double slotBiasInit = 0;

    std::vector<std::string> corpus; // files or folders (.txt, .md)
    // Documents given as text (name, text) instead of files, for training and for
    // validation: written into the run's folder (OUT/documents/train, .../validation)
    // when the run starts and read from there like corpus and validation files, so a
    // resumed run finds them.
    std::vector<std::pair<std::string, std::string>> corpusTexts, validationTexts;
    bool unwrap = true; // join hard-wrapped lines and drop verse numbers (unwrapText)
    std::vector<std::string> validation; // files or folders; empty = hold out documents
    double validationFraction = 0.1;     // share of documents held out when no --val
    // Documents of the corpus taken out of training for validation, by name: a shard's
    // "library-07.tar.xz/cbm/Title.txt" (or its end after a "/"), or a file's path.
    // With them, validationFraction is not used.
    std::vector<std::string> validationWorks;
    // Files or folders never to be trained on (a test book): like the validation text,
    // checked against the training stream before the first step; a stretch of
    // kMostSharedTokens or more tokens of either in the training documents stops the run.
    std::vector<std::string> heldOut;

    // Memory episodes (probe.h) mixed into each training sequence: facts stated in one
    // window and asked for 0-4 windows later, with the training set's templates and names.
    int episodesPerSequence = 0;

    int window = 128;     // T
    int overlap = 0;      // o
    int bpttWindows = 20; // W windows per sequence
    // A curriculum over the windows per sequence (empty: W throughout): from step
    // s * stageSteps + 1 on, sequences of curriculum[s] windows (rising; the last one is
    // W, and runs to the end); mixShorter of each batch take an earlier stage's length
    // (training/curriculum.h). The sequences are W windows long, cut short.
    std::vector<int> curriculum;
    int64_t stageSteps = 0;
    double mixShorter = 0;
    int batchSize = 8;  // sequences per micro-batch
    int accumulate = 1; // micro-batches per optimizer step
    int64_t steps = 0;  // optimizer steps; 0 = derive from epochs
    double epochs = 1;

    OptimizerKind optimizer = OptimizerKind::AdamW;
    double lr = 1e-4;
    double moduleLrScale = 1.0; // the recurrence module's learning rate relative to lr
    double minLrRatio = 0.1;    // cosine decays to lr * minLrRatio
    int warmupSteps = 100;
    LrSchedule schedule = LrSchedule::Constant;
    double weightDecay = 0.01;
    double beta1 = 0.9, beta2 = 0.999, adamEps = 1e-8;
    double clipNorm = 1.0; // 0 = no clipping
    uint64_t seed = 1;

    TrainScope scope = TrainScope::All;
    // A recurrence adapter: the base (a baseline model) stays frozen (scope must be
    // Recurrence) and the output is OUT/adapter, the module alone with the base's
    // identity (LoadOptions::adapter loads it), instead of a whole model folder.
    bool adapter = false;
    int topBlocks = 0; // with RecurrenceAndTopBlocks

    int64_t validateEveryTokens = 200000; // 0 = only at the end
    int64_t validationMaxTokens = 50000;  // tokens of validation text per validation
    // Where those tokens come from: the start of every validation document, in equal
    // shares (a document shorter than its share gives the rest to the others); false:
    // the first documents' tokens in order, as runs made before this field validated.
    bool validationSpread = true;
    int patience = 0; // validations without improvement before stopping; 0 = never
    int64_t checkpointEverySteps = 200;
    int keepCheckpoints = 2;
    std::string saveDtype = "f32"; // storage of the final model: f32, f16 or bf16
    // Where the run computes: "cpu", or "cuda" / "cuda:N" with a CUDA build of LibTorch.
    std::string device = "cpu";
    // "auto": bf16 autocast on CUDA (weights, optimizer and the loss stay float32),
    // float32 on the CPU; "f32"; "bf16" (CUDA only).
    std::string precision = "auto";
    DistributedConfig distributed; // one process by default
};

Result<void> validateTrainConfig(const TrainConfig& config);

// A list of works as TrainConfig::validationWorks takes them, from a file: one name a
// line, blank lines and lines starting with # skipped, spaces around a name trimmed
// (tools/library/validation-works.txt). FileNotFound, or InvalidArgument for a list
// that names no work.
Result<std::vector<std::string>> readWorkList(const std::string& path);

struct TrainEvent {
    enum class Kind { Info, Step, Validation, Checkpoint, Done };
    Kind kind = Kind::Info;
    std::string message;
    int64_t step = 0, totalSteps = 0;
    int64_t tokens = 0; // scored training tokens so far
    double tokensPerSecond = 0;
    double loss = 0; // mean NLL per scored token of this step (nats)
    double lr = 0;
    double gradNorm = 0, moduleGradNorm = 0; // before clipping
    double etaSeconds = 0;
    // Several ranks: this step's exchange (gradients and statistics), its wall time and
    // the bytes each rank sent (a ring all-reduce's 2 (N-1)/N of the data).
    double commSeconds = 0, commBytes = 0;
    std::vector<double>
        slotAttention; // mean attention on the state slot: positions 0-15, 16-63, rest
    // Validation events
    double valLoss = 0, valPerplexity = 0;
    double valLossNoState = 0;       // recurrent models: the same weights with the state off
    std::vector<double> valBandLoss; // mean NLL by position band 0-15, 16-63, rest
    std::vector<double> valBandLossNoState;
    bool improved = false;
    std::string checkpoint; // Checkpoint and Done events: the folder
};

struct TrainResult {
    std::string modelDir; // the final model (Hugging Face layout + recurrence files), or
                          // with TrainConfig::adapter the adapter folder
    std::string bestDir;  // the best-validation model, if validation ran
    int64_t steps = 0;
    int64_t tokens = 0;
    double bestValLoss = 0;
    bool cancelled = false;
    bool stoppedEarly = false;
};

// Runs (or resumes) a training run. onEvent may return false to cancel, like the
// token: cancelling stops after the current step and writes a checkpoint.
Result<TrainResult> train(const TrainConfig& config,
                          const std::function<bool(const TrainEvent&)>& onEvent = {},
                          const CancelToken& cancel = {});

} // namespace baton::engine
