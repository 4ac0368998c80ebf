// GPT-2-small-shaped model (random weights built in memory): time to score and to
// prefill a 300-token window, decode speed with the KV cache, peak memory; the
// machine's read bandwidth with 1 and 2 threads and the decode bound it sets (the
// weights are read once per token), each decode figure beside its share of it.
//   bench_gpt2 [--layers 12 --embd 768 --heads 12 --vocab 50257 --window 300
//               --decode-tokens 128 --repeats 5 --weights f32|f16|bf16|int8 --threads N
//               --busy N --fixed-threads 0|1 --isa avx512|avx2|scalar]
// --busy N runs N busy-looping processes during the measurements (another program
// using cores); --fixed-threads 1 switches off the engine's thread budget
// (util/core_budget.h), the behaviour before it, for comparison.
#include "bench_util.h"

#include "inference/weight_matrix.h"
#include "model/model_impl.h"
#include "util/core_budget.h"

#include <baton/engine/generator.h>
#include <baton/engine/scoring.h>

#include <cstdio>
#include <random>

using namespace baton;
using namespace baton::bench;

namespace {
// Bytes of weights one decode step reads: every matrix as it is held (the LM head is
// the token table), the biases and layer norms in float32, one position row.
double decodeBytesPerToken(const engine::Model& model) {
    const auto& impl = engine::ModelAccess::of(model);
    if (!impl.decoder)
        return double(model.info().parameterCount) * 4.0;
    const auto& w = impl.decoder->weights();
    double bytes = double(w.wte.bytes()) + 4.0 * (w.nEmbd + 2.0 * w.nEmbd);
    for (const auto& l : w.layers) {
        bytes += double(l.attnW.bytes() + l.projW.bytes() + l.fcW.bytes() + l.fcProjW.bytes());
        bytes += 4.0 * (3.0 * w.nEmbd + w.nEmbd + w.nInner + w.nEmbd + 4.0 * w.nEmbd);
    }
    return bytes;
}
} // namespace

