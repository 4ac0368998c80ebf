// GPT-2-shaped models: time to score and to prefill a 300-token window, decode speed
// with the KV cache, peak memory; the decode bound (the weights are read once per token
// at the read bandwidth measured right before and after the decoding: read_probe.h) and
// the prefill's share of the product peak measured around it likewise. A share above 1
// is refused (exit status 3): it means the bound was measured wrong. Random weights built in
// memory, or a model folder:
//   bench_gpt2 [--shape small|medium|large|xl | --layers 12 --embd 768 --heads 12]
//              [--vocab 50257 --window 300 --decode-tokens 128 --repeats 5
//               --weights f32|f16|bf16|int8|q4 --threads N --busy N --fixed-threads 0|1
//               --isa avx512|avx2|scalar]
//   bench_gpt2 --save-model DIR [--save-dtype f32|f16 --tokenizer DIR] [shape options]
//     writes the random model as a Hugging Face folder (GPT-2's tokenizer) and exits
//   bench_gpt2 --model DIR [--map 0|1] [options]: loads the folder instead: the time to
//     the first token of a fresh process (load, a 16-token prompt, one token handed to
//     the caller, which gets it before the model reads it), then the
//     load time with a warm page cache (median of --repeats loads); --map 0 copies the
//     weights that would otherwise be the mapped file's pages (LoadOptions::mapWeights);
//     --identity-memo DIR remembers the model's content hash in DIR as the app and
//     baton-cli do (rememberModelIdentitiesIn): a second run's loads then skip hashing;
//     --converted-cache DIR keeps converted weights in DIR as they do
//     (keepConvertedWeightsIn; it needs --identity-memo): a second run maps them
// --busy N runs N busy-looping processes during the measurements (another program
// using cores); --fixed-threads 1 switches off the engine's thread budget
// (kernels/core_budget.h), the behaviour before it, for comparison.
#include "bench_util.h"
#include "gpt2_shapes.h"
#include "read_probe.h"

#include "kernels/batched_products.h"
#include "kernels/core_budget.h"
#include "kernels/weight_matrix.h"
#include "model/checkpoint.h"
#include "model/fixed_blocks.h"
#include "model/model_impl.h"

#include <baton/engine/generator.h>
#include <baton/engine/scoring.h>

#include <torch/torch.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

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

