#include "baton/engine/probe.h"

#include "baton/engine/model.h"
#include "baton/engine/sampling.h"
#include "model/model_impl.h"
#include "probe/episodes.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace baton::engine {

double ProbeCell::accuracyStdError() const {
    if (episodes < 2)
        return 0.0;
    const double p = accuracy();
    return std::sqrt(p * (1 - p) / double(episodes));
}

namespace {

// One episode, tokenized and placed: the stream runs from the start of window 0 to the
// end of the question; the question's window is number distance + 1.
struct ProbeEpisode {
    std::vector<int32_t> stream;
    std::vector<std::vector<int32_t>> alternatives;
    int answer = 0;
};

Result<std::vector<ProbeEpisode>> buildEpisodes(const Tokenizer& tokenizer,
                                                const std::vector<std::vector<int32_t>>& books,
                                                const std::vector<bool>& sentenceEnd,
                                                const WindowSettings& w, int distance, int count,
                                                Rng& rng) {
    const int64_t T = w.window, s = T - w.overlap;
    std::vector<ProbeEpisode> out;
    for (int i = 0; i < count; ++i) {
        bool placed = false;
        for (int attempt = 0; attempt < 50 && !placed; ++attempt) {
            const Episode e = makeEpisode(EpisodeSet::Probe, rng);
            ProbeEpisode p;
            const auto fact = tokenizer.encode(e.fact);
            const auto question = tokenizer.encode(e.question);
            int64_t room = 0;
            for (const auto& a : e.alternatives) {
                p.alternatives.push_back(tokenizer.encode(a));
                room = std::max<int64_t>(room, int64_t(p.alternatives.back().size()));
            }
            p.answer = e.answer;
            // Book text for windows 0 .. distance + 1, with room for the insertions.
            const int64_t need = s * (distance + 1) + T;
            std::vector<size_t> usable;
            for (size_t b = 0; b < books.size(); ++b)
                if (int64_t(books[b].size()) >= need)
                    usable.push_back(b);
            if (usable.empty())
                return makeError(ErrorCode::InvalidArgument,
                                 "the probe's books are too short: an episode at distance " +
                                     std::to_string(distance) + " needs " + std::to_string(need) +
                                     " tokens of one book");
            const auto& book = books[usable[rng.next() % usable.size()]];
            const int64_t start = int64_t(rng.next() % uint64_t(book.size() - need + 1));
            p.stream.assign(book.begin() + start, book.begin() + start + need);
            PlacedEpisode where;
            placed = placeEpisode(p.stream, fact, question, room, 1, distance, w, sentenceEnd, true,
                                  rng, where);
            if (placed)
                out.push_back(std::move(p));
        }
        if (!placed)
            return makeError(ErrorCode::InvalidArgument,
                             "a window of " + std::to_string(T) + " tokens (overlap " +
                                 std::to_string(w.overlap) +
                                 ") is too small to hold a probe episode's fact and question");
    }
    return out;
}

// Rows of the final forward pass that fit in about 256 MB of attention scores.
int64_t rowBudget(const ModelConfig& c, int64_t length) {
    const double bytes = double(c.nHead) * double(length) * double(length + 2) * 4.0;
    return std::max<int64_t>(1, int64_t(double(1 << 28) / bytes));
}

class ProbeRunner {
public:
    ProbeRunner(Model::Impl& m, const WindowSettings& w)
        : m(m)
        , w(w) {}

