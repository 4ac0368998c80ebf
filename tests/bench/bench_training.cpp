// Training throughput and memory (method.md section 5): one process measures one
// setting, so that its peak resident memory is that setting's alone.
//   bench_training [--layers 4 --embd 256 --vocab 8000 --mode recurrent|baseline
//                   --window 128 --bptt-windows 20 --batch 8 --steps 4
//                   --threads N --busy N --fixed-threads 0|1
//                   --heads N --positions P --slots S --adapter 0|1
//                   --device cpu|cuda --precision f32|bf16]
// Each optimizer step is what the trainer does: exact backpropagation through the
// W windows by recomputation (recurrent) or independent windows (baseline), global
// gradient clipping and an AdamW update. The first step (which allocates the
// optimizer's state) is not timed. --busy N runs N busy-looping processes during the
// timed steps; --fixed-threads 1 keeps a fixed team (the thread budget off).
// --device cuda trains on the GPU (bf16: the products under autocast, as `baton-cli
// train --device cuda` does) and also reports the model FLOP rate: 6 per parameter
// per token, 8 for a recurrent model (its windows are read once more without
// gradients), for comparison with bench_gpu's product peak from the same run.
// --adapter 1 (recurrent) trains as `baton-cli train --adapter` does: the base's weights
// frozen (no gradients, no optimizer state), the recurrence module alone updated; it
// also reports the module's parameters and its size saved in F16 and F32.
#include "bench_util.h"

#include "kernels/core_budget.h"
#include "model/model_impl.h"
#include "training/bptt.h"
#include "training/optimizer.h"

#include <torch/torch.h>

#include <cstdio>
#include <memory>

using namespace baton;
using namespace baton::bench;

