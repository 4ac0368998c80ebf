// The engine on a CUDA device: GPT-2 small to XL shapes (random weights in memory) in
// bf16 (and f32 with --weights f32), time to prefill a 300-token window, decode speed
// with the KV cache (greedy, 128 tokens), each beside the card's bounds measured in
// the same run just before and after it, the higher of the two used:
//   - device-to-device copy bandwidth (1 GiB, read + write bytes, best of 10): the
//     decode bound is that bandwidth over the bytes of weights one token reads;
//   - the bf16 (or f32) matrix-product peak (square products of 4096, 8192 and 16384,
//     best of 5 each): the prefill bound.
// A share above 1 means a probe is wrong: it is reported as such, never as a share.
//   bench_gpu [--shapes small,medium,large,xl] [--weights bf16|f16|f32] [--window 300]
//             [--decode-tokens 128] [--repeats 3] [--device cuda]
// Training throughput on CUDA is not measured: Baton's trainer runs on the CPU only.
#include "bench_util.h"
#include "gpt2_shapes.h"

#include "model/model_impl.h"

#include <baton/engine/generator.h>

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>
#include <vector>

using namespace baton;
using namespace baton::bench;

namespace {

torch::Device g_device(torch::kCUDA);

void deviceSync() {
    if (g_device.is_cuda())
        torch::cuda::synchronize();
}

// Read + write bytes per second of a device-to-device copy, best of `passes`.
double copyBandwidthGBs(int passes = 10) {
    const int64_t n = int64_t(1) << 28; // 1 GiB of float32
    auto a = torch::ones({n}, torch::TensorOptions().dtype(torch::kFloat32).device(g_device));
    auto b = torch::empty_like(a);
    double best = 0;
    for (int i = 0; i < passes + 1; ++i) {
        deviceSync();
        const auto t0 = Clock::now();
        b.copy_(a);
        deviceSync();
        if (i > 0)
            best = std::max(best, 2.0 * double(n) * 4.0 / secondsSince(t0) / 1e9);
    }
    return best;
}

// The matrix-product peak in TFLOP/s for this dtype, best over sizes and passes.
double productPeakTflops(torch::ScalarType dtype) {
    double best = 0;
    // A CPU (the dry run of tools/gpu/run.sh) gets sizes it finishes in seconds.
    const std::vector<int64_t> sizes = g_device.is_cuda() ? std::vector<int64_t>{4096, 8192, 16384}
                                                          : std::vector<int64_t>{512, 1024};
    for (int64_t n : sizes) {
        auto opts = torch::TensorOptions().dtype(dtype).device(g_device);
        auto a = torch::randn({n, n}, opts), b = torch::randn({n, n}, opts);
        auto c = torch::matmul(a, b);
        for (int i = 0; i < 5; ++i) {
            deviceSync();
            const auto t0 = Clock::now();
            c = torch::matmul(a, b);
            deviceSync();
            best = std::max(best, 2.0 * double(n) * n * n / secondsSince(t0) / 1e12);
        }
    }
    return best;
}

} // namespace