    // The state entering the question window of each episode (true recurrence).
    std::vector<torch::Tensor> questionStates(const std::vector<ProbeEpisode>& episodes,
                                              int distance) {
        const int64_t T = w.window, s = T - w.overlap;
        std::vector<torch::Tensor> out(episodes.size());
        const int64_t batch = rowBudget(m.info.config, T);
        for (size_t first = 0; first < episodes.size(); first += size_t(batch)) {
            const size_t last = std::min(episodes.size(), first + size_t(batch));
            torch::Tensor state;
            for (int n = 0; n <= distance; ++n) {
                std::vector<int64_t> ids;
                for (size_t e = first; e < last; ++e)
                    ids.insert(ids.end(), episodes[e].stream.begin() + n * s,
                               episodes[e].stream.begin() + n * s + T);
                auto input =
                    torch::tensor(ids, torch::kLong).view({int64_t(last - first), T}).to(m.device);
                const auto o = m.net->forward(input, m.windowArgs(state, 0, T, T));
                state = m.nextState(o, state, T);
            }
            for (size_t e = first; e < last; ++e)
                out[e] = state[int64_t(e - first)];
        }
        return out;
    }

    // Log-probability of every alternative of one episode after its question, with
    // `state` ([S, k] or undefined) entering the question window.
    std::vector<double> alternativeLogProbs(const ProbeEpisode& e, int distance,
                                            const torch::Tensor& state) {
        const int64_t s = w.window - w.overlap, start = s * (distance + 1);
        const int64_t prefix = int64_t(e.stream.size()) - start;
        int64_t longest = 0;
        for (const auto& a : e.alternatives)
            longest = std::max<int64_t>(longest, int64_t(a.size()));
        const int64_t length = prefix + longest;
        const int64_t K = int64_t(e.alternatives.size());
        std::vector<int64_t> ids;
        for (const auto& a : e.alternatives) {
            ids.insert(ids.end(), e.stream.begin() + start, e.stream.end());
            ids.insert(ids.end(), a.begin(), a.end());
            ids.insert(ids.end(), size_t(longest) - a.size(), 0); // padding after: never read
        }
        auto input = torch::tensor(ids, torch::kLong).view({K, length}).to(m.device);
        torch::Tensor states;
        if (state.defined())
            states = state.unsqueeze(0).expand({K, state.size(0), state.size(1)}).contiguous();
        const auto out = m.net->forward(input, m.windowArgs(states, 0, length, w.window));
        // The positions that predict the alternatives' tokens.
        auto hidden = out.hidden.narrow(1, prefix - 1, longest);
        auto logProbs = torch::log_softmax(m.net->logits(hidden).to(torch::kFloat32), -1)
                            .to(torch::kCPU)
                            .contiguous();
        auto a = logProbs.accessor<float, 3>();
        std::vector<double> sums;
        for (int64_t k = 0; k < K; ++k) {
            double sum = 0;
            const auto& alt = e.alternatives[size_t(k)];
            for (size_t j = 0; j < alt.size(); ++j)
                sum += a[k][int64_t(j)][alt[j]];
            sums.push_back(sum);
        }
        return sums;
    }

private:
    Model::Impl& m;
    WindowSettings w;
};

std::vector<torch::Tensor> replacedStates(StateSource source,
                                          const std::vector<torch::Tensor>& truth, Rng& rng) {
    const size_t n = truth.size();
    std::vector<torch::Tensor> out(n);
    if (source == StateSource::Off || n == 0)
        return out;
    if (source == StateSource::On)
        return truth;
    if (source == StateSource::Mean) {
        auto sum = torch::zeros_like(truth[0], torch::kFloat32);
        for (const auto& t : truth)
            sum += t.to(torch::kFloat32);
        const auto mean = (sum / double(n)).to(truth[0].dtype());
        std::fill(out.begin(), out.end(), mean);
        return out;
    }
    std::vector<size_t> from(n);
    if (source == StateSource::Far) {
        for (size_t i = 0; i < n; ++i)
            from[i] = (i + n / 2) % n;
    } else {
        std::iota(from.begin(), from.end(), size_t(0));
        for (size_t i = n; i > 1; --i) // Sattolo: no episode keeps its own state
            std::swap(from[i - 1], from[rng.next() % (i - 1)]);
    }
    for (size_t i = 0; i < n; ++i)
        out[i] = truth[from[i]];
    return out;
}

} // namespace