int main(int argc, char** argv) {
    engine::initializeRuntime(std::stoi(arg(argc, argv, "threads", "0")));
    const bool fixedThreads = arg(argc, argv, "fixed-threads", "0") == "1";
    engine::cpu::setAdaptiveThreads(!fixedThreads);
    const int busy = std::stoi(arg(argc, argv, "busy", "0"));
    engine::ModelConfig c;
    c.nLayer = std::stoi(arg(argc, argv, "layers", "4"));
    c.nEmbd = std::stoi(arg(argc, argv, "embd", "256"));
    c.nHead = std::stoi(arg(argc, argv, "heads", std::to_string(std::max(1, c.nEmbd / 64))));
    c.vocabSize = std::stoi(arg(argc, argv, "vocab", "8000"));
    const int T = std::stoi(arg(argc, argv, "window", "128"));
    c.nPositions = std::stoi(arg(argc, argv, "positions", std::to_string(std::max(T, 256))));
    c.nInner = 4 * c.nEmbd;
    const bool recurrent = arg(argc, argv, "mode", "recurrent") == "recurrent";
    const bool adapter = recurrent && arg(argc, argv, "adapter", "0") == "1";
    const int64_t W = std::stoll(arg(argc, argv, "bptt-windows", "20"));
    const int64_t B = std::stoll(arg(argc, argv, "batch", "8"));
    const int steps = std::stoi(arg(argc, argv, "steps", "4"));
    engine::RecurrenceConfig rec;
    rec.window = T;
    rec.slots = std::stoi(arg(argc, argv, "slots", "1"));
    engine::LoadOptions onDevice;
    onDevice.device = arg(argc, argv, "device", "cpu");
    const bool cuda = onDevice.device != "cpu";
    const bool bf16 = arg(argc, argv, "precision", cuda ? "bf16" : "f32") == "bf16";
    auto sync = [&] {
        if (cuda)
            torch::cuda::synchronize();
    };
    auto model = engine::createModel(c, nullptr, 1, onDevice,
                                     recurrent ? std::optional<engine::RecurrenceConfig>(rec)
                                               : std::nullopt);
    if (!model.ok()) {
        std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
        return 1;
    }
    engine::Model::Impl& m = engine::ModelAccess::of(**model);
    m.decoder.reset(); // training never uses the one-token decode path
    std::vector<engine::NamedParam> named;
    std::vector<torch::Tensor> params;
    for (auto& p : m.net->named_parameters()) {
        p.value().set_requires_grad(!adapter);
        if (!adapter)
            named.push_back({"net." + p.key(), p.value()});
    }
    int64_t moduleParams = 0;
    if (recurrent)
        for (auto& p : m.recurrence->named_parameters()) {
            p.value().set_requires_grad(true);
            named.push_back({"rec." + p.key(), p.value()});
            moduleParams += p.value().numel();
        }
    for (auto& n : named)
        params.push_back(n.param);
    engine::AdamOptimizer opt({engine::ParamGroup{named, 1.0, 0.01}}, true, 0.9, 0.999, 1e-8);

    torch::manual_seed(2);
    engine::WindowBatch batch;
    batch.inputs = torch::randint(c.vocabSize, {W, B, T}, torch::kLong);
    batch.targets = torch::randint(c.vocabSize, {W, B, T}, torch::kLong);
    batch.scored = W * B * T;
    const double baseRss = peakRssMb();

    std::vector<double> times;
    std::unique_ptr<BusyLoad> load;
    for (int s = 0; s <= steps; ++s) {
        if (s == 1)
            load = std::make_unique<BusyLoad>(busy);
        const auto t0 = Clock::now();
        opt.zeroGrad();
        engine::accumulateGradients(m, batch, recurrent, double(batch.scored), cuda && bf16);
        engine::clipGradients(params, {}, 1.0);
        opt.step(1e-4);
        sync();
        if (s > 0)
            times.push_back(secondsSince(t0));
    }
    load.reset();
    const double perStep = median(times);
    const std::string tag =
        std::string("\"mode\": \"") +
        (adapter     ? "adapter"
         : recurrent ? "recurrent"
                     : "baseline") +
        "\", \"slots\": " + std::to_string(rec.slots) +
        ", \"parameters\": " + std::to_string((*model)->info().parameterCount) +
        ", \"heads\": " + std::to_string(c.nHead) + ", \"layers\": " + std::to_string(c.nLayer) +
        ", \"embd\": " + std::to_string(c.nEmbd) + ", \"vocab\": " + std::to_string(c.vocabSize) +
        ", \"window\": " + std::to_string(T) + ", \"bptt_windows\": " + std::to_string(W) +
        ", \"batch\": " + std::to_string(B) +
        ", \"threads\": " + std::to_string(engine::cpu::threadCap()) +
        ", \"busy\": " + std::to_string(busy) +
        ", \"fixed_threads\": " + std::to_string(fixedThreads) +
        ", \"steps_timed\": " + std::to_string(times.size()) + ", \"device\": \"" +
        onDevice.device + "\", \"precision\": \"" + (cuda && bf16 ? "bf16" : "f32") + "\"";
    report("training", "tokens_per_s", double(batch.scored) / perStep, "tokens/s", tag);
    if (cuda)
        report("training", "model_tflops",
               (recurrent ? 8.0 : 6.0) * double((*model)->info().parameterCount) *
                   double(batch.scored) / perStep / 1e12,
               "TFLOP/s", tag);
    report("training", "step_s", perStep, "s", tag);
    report("training", "seconds_per_million_tokens", 1e6 * perStep / double(batch.scored), "s",
           tag);
    if (recurrent) {
        report("training", "module_parameters", double(moduleParams), "parameters", tag);
        report("training", "module_mb_f16", 2.0 * double(moduleParams) / 1e6, "MB", tag);
        report("training", "module_mb_f32", 4.0 * double(moduleParams) / 1e6, "MB", tag);
    }
    report("training", "peak_rss_mb", peakRssMb(), "MB", tag);
    report("training", "rss_before_training_mb", baseRss, "MB", tag);
    return 0;
}
