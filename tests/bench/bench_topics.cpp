// Topic models (method.md section 6): LDA fit on ../shared/corpus/books (20 topics,
// chunks of 1,000 words), as tokens per second per Gibbs sweep, and fold-in inference
// of a 300-token text.
//   bench_topics [--books DIR] [--sweeps 50] [--threads 0]
#include "bench_util.h"

#include <baton/engine/topics.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace baton;
using namespace baton::bench;

int main(int argc, char** argv) {
    const std::string dir = arg(argc, argv, "books", BATON_SHARED_DIR "/corpus/books");
    const int sweeps = std::stoi(arg(argc, argv, "sweeps", "50"));
    const int threads = std::stoi(arg(argc, argv, "threads", "0"));
    std::vector<std::string> texts;
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".txt")
            names.push_back(e.path().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        std::ifstream f(n, std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        texts.push_back(ss.str());
    }
    if (texts.empty()) {
        std::fprintf(stderr, "error: no books in %s\n", dir.c_str());
        return 1;
    }
    engine::LdaOptions o;
    o.topics = 20;
    o.iterations = sweeps;
    o.threads = threads;
    std::vector<double> rates;
    int64_t tokens = 0;
    const auto t0 = Clock::now();
    auto model = engine::fitLda(texts, o, [&](const engine::LdaProgress& p) {
        rates.push_back(p.tokensPerSecond);
        tokens = p.tokens;
        return true;
    });
    const double total = secondsSince(t0);
    if (!model.ok()) {
        std::fprintf(stderr, "error: %s\n", model.error().message.c_str());
        return 1;
    }
    const std::string tag =
        "\"topics\": 20, \"books\": " + std::to_string(texts.size()) +
        ", \"tokens_per_sweep\": " + std::to_string(tokens) +
        ", \"sweeps\": " + std::to_string(sweeps) + ", \"threads\": " +
        std::to_string(threads > 0 ? threads : int(std::thread::hardware_concurrency()));
    report("topics", "gibbs_tokens_per_s", median(rates), "tokens/s", tag);
    report("topics", "fit_s_incl_vocabulary", total, "s", tag);
    // Fold-in inference of about 300 tokens of text (about 230 words) from the middle of a book.
    const std::string& book = texts[0];
    std::string text = book.substr(book.size() / 2, 1300);
    std::vector<double> times;
    for (int i = 0; i < 20; ++i) {
        const auto t = Clock::now();
        auto inf = model->infer(text, 200, uint64_t(i));
        times.push_back(secondsSince(t));
        if (inf.theta.empty())
            return 1;
    }
    report("topics", "infer_ms_300_tokens", 1000 * median(times), "ms",
           "\"words\": " + std::to_string(engine::wordTokens(text).size()) +
               ", \"gibbs_sweeps\": 200");
    return 0;
}