Result<ProbeResult> runProbe(const Model& model, const std::vector<std::string>& texts,
                             const ProbeOptions& options) {
    Model::Impl& m = ModelAccess::of(model);
    if (!m.tokenizer)
        return makeError(ErrorCode::InvalidArgument, "the model has no tokenizer");
    const WindowSettings w = resolveWindows(m.info, options.windows);
    if (auto r = validateWindows(w, m.info.config.nPositions); !r)
        return r.error();
    if (options.episodes < 1 || options.episodes > 100000)
        return makeError(ErrorCode::InvalidArgument, "episodes must be in [1, 100000]");
    if (options.distances.empty())
        return makeError(ErrorCode::InvalidArgument, "no distances to probe");
    for (int d : options.distances)
        if (d < 0 || d > 64)
            return makeError(ErrorCode::InvalidArgument,
                             "distance " + std::to_string(d) + " must be in [0, 64]");
    std::vector<StateSource> states = options.states;
    if (!m.recurrent() || states.empty())
        states = {m.recurrent() ? StateSource::On : StateSource::Off};

    std::vector<std::vector<int32_t>> books;
    for (const auto& t : texts)
        books.push_back(m.tokenizer->encode(t));
    const auto sentenceEnd = sentenceEndTokens(*m.tokenizer);

    ProbeResult result;
    result.windows = w;
    result.recurrent = m.recurrent();
    result.chance = 1.0 / kEpisodeAlternatives;
    const int64_t total = int64_t(options.distances.size()) * options.episodes;
    int64_t done = 0;
    Rng rng(options.seed);
    try {
        torch::NoGradGuard noGrad;
        ProbeRunner runner(m, w);
        for (int d : options.distances) {
            auto episodes =
                buildEpisodes(*m.tokenizer, books, sentenceEnd, w, d, options.episodes, rng);
            if (!episodes)
                return episodes.error();
            std::vector<torch::Tensor> truth(episodes->size());
            if (m.recurrent())
                truth = runner.questionStates(*episodes, d);
            std::vector<ProbeCell> cells;
            std::vector<std::vector<torch::Tensor>> given;
            for (StateSource source : states) {
                ProbeCell c;
                c.distance = d;
                c.state = source;
                cells.push_back(c);
                Rng shuffle(options.seed * 7919 + uint64_t(d));
                given.push_back(replacedStates(source, truth, shuffle));
            }
            for (size_t i = 0; i < episodes->size(); ++i) {
                if (options.cancel.cancelled())
                    return makeError(ErrorCode::Cancelled, "the probe was cancelled");
                const ProbeEpisode& e = (*episodes)[i];
                for (size_t k = 0; k < states.size(); ++k) {
                    const auto lp = runner.alternativeLogProbs(e, d, given[k][i]);
                    const size_t best = size_t(std::max_element(lp.begin(), lp.end()) - lp.begin());
                    const double top = lp[best];
                    double z = 0;
                    for (double v : lp)
                        z += std::exp(v - top);
                    ProbeCell& c = cells[k];
                    c.episodes += 1;
                    c.correct += best == size_t(e.answer) ? 1 : 0;
                    c.meanLogProb += lp[size_t(e.answer)];
                    c.meanShare += std::exp(lp[size_t(e.answer)] - top) / z;
                }
                ++done;
                if (options.progress && !options.progress(done, total))
                    return makeError(ErrorCode::Cancelled, "the probe was cancelled");
            }
            for (auto& c : cells) {
                c.meanLogProb /= std::max(1, c.episodes);
                c.meanShare /= std::max(1, c.episodes);
                result.cells.push_back(c);
            }
        }
    } catch (const c10::Error& e) {
        return makeError(ErrorCode::Internal,
                         std::string("LibTorch: ") + e.what_without_backtrace());
    }
    return result;
}

} // namespace baton::engine
