// The synthetic memory task's evaluation (synthetic.h: evaluateSyntheticModel, and
// the accuracy after training and at a curriculum's stage checks).
#include "probe/synthetic_eval.h"

#include "model/checkpoint.h"
#include "util/hash.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace baton::engine {

namespace {

using Clock = std::chrono::steady_clock;

} // namespace

int evalWindowsOf(const SyntheticTask& task, int windows) {
    return windows > 0 ? windows : task.maxDistance() + 2;
}

SyntheticEvaluation evaluateSynthetic(Model::Impl& m, const SyntheticTask& task, int sequences,
                                      int windows, uint64_t seed) {
    torch::NoGradGuard noGrad;
    const SyntheticVocab vocab = syntheticVocab(task);
    const int64_t T = task.window;
    SyntheticEvaluation out;
    out.chance = 1.0 / double(task.values);
    out.sequences = sequences;
    out.windows = windows;
    out.seed = seed;
    std::vector<std::string> states =
        m.recurrent() ? std::vector<std::string>{"on", "off"} : std::vector<std::string>{"none"};
    std::vector<int> distances = task.distances;
    std::sort(distances.begin(), distances.end());
    distances.erase(std::unique(distances.begin(), distances.end()), distances.end());
    for (int d : distances)
        for (const auto& s : states) {
            SyntheticCell cell;
            cell.distance = d;
            cell.state = s;
            out.cells.push_back(cell);
        }
    auto cellOf = [&](int d, size_t state) -> SyntheticCell& {
        const size_t i =
            size_t(std::find(distances.begin(), distances.end(), d) - distances.begin());
        return out.cells[i * states.size() + state];
    };
    std::vector<double> probSums(out.cells.size(), 0.0);
    double seconds = 0;
    int64_t tokens = 0;
    const int64_t batch = 100;
    for (int64_t first = 0; first < sequences; first += batch) {
        const int64_t count = std::min<int64_t>(batch, sequences - first);
        std::vector<SyntheticSequence> seqs;
        for (int64_t i = 0; i < count; ++i)
            seqs.push_back(makeSyntheticSequence(task, windows,
                                                 mixSeeds(seed ^ 0xE7A1ULL, uint64_t(first + i))));
        for (size_t si = 0; si < states.size(); ++si) {
            const bool carry = states[si] == "on";
            const auto t0 = Clock::now();
            torch::Tensor state;
            for (int64_t n = 0; n < windows; ++n) {
                std::vector<int64_t> ids;
                ids.reserve(size_t(count * T));
                for (const auto& s : seqs)
                    ids.insert(ids.end(), s.tokens.begin() + n * T, s.tokens.begin() + (n + 1) * T);
                const auto input = torch::tensor(ids, torch::kLong).view({count, T}).to(m.device);
                const auto o =
                    m.net->forward(input, m.windowArgs(carry ? state : torch::Tensor(), 0, T, T));
                if (carry)
                    state = m.nextState(o, state, T);
                const auto values =
                    torch::log_softmax(m.net->logits(o.hidden)
                                           .narrow(-1, vocab.firstValue, task.values)
                                           .to(torch::kFloat32),
                                       -1)
                        .to(torch::kCPU)
                        .contiguous();
                const auto a = values.accessor<float, 3>();
                for (int64_t i = 0; i < count; ++i)
                    for (const auto& q : seqs[size_t(i)].questions) {
                        const int64_t from = q.answerAt - 1;
                        if (from / T != n)
                            continue;
                        const int64_t p = from % T;
                        int best = 0;
                        for (int v = 1; v < task.values; ++v)
                            if (a[i][p][v] > a[i][p][best])
                                best = v;
                        SyntheticCell& cell = cellOf(q.distance, si);
                        ++cell.questions;
                        cell.correct += best == q.answer ? 1 : 0;
                        probSums[size_t(&cell - out.cells.data())] += std::exp(a[i][p][q.answer]);
                    }
            }
            if (si == 0) {
                seconds += std::chrono::duration<double>(Clock::now() - t0).count();
                tokens += count * windows * T;
            }
        }
    }
    for (size_t i = 0; i < out.cells.size(); ++i)
        if (out.cells[i].questions > 0)
            out.cells[i].meanProbability = probSums[i] / double(out.cells[i].questions);
    out.tokensPerSecond = seconds > 0 ? double(tokens) / seconds : 0.0;
    return out;
}

void setForInference(Model::Impl& m) {
    m.net->eval();
    for (auto& p : m.net->parameters())
        p.set_requires_grad(false);
    if (m.recurrent()) {
        m.recurrence->eval();
        for (auto& p : m.recurrence->parameters())
            p.set_requires_grad(false);
        m.refreshRecurrenceCaches();
    }
}

Result<SyntheticEvaluation> evaluateSyntheticModel(const std::string& modelDir, int sequences,
                                                   int windows, uint64_t seed,
                                                   const std::string& device) {
    auto stored = readSyntheticReport(modelDir);
    if (!stored)
        return stored.error();
    if (!*stored)
        return makeError(ErrorCode::FileNotFound,
                         modelDir + " is not a synthetic task's model (it has no synthetic.json)");
    const SyntheticTask& task = (*stored)->config.task;
    const int w = evalWindowsOf(task, windows);
    if (auto r = validateSyntheticTask(task, w); !r)
        return r.error();
    if (sequences < 1)
        return makeError(ErrorCode::InvalidArgument, "at least one sequence");
    LoadOptions load;
    load.device = device;
    auto model = loadModelWithoutTokenizer(modelDir, syntheticTaskIdentity(task), load);
    if (!model)
        return model.error();
    try {
        return evaluateSynthetic(ModelAccess::of(**model), task, sequences, w, seed);
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    }
}

} // namespace baton::engine