int main(int argc, char** argv) {
    g_device = torch::Device(arg(argc, argv, "device", "cuda"));
    if (g_device.is_cuda() && !torch::cuda::is_available()) {
        std::fprintf(stderr, "error: this LibTorch sees no CUDA device\n");
        return 2;
    }
    const auto weights = engine::parseWeightFormat(arg(argc, argv, "weights", "bf16"));
    if (!weights || *weights == engine::WeightFormat::Int8) {
        std::fprintf(stderr, "error: --weights takes bf16, f16 or f32 on CUDA\n");
        return 2;
    }
    const auto productType = *weights == engine::WeightFormat::F32   ? torch::kFloat32
                             : *weights == engine::WeightFormat::F16 ? torch::kFloat16
                                                                     : torch::kBFloat16;
    const double bytesPerWeight = *weights == engine::WeightFormat::F32 ? 4.0 : 2.0;
    const int window = std::stoi(arg(argc, argv, "window", "300"));
    const int decodeTokens = std::stoi(arg(argc, argv, "decode-tokens", "128"));
    const int repeats = std::max(1, std::stoi(arg(argc, argv, "repeats", "3")));
    std::string shapes = arg(argc, argv, "shapes", "small,medium,large,xl");

    std::string deviceName = g_device.str();
    report("gpu", "copy_bandwidth", copyBandwidthGBs(), "GB/s",
           "\"device\": \"" + deviceName + "\"");
    report("gpu", "product_peak", productPeakTflops(productType), "TFLOP/s",
           std::string("\"dtype\": \"") + engine::weightFormatName(*weights) + "\"");

    std::stringstream list(shapes);
    for (std::string name; std::getline(list, name, ',');) {
        const Shape* sh = nullptr;
        for (const Shape& s : kShapes)
            if (name == s.name)
                sh = &s;
        if (!sh) {
            std::fprintf(stderr, "error: unknown shape %s\n", name.c_str());
            return 2;
        }
        engine::ModelConfig c;
        c.nLayer = sh->layers;
        c.nEmbd = sh->embd;
        c.nHead = sh->heads;
        c.nInner = 4 * c.nEmbd;
        c.vocabSize = 50257;
        c.nPositions = 1024;
        engine::LoadOptions options;
        options.device = deviceName;
        options.weights = *weights;
        auto created = engine::createModel(c, nullptr, 1, options);
        if (!created.ok()) {
            std::fprintf(stderr, "error: %s\n", created.error().message.c_str());
            return 1;
        }
        auto model = *created;
        const std::string tag = std::string("\"shape\": \"") + sh->name + "\", \"weights\": \"" +
                                engine::weightFormatName(*weights) + "\"";
        const double params = double(model->info().parameterCount);
        report("gpu", "parameters", params, "count", tag);
        std::mt19937 rng(7);
        std::vector<int32_t> ids(static_cast<size_t>(window));
        for (auto& id : ids)
            id = int32_t(rng() % 50000);

        // Prefill, between two product-peak probes.
        const double peakBefore = productPeakTflops(productType);
        std::vector<double> prefill;
        for (int r = 0; r < repeats + 1; ++r) {
            auto gen = engine::Generator::create(model, {window, 0});
            deviceSync();
            const auto t0 = Clock::now();
            if (!(*gen)->append(ids).ok())
                return 1;
            deviceSync();
            if (r > 0)
                prefill.push_back(secondsSince(t0));
        }
        const double peak = std::max(peakBefore, productPeakTflops(productType));
        const double prefillS = *std::min_element(prefill.begin(), prefill.end());
        const double prefillShare = prefillFlops(c, window) / prefillS / (peak * 1e12);
        report("gpu", "prefill_window_s", prefillS, "s",
               tag + ", \"window\": " + std::to_string(window));
        report("gpu", prefillShare <= 1.0 ? "prefill_share_of_product_peak" : "probe_wrong",
               prefillShare, "ratio", tag + ", \"peak_tflops\": " + std::to_string(peak));

        // Decode, between two copy-bandwidth probes.
        const double bwBefore = copyBandwidthGBs();
        std::vector<double> rates;
        for (int r = 0; r < repeats; ++r) {
            auto gen = engine::Generator::create(model, {1024, 0});
            if (!(*gen)->append(std::vector<int32_t>(ids.begin(), ids.begin() + 16)).ok())
                return 1;
            engine::SamplingOptions greedy;
            greedy.temperature = 0;
            greedy.maxTokens = decodeTokens;
            greedy.stopAtEndOfText = false;
            int n = 0;
            Clock::time_point first;
            auto res = (*gen)->generate(greedy, [&](const engine::GenerationEvent& e) {
                if (e.token >= 0 && ++n == 1)
                    first = Clock::now();
                return true;
            });
            if (!res.ok() || n < 2)
                return 1;
            rates.push_back(double(n - 1) / secondsSince(first));
        }
        const double bw = std::max(bwBefore, copyBandwidthGBs());
        const double rate = *std::max_element(rates.begin(), rates.end());
        // Every weight read once per token; the copy probe counts read + write bytes.
        const double bound = bw * 1e9 / (params * bytesPerWeight);
        report("gpu", "decode_tokens_per_s", rate, "tokens/s", tag);
        report("gpu", "decode_bound_tokens_per_s", bound, "tokens/s",
               tag + ", \"copy_gbs\": " + std::to_string(bw));
        report("gpu", rate / bound <= 1.0 ? "decode_share_of_bound" : "probe_wrong", rate / bound,
               "ratio", tag);
    }
    return 0;
}