// Seconds since this process started (/proc/self/stat's start time, 10 ms resolution).
double secondsSinceProcessStart() {
    std::ifstream in("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2)); // from field 3 on
    std::string f;
    for (int i = 3; i <= 22 && fields >> f; ++i) {
    }
    timespec now{};
    clock_gettime(CLOCK_BOOTTIME, &now);
    return double(now.tv_sec) + 1e-9 * double(now.tv_nsec) -
           std::stod(f) / double(sysconf(_SC_CLK_TCK));
}

// MemAvailable from /proc/meminfo, in bytes.
double availableMemoryBytes() {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    double kb = 0;
    while (in >> key >> kb >> unit)
        if (key == "MemAvailable:")
            return kb * 1024.0;
    return 0;
}

// The machine's matrix-product peak in GFLOP/s for the product steps prefill and
// scoring run on (kernels/batched_products.h): Baton's own products of a weight matrix
// held in a format of those steps (float32; BF16 for bfloat16 pairs; int8 for 8-bit
// quads) on square matrices of 1024 and 2048, and LibTorch's matmul of float32 or
// bfloat16 matrices of those sizes (it has no 8-bit products); the best of three
// products of each after one not counted. Measured right before and right after the
// figure it bounds.
double gemmPeakGflops(engine::cpu::ProductSteps steps) {
    using engine::cpu::ProductSteps;
    double best = 0;
    const auto format = steps == ProductSteps::Float32     ? engine::WeightFormat::F32
                        : steps == ProductSteps::Bf16Pairs ? engine::WeightFormat::BF16
                                                           : engine::WeightFormat::Int8;
    const bool own = engine::cpu::batchedProducts(format);
    const bool library = steps != ProductSteps::Int8Quads;
    const auto dtype = steps == ProductSteps::Bf16Pairs ? torch::kBFloat16 : torch::kFloat32;
    for (const int64_t n : {int64_t(1024), int64_t(2048)}) {
        auto a = torch::randn({n, n}).to(dtype), b = torch::randn({n, n}).to(dtype);
        const auto w = torch::randn({n, n}), x = torch::randn({n, n});
        const auto packed = own && format != engine::WeightFormat::F32
                                ? engine::cpu::PackedMatrix::pack(w.data_ptr<float>(), n, n, format)
                                : engine::cpu::PackedMatrix();
        const auto view = format == engine::WeightFormat::F32
                              ? engine::cpu::PackedMatrix::wrap(w.data_ptr<float>(), n, n)
                              : packed.view();
        for (int r = 0; r < 4; ++r) {
            for (int which = library ? 0 : 1; which < (own ? 2 : 1); ++which) {
                const auto t0 = Clock::now();
                auto c = which == 0 ? torch::mm(a, b) : engine::blocks::packedLinear(x, view, {});
                const double s = secondsSince(t0);
                if (r > 0) // the first warms the library up
                    best = std::max(best, 2.0 * double(n) * double(n) * double(n) / s / 1e9);
            }
        }
    }
    return best;
}

// A share of a bound measured beside it: above 1 no program can be, so the bound's
// probe was wrong; the benchmark then prints the figure as invalid, not as a share, and
// exits with status 3.
// `why` names what else can make it so (a model whose weights fit in the caches).
bool g_boundWrong = false;
void reportShare(const std::string& metric, double share, const std::string& tag,
                 const std::string& why = "") {
    if (share <= 1.0) {
        report("gpt2", metric, share, "ratio", tag);
        return;
    }
    g_boundWrong = true;
    const std::string error = "above 1: the bound measured beside it is too low: its probe is "
                              "wrong" +
                              (why.empty() ? std::string() : ", or " + why);
    std::fprintf(stderr, "error: %s is %.3f, %s; no share is reported\n", metric.c_str(), share,
                 error.c_str());
    report("gpt2", metric + "_invalid", share, "ratio", tag + ", \"error\": \"" + error + "\"");
}

// FLOPs of a prefill of n tokens: every block's matrix products and attention, and the
// LM head for the last position only.

// Loads a folder, then a 16-token prompt and one greedy token (a window of `window`):
// the seconds until the token reaches the caller (from the load, and from the process's
// start), and until generate() returns, when the model has read it (the moment the
// caller got it while tokens were handed out only once read).
struct FirstToken {
    double seconds = -1, fromProcessStart = -1, read = -1;
};
FirstToken timeToFirstToken(const std::string& dir, const engine::LoadOptions& options, int window,
                            std::shared_ptr<engine::Model>& model) {
    const auto t0 = Clock::now();
    auto loaded = engine::Model::load(dir, options);
    if (!loaded.ok()) {
        std::fprintf(stderr, "error: %s\n", loaded.error().message.c_str());
        std::exit(1);
    }
    model = *loaded;
    auto gen =
        engine::Generator::create(model, {std::min(window, model->info().config.nPositions), 0});
    engine::SamplingOptions one;
    one.temperature = 0;
    one.maxTokens = 1;
    one.stopAtEndOfText = false;
    FirstToken t;
    if (!(*gen)->append(std::vector<int32_t>(16, 464)).ok() ||
        !(*gen)
             ->generate(one,
                        [&](const engine::GenerationEvent& e) {
                            if (e.token >= 0 && t.seconds < 0) {
                                t.seconds = secondsSince(t0);
                                t.fromProcessStart = secondsSinceProcessStart();
                            }
                            return true;
                        })
             .ok() ||
        t.seconds < 0)
        std::exit(1);
    t.read = secondsSince(t0);
    return t;
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
    engine::ModelConfig c;
    c.nLayer = std::stoi(arg(argc, argv, "layers", "12"));
    c.nEmbd = std::stoi(arg(argc, argv, "embd", "768"));
    c.nHead = std::stoi(arg(argc, argv, "heads", "12"));
    const std::string shape = arg(argc, argv, "shape", "");
    for (const Shape& sh : kShapes)
        if (shape == sh.name) {
            c.nLayer = sh.layers;
            c.nEmbd = sh.embd;
            c.nHead = sh.heads;
        }
    c.vocabSize = std::stoi(arg(argc, argv, "vocab", "50257"));
    c.nPositions = 1024;
    c.nInner = 4 * c.nEmbd;
    const int window = std::stoi(arg(argc, argv, "window", "300"));
    const int decodeTokens = std::stoi(arg(argc, argv, "decode-tokens", "128"));
    if (decodeTokens < 2) { // a decode step is timed from one token to the next
        std::fprintf(stderr, "error: --decode-tokens takes 2 or more\n");
        return 2;
    }
    const int repeats = std::stoi(arg(argc, argv, "repeats", "5"));
    const auto weights = engine::parseWeightFormat(arg(argc, argv, "weights", "f32"));
    if (!weights) {
        std::fprintf(stderr, "error: --weights takes f32, f16, bf16, int8 or q4\n");
        return 2;
    }
    const std::string modelDir = arg(argc, argv, "model", ""),
                      saveDir = arg(argc, argv, "save-model", "");
    engine::LoadOptions options;
    options.weights = *weights;
    options.mapWeights = arg(argc, argv, "map", "1") != "0";
    const std::string memo = arg(argc, argv, "identity-memo", "");
    engine::rememberModelIdentitiesIn(memo);
    const std::string converted = arg(argc, argv, "converted-cache", "");
    engine::keepConvertedWeightsIn(converted);
    std::shared_ptr<engine::Model> model;
    std::string tag;
    auto makeTag = [&] {
        const auto& mc = model ? model->info().config : c;
        tag = std::string("\"weights\": \"") + engine::weightFormatName(*weights) +
              "\", \"layers\": " + std::to_string(mc.nLayer) +
              ", \"embd\": " + std::to_string(mc.nEmbd) +
              ", \"threads\": " + std::to_string(engine::cpu::threadCap()) +
              ", \"busy\": " + std::to_string(busy) + ", \"isa\": \"" +
              engine::cpu::isaName(engine::cpu::isa()) + "\"" +
              ", \"fixed_threads\": " + (fixedThreads ? "true" : "false") +
              ", \"identity_memo\": " + (memo.empty() ? "false" : "true") +
              (modelDir.empty()
                   ? std::string(", \"random\": true")
                   : ", \"mapped_mb\": " +
                         std::to_string(model ? model->info().mappedBytes / 1000000 : 0) +
                         ", \"kept_mb\": " +
                         std::to_string(model ? model->info().keptBytes / 1000000 : 0));
    };
    makeTag();

    auto t0 = Clock::now();
    if (!modelDir.empty()) {
        // A fresh process: nothing has touched the model yet.
        const FirstToken first = timeToFirstToken(modelDir, options, window, model);
        makeTag();
        report("gpt2", "time_to_first_token_s", first.seconds, "s", tag);
        report("gpt2", "first_token_read_s", first.read, "s", tag);
        report("gpt2", "process_start_to_first_token_s", first.fromProcessStart, "s", tag);
        std::vector<double> loads;
        for (int r = 0; r < std::max(1, repeats); ++r) {
            model.reset(); // one model in memory at a time
            t0 = Clock::now();
            auto loaded = engine::Model::load(modelDir, options);
            if (!loaded.ok())
                return 1;
            loads.push_back(secondsSince(t0));
            model = *loaded;
        }
        makeTag();
        report("gpt2", "load_warm_s", median(loads), "s",
               tag + ", \"storage\": \"" + model->info().storageDtype + "\"");
        report("gpt2", "peak_rss_after_load_mb", peakRssMb(), "MB", tag);
        report("gpt2", "private_rss_after_load_mb", privateRssMb(), "MB", tag);
    } else {
        // Building the model needs its float32 weights in memory.
        const double needed = 4.4 * (double(c.vocabSize + c.nPositions) * c.nEmbd +
                                     12.0 * c.nLayer * double(c.nEmbd) * c.nEmbd);
        if (availableMemoryBytes() < needed) {
            report("gpt2", "skipped", needed / 1e6, "MB needed",
                   tag + ", \"why\": \"not enough free memory for this shape\"");
            return 0;
        }
        engine::LoadOptions build = options;
        if (!saveDir.empty())
            build.weights = engine::WeightFormat::F32;
        auto created = engine::createModel(c, nullptr, 1, build);
        if (!created.ok()) {
            std::fprintf(stderr, "error: %s\n", created.error().message.c_str());
            return 1;
        }
        model = *created;
        report("gpt2", "build_model_s", secondsSince(t0), "s", tag);
        if (!saveDir.empty()) {
            auto dtype = engine::storageDtype(arg(argc, argv, "save-dtype", "f32"));
            const std::string tokenizer =
                arg(argc, argv, "tokenizer", BATON_SHARED_DIR "/tokenizers/gpt2");
            t0 = Clock::now();
            auto saved = dtype ? engine::saveModelFolder(engine::ModelAccess::of(*model), saveDir,
                                                         *dtype, tokenizer)
                               : engine::Result<void>(dtype.error());
            if (!saved.ok()) {
                std::fprintf(stderr, "error: %s\n", saved.error().message.c_str());
                return 1;
            }
            report("gpt2", "save_model_s", secondsSince(t0), "s", tag);
            return 0;
        }
    }
    report("gpt2", "parameters", double(model->info().parameterCount), "count", tag);
    report("gpt2", "decode_weight_bytes_per_token", decodeBytesPerToken(*model), "bytes", tag);
    // The machine's read bandwidth with one thread and with every core, before the busy
    // processes start (for reference: each share below uses bounds measured beside it).
    // The peak memory leaves the probe's buffer out (and the product peak's matrices).
    PeakMemory peak;
    auto bandwidth = [&](ReadBandwidthProbe& probe) {
        peak.pause();
        const double gbs = probe.measure();
        peak.resume();
        return gbs;
    };
    {
        const int cores = std::max(1, int(std::thread::hardware_concurrency()));
        ReadBandwidthProbe one(1), all(cores);
        report("gpt2", "read_bandwidth_1_thread", bandwidth(one), "GB/s");
        report("gpt2", "read_bandwidth_all_threads", bandwidth(all), "GB/s",
               "\"threads\": " + std::to_string(cores));
    }
    // The steps prefill multiplies these weights in (kernels/batched_products.h); without
    // AVX-512 it unpacks them and runs in float32.
    const auto prefillSteps = engine::cpu::batchedProducts(*weights)
                                  ? engine::cpu::productSteps(*weights)
                                  : engine::cpu::ProductSteps::Float32;

    BusyLoad load(busy);
    const engine::ModelConfig mc = model->info().config;
    const int T = std::min(window, mc.nPositions);
    std::mt19937 rng(7);
    std::vector<int32_t> ids(static_cast<size_t>(T));
    for (auto& id : ids)
        id = static_cast<int32_t>(rng() % uint32_t(std::min(mc.vocabSize, 50000)));

    // Scoring: log-probabilities of all T-1 predictions of one window.
    std::vector<double> score;
    engine::ScoreOptions so;
    so.windows.window = T;
    so.keepPerToken = false;
    for (int r = 0; r < repeats + 1; ++r) {
        t0 = Clock::now();
        auto s = engine::scoreTokens(*model, ids, so);
        if (!s.ok()) {
            std::fprintf(stderr, "error: %s\n", s.error().message.c_str());
            return 1;
        }
        if (r > 0) // the first run warms up allocators and thread pools
            score.push_back(secondsSince(t0));
    }
    report("gpt2", "score_window_s", median(score), "s",
           tag + ", \"window\": " + std::to_string(T));

    // Prefill: the window into the KV cache, logits for its last position only, between
    // two measurements of the product peak (whose matrices the peak memory leaves out,
    // like the probe's buffer).
    const auto productPeak = [&] {
        peak.pause();
        const double gflops = gemmPeakGflops(prefillSteps);
        peak.resume();
        return gflops;
    };
    const double gemmBefore = productPeak();
    std::vector<double> prefill;
    for (int r = 0; r < repeats + 1; ++r) {
        auto gen = engine::Generator::create(model, {T, 0});
        t0 = Clock::now();
        if (!(*gen)->append(ids).ok())
            return 1;
        if (r > 0)
            prefill.push_back(secondsSince(t0));
    }
    report("gpt2", "prefill_window_s", median(prefill), "s",
           tag + ", \"window\": " + std::to_string(T));
    const double gemmAfter = productPeak();
    const double gemm = std::max(gemmBefore, gemmAfter);
    const std::string peakTag = tag + ", \"window\": " + std::to_string(T) + ", \"peak\": \"" +
                                engine::cpu::productStepsName(prefillSteps) + "\"";
    report("gpt2", "gemm_peak_before_prefill", gemmBefore, "GFLOP/s", peakTag);
    report("gpt2", "gemm_peak_after_prefill", gemmAfter, "GFLOP/s", peakTag);
    reportShare("prefill_share_of_gemm_peak", prefillFlops(mc, T) / median(prefill) / (gemm * 1e9),
                peakTag);

    // Decode: one token per step with the KV cache, after a 16-token prompt, between two
    // measurements of the read bandwidth with as many threads as the decoder may use now.
    ReadBandwidthProbe probe(engine::cpu::threadCap());
    const double bwBefore = bandwidth(probe);
    auto gen = engine::Generator::create(model, {T, 0});
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
    const double bwAfter = bandwidth(probe);
    const double ms = 1000.0 * median(steps);
    report("gpt2", "decode_ms_per_token", ms, "ms", tag);
    report("gpt2", "decode_tokens_per_s", 1000.0 / ms, "tokens/s", tag);
    report("gpt2", "decode_p90_ms_per_token", 1000.0 * percentile(steps, 0.9), "ms", tag);
    // The bound: every weight read once per token, in the format it is held in, at the
    // higher of the two bandwidths measured beside the decoding.
    const double bytes = decodeBytesPerToken(*model);
    const double bw = std::max(bwBefore, bwAfter);
    const std::string bwTag = tag + ", \"probe_threads\": " + std::to_string(probe.threads());
    report("gpt2", "read_bandwidth_before_decode", bwBefore, "GB/s", bwTag);
    report("gpt2", "read_bandwidth_after_decode", bwAfter, "GB/s", bwTag);
    report("gpt2", "decode_bound_tokens_per_s", bw * 1e9 / bytes, "tokens/s",
           bwTag + ", \"bandwidth_gbs\": " + std::to_string(bw));
    char cached[96];
    std::snprintf(cached, sizeof cached, "the %.1f MB of weights read per token fit in the caches",
                  bytes / 1e6);
    reportShare("decode_share_of_bound", (1000.0 / ms) / (bw * 1e9 / bytes), tag, cached);
    report("gpt2", "peak_rss_mb", peak.mb(), "MB",
           tag + ", \"probe_left_out\": " + (peak.leavesOut() ? "true" : "false"));
    return g_boundWrong ? 3 : 0;
}
