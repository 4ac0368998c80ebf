// Windowed execution on a GPT-2-small-shaped recurrent model (random weights):
//  - generation time per token in the tenth window against the first (T = 300, o = 0);
//  - the cost of one roll-over (o = 0 and o = 50);
//  - evaluation wall time against overlap, next to T / (T - o) and to the FLOPs
//    ratio that includes the LM head.
//   bench_windows [--window 300 --windows 10 --eval-tokens 3000 --layers 12 --embd 768]
#include "bench_util.h"

#include "kernels/worker_team.h"
#include "model/model_impl.h"

#include <baton/engine/generator.h>
#include <baton/engine/scoring.h>
#include <baton/engine/windows.h>

#include <torch/torch.h>

#include <cstdio>
#include <random>

using namespace baton;
using namespace baton::bench;

namespace {

struct StepTimes {
    std::vector<double> perWindow[64];
    std::vector<double> rollover; // steps whose token started a new window
};

StepTimes timeGeneration(const std::shared_ptr<engine::Model>& model, engine::WindowSettings w,
                         int tokens) {
    StepTimes out;
    auto gen = engine::Generator::create(model, w);
    if (!gen.ok() || !(*gen)->append({50256}).ok())
        std::exit(1);
    engine::SamplingOptions greedy;
    greedy.temperature = 0;
    greedy.maxTokens = tokens;
    greedy.stopAtEndOfText = false;
    auto last = Clock::now();
    int64_t lastStart = 0;
    auto r = (*gen)->generate(greedy, [&](const engine::GenerationEvent& e) {
        const auto now = Clock::now();
        const double dt = std::chrono::duration<double>(now - last).count();
        last = now;
        if (e.token < 0)
            return true;
        const int64_t start = e.streamLength - e.windowFill;
        const int64_t window = start / (w.window - w.overlap);
        if (start != lastStart)
            out.rollover.push_back(dt);
        else if (e.generated > 1 && window < 64)
            out.perWindow[window].push_back(dt);
        lastStart = start;
        return true;
    });
    if (!r.ok())
        std::exit(1);
    return out;
}

} // namespace

int main(int argc, char** argv) {
    engine::initializeRuntime();
    engine::ModelConfig c;
    c.nLayer = std::stoi(arg(argc, argv, "layers", "12"));
    c.nEmbd = std::stoi(arg(argc, argv, "embd", "768"));
    c.nHead = c.nEmbd / 64;
    c.vocabSize = 50257;
    c.nPositions = 1024;
    c.nInner = 4 * c.nEmbd;
    const int T = std::stoi(arg(argc, argv, "window", "300"));
    const int windows = std::stoi(arg(argc, argv, "windows", "10"));
    const int evalTokens = std::stoi(arg(argc, argv, "eval-tokens", "3000"));
    engine::RecurrenceConfig rec;
    rec.window = T;
    auto model = engine::createModel(c, nullptr, 1, {}, rec);
    if (!model.ok()) {
        std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
        return 1;
    }
    const std::string tag = "\"layers\": " + std::to_string(c.nLayer) +
                            ", \"embd\": " + std::to_string(c.nEmbd) +
                            ", \"window\": " + std::to_string(T) +
                            ", \"threads\": " + std::to_string(engine::cpu::threadCount());

    // Flat cost: the same positions in window 1 and window `windows`.
    const StepTimes flat = timeGeneration(*model, {T, 0}, T * windows - 2);
    const double first = median(flat.perWindow[0]);
    const double tenth = median(flat.perWindow[windows - 1]);
    report("windows", "decode_ms_first_window", 1000 * first, "ms", tag);
    report("windows", "decode_ms_window_" + std::to_string(windows), 1000 * tenth, "ms", tag);
    report("windows", "decode_ratio_window_" + std::to_string(windows) + "_to_first", tenth / first,
           "ratio", tag);
    report("windows", "rollover_step_ms_o0", 1000 * median(flat.rollover), "ms",
           tag + ", \"overlap\": 0, \"note\": \"step that rolls over, incl. its token\"");
    report("windows", "rollover_extra_ms_o0", 1000 * (median(flat.rollover) - tenth), "ms",
           tag + ", \"overlap\": 0");
    const StepTimes o50 = timeGeneration(*model, {T, 50}, T + 2 * (T - 50));
    report("windows", "rollover_step_ms_o50", 1000 * median(o50.rollover), "ms",
           tag + ", \"overlap\": 50");
    report("windows", "rollover_extra_ms_o50",
           1000 * (median(o50.rollover) - median(o50.perWindow[1])), "ms",
           tag + ", \"overlap\": 50");

    // Evaluation wall time against overlap (recurrent model, state on).
    std::mt19937 rng(3);
    std::vector<int32_t> ids(static_cast<size_t>(evalTokens));
    for (auto& id : ids)
        id = static_cast<int32_t>(rng() % 50000);
    double base = 0, baseFlops = 0, baseBlocks = 0;
    for (int o : {0, 50, 100, 150, 200}) {
        engine::ScoreOptions so;
        so.windows = {T, o};
        so.keepPerToken = false;
        const auto t0 = Clock::now();
        auto r = engine::scoreTokens(**model, ids, so);
        if (!r.ok())
            return 1;
        const double s = secondsSince(t0);
        const double flops = engine::flopsPerToken(c, {T, o}, true);
        if (o == 0) {
            base = s;
            baseFlops = flops;
        }
        const std::string extra = tag + ", \"overlap\": " + std::to_string(o) +
                                  ", \"tokens\": " + std::to_string(evalTokens);
        report("windows", "eval_s", s, "s", extra);
        report("windows", "eval_time_ratio", s / base, "ratio", extra);
        report("windows", "expected_ratio_T_over_T_minus_o", double(T) / double(T - o), "ratio",
               extra);
        report("windows", "expected_ratio_flops_with_head", flops / baseFlops, "ratio", extra);

        // The blocks alone (what the paper's FLOPs count): every window's forward
        // pass with its state, without the LM head.
        engine::Model::Impl& m = engine::ModelAccess::of(**model);
        const auto b0 = Clock::now();
        {
            torch::NoGradGuard noGrad;
            torch::Tensor state;
            for (const auto& span : engine::planWindows(evalTokens, {T, o})) {
                std::vector<int64_t> v(ids.begin() + span.start,
                                       ids.begin() + span.start + span.length);
                auto out = m.net->forward(torch::tensor(v).unsqueeze(0),
                                          m.windowArgs(state, 0, span.length, T));
                if (m.recurrent())
                    state = m.nextState(out, state, T);
            }
        }
        const double blocks = secondsSince(b0);
        if (o == 0)
            baseBlocks = blocks;
        report("windows", "blocks_s", blocks, "s", extra);
        report("windows", "blocks_time_ratio", blocks / baseBlocks, "ratio", extra);
    }
    report("windows", "peak_rss_mb", peakRssMb(), "MB", tag);
    return 0;
}