int main(int argc, char** argv) {
    engine::initializeRuntime(std::stoi(arg(argc, argv, "threads", "0")));
    const bool fixedThreads = arg(argc, argv, "fixed-threads", "0") == "1";
    engine::cpu::setAdaptiveThreads(!fixedThreads);
    const int busy = std::stoi(arg(argc, argv, "busy", "0"));
    // The decoder's kernels: the best this CPU runs unless a lower path is asked for.
    const std::string isaArg = arg(argc, argv, "isa", "");
    for (auto i : {engine::cpu::Isa::Scalar, engine::cpu::Isa::Avx2, engine::cpu::Isa::Avx512})
        if (isaArg == engine::cpu::isaName(i))
            engine::cpu::setIsa(i);
    // The bounds first, on a quiet machine (before the busy processes start).
    const double bw1 = readBandwidthGBs(1), bw2 = readBandwidthGBs(2);
    report("gpt2", "read_bandwidth_1_thread", bw1, "GB/s");
    report("gpt2", "read_bandwidth_2_threads", bw2, "GB/s");
    engine::ModelConfig c;
    c.nLayer = std::stoi(arg(argc, argv, "layers", "12"));
    c.nEmbd = std::stoi(arg(argc, argv, "embd", "768"));
    c.nHead = std::stoi(arg(argc, argv, "heads", "12"));
    c.vocabSize = std::stoi(arg(argc, argv, "vocab", "50257"));
    c.nPositions = 1024;
    c.nInner = 4 * c.nEmbd;
    const int T = std::stoi(arg(argc, argv, "window", "300"));
    const int decodeTokens = std::stoi(arg(argc, argv, "decode-tokens", "128"));
    const int repeats = std::stoi(arg(argc, argv, "repeats", "5"));
    const auto weights = engine::parseWeightFormat(arg(argc, argv, "weights", "f32"));
    if (!weights) {
        std::fprintf(stderr, "error: --weights takes f32, f16, bf16 or int8\n");
        return 2;
    }
    const std::string tag = std::string("\"weights\": \"") + engine::weightFormatName(*weights) +
                            "\", \"layers\": " + std::to_string(c.nLayer) +
                            ", \"embd\": " + std::to_string(c.nEmbd) +
                            ", \"threads\": " + std::to_string(engine::cpu::threadCap()) +
                            ", \"busy\": " + std::to_string(busy) + ", \"isa\": \"" +
                            engine::cpu::isaName(engine::cpu::isa()) + "\"" +
                            ", \"fixed_threads\": " + (fixedThreads ? "true" : "false");

    engine::LoadOptions options;
    options.weights = *weights;
    auto t0 = Clock::now();
    auto model = engine::createModel(c, nullptr, 1, options);
    if (!model.ok()) {
        std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
        return 1;
    }
    report("gpt2", "build_model_s", secondsSince(t0), "s", tag);
    report("gpt2", "parameters", double((*model)->info().parameterCount), "count", tag);
    report("gpt2", "decode_weight_bytes_per_token", decodeBytesPerToken(**model), "bytes", tag);

    BusyLoad load(busy);
    std::mt19937 rng(7);
    std::vector<int32_t> ids(static_cast<size_t>(T));
    for (auto& id : ids)
        id = static_cast<int32_t>(rng() % 50000);

    // Scoring: log-probabilities of all T-1 predictions of one window.
    std::vector<double> score;
    engine::ScoreOptions so;
    so.windows.window = T;
    so.keepPerToken = false;
    for (int r = 0; r < repeats + 1; ++r) {
        t0 = Clock::now();
        auto s = engine::scoreTokens(**model, ids, so);
        if (!s.ok()) {
            std::fprintf(stderr, "error: %s\n", s.error().message.c_str());
            return 1;
        }
        if (r > 0) // the first run warms up allocators and thread pools
            score.push_back(secondsSince(t0));
    }
    report("gpt2", "score_window_s", median(score), "s",
           tag + ", \"window\": " + std::to_string(T));

    // Prefill: the window into the KV cache, logits for its last position only.
    std::vector<double> prefill;
    for (int r = 0; r < repeats + 1; ++r) {
        auto gen = engine::Generator::create(*model, {c.nPositions, 0});
        t0 = Clock::now();
        if (!(*gen)->append(ids).ok())
            return 1;
        if (r > 0)
            prefill.push_back(secondsSince(t0));
    }
    report("gpt2", "prefill_window_s", median(prefill), "s",
           tag + ", \"window\": " + std::to_string(T));

    // Decode: one token per step with the KV cache, after a 16-token prompt.
    auto gen = engine::Generator::create(*model, {c.nPositions, 0});
    if (!(*gen)->append(std::vector<int32_t>(ids.begin(), ids.begin() + 16)).ok())
        return 1;
    engine::SamplingOptions greedy;
    greedy.temperature = 0;
    greedy.maxTokens = decodeTokens;
    greedy.stopAtEndOfText = false;
    std::vector<double> steps;
    auto last = Clock::now();
    auto r = (*gen)->generate(greedy, [&](const engine::GenerationEvent& e) {
        const auto now = Clock::now();
        if (e.token >= 0 && e.generated > 1)
            steps.push_back(std::chrono::duration<double>(now - last).count());
        last = now;
        return true;
    });
    if (!r.ok())
        return 1;
    const double ms = 1000.0 * median(steps);
    report("gpt2", "decode_ms_per_token", ms, "ms", tag);
    report("gpt2", "decode_tokens_per_s", 1000.0 / ms, "tokens/s", tag);
    report("gpt2", "decode_p90_ms_per_token", 1000.0 * percentile(steps, 0.9), "ms", tag);
    // The bound: every weight read once per token, in the format it is held in, at the
    // bandwidth of the threads the machine could give.
    const double bytes = decodeBytesPerToken(**model);
    const double bw = engine::cpu::threadCap() >= 2 ? bw2 : bw1;
    report("gpt2", "decode_bound_tokens_per_s", bw * 1e9 / bytes, "tokens/s",
           tag + ", \"bandwidth_gbs\": " + std::to_string(bw));
    report("gpt2", "decode_share_of_bound", (1000.0 / ms) / (bw * 1e9 / bytes), "ratio", tag);
    report("gpt2", "peak_rss_mb", peakRssMb(), "MB", tag);
    return 0;
}
