#include "cli_support.h"
#include "commands.h"
#include "database_options.h"
#include "terminal_progress.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/tokenizer.h>
#include <baton/engine/topics.h>
#include <baton/storage/topic_store.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

namespace baton::cli {

namespace {

engine::TopicModel loadTopics(const std::string& path) {
    auto m = engine::TopicModel::load(path);
    check(m);
    return std::move(*m);
}

int runFit(const std::vector<std::string>& argv) {
    Args args("topics fit",
              "Fit an LDA topic model by collapsed Gibbs sampling (method.md section 6) on "
              "text files or folders: lower-cased words, stop words and rare or very common "
              "words removed, documents cut into chunks of about --chunk-words words.");
    args.option("corpus", "PATH", "Books (.txt, .md, .epub) or folders of them (repeatable)",
                std::nullopt, true)
        .option("topics", "K", "Number of topics", "20")
        .option("out", "FILE", "Where to write the topic model (JSON)")
        .option("iterations", "N", "Gibbs sweeps", "300")
        .option("alpha", "X", "Document-topic prior (0: 50 / K)", "0")
        .option("beta", "X", "Topic-word prior", "0.01")
        .option("chunk-words", "N", "Words per document chunk", "1000")
        .option("min-df", "N", "Drop words found in fewer chunks", "5")
        .option("max-df", "F", "Drop words found in more than this share of chunks", "0.5")
        .option("seed", "N", "Seed", "1")
        .option("threads", "N", "Threads (0: all cores)", "0")
        .option("name", "TEXT", "The name it is registered under (default: the file's name)")
        .flag("no-register", "Do not register the topic model in the story database");
    addDbOption(args);
    if (!args.parse(argv))
        return 0;
    if (!args.has("out"))
        throw UsageError("--out FILE is required");
    const auto paths = args.all("corpus");
    if (paths.empty())
        throw UsageError("--corpus PATH is required");
    std::vector<std::string> texts;
    for (const auto& p : paths)
        for (const auto& f : listBookFiles(p))
            texts.push_back(readBookText(f));
    engine::LdaOptions o;
    o.topics = int(args.getInt("topics", 1, 65535));
    o.iterations = int(args.getInt("iterations", 1, 1000000));
    o.alpha = args.getDouble("alpha", 0, 1e6);
    o.beta = args.getDouble("beta", 1e-9, 1e6);
    o.chunkWords = int(args.getInt("chunk-words", 1, 100000000));
    o.minDocFrequency = int(args.getInt("min-df", 1, 100000000));
    o.maxDocFrequency = args.getDouble("max-df", 1e-9, 1);
    o.seed = uint64_t(args.getInt("seed", 0, INT64_MAX));
    o.threads = int(args.getInt("threads", 0, 1024));
    TerminalProgress bar("topics fit", double(o.iterations), "sweeps");
    auto model = engine::fitLda(texts, o, [&bar](const engine::LdaProgress& p) {
        char line[96];
        std::snprintf(line, sizeof line, "sweep %d of %d  %.0f tokens/s", p.iteration, p.iterations,
                      p.tokensPerSecond);
        bar.update(double(p.iteration) / double(std::max(1, p.iterations)), line);
        // Without a terminal (a log): a line every ten sweeps.
        if (!bar.shown() &&
            (p.iteration == 1 || p.iteration % 10 == 0 || p.iteration == p.iterations)) {
            std::fprintf(stderr, "sweep %d/%d  %.0f tokens/s", p.iteration, p.iterations,
                         p.tokensPerSecond);
            if (p.logLikelihood != 0)
                std::fprintf(stderr, "  log-likelihood/token %.4f", p.logLikelihood);
            std::fprintf(stderr, "\n");
        }
        return true;
    });
    bar.finish();
    check(model);
    model->summary = std::to_string(texts.size()) + " files; " + model->summary;
    check(model->save(args.get("out")));
    std::cerr << "fitted " << model->topics() << " topics over " << model->vocabularySize()
              << " words (" << model->summary << ")\n";
    if (!args.has("no-register")) {
        namespace fs = std::filesystem;
        storage::TopicModelRecord record;
        record.path = fs::absolute(args.get("out")).lexically_normal().string();
        record.name =
            args.has("name") ? args.get("name") : fs::path(args.get("out")).stem().string();
        record.topics = model->topics();
        record.vocabularySize = model->vocabularySize();
        record.summary = model->summary;
        try {
            auto db = openDatabase(args);
            auto id = db->topics().add(record);
            checkStorage(id);
            std::cerr << "registered as topic model " << *id << "\n";
        } catch (const CliError& e) {
            throw CliError(std::string("the topic model was saved to ") + args.get("out") +
                           " but could not be registered: " + e.what());
        }
    }
    std::cout << args.get("out") << "\n";
    return 0;
}

int runShow(const std::vector<std::string>& argv) {
    Args args("topics show", "Print the most probable words of every topic.");
    args.option("words", "N", "Words per topic", "12")
        .flag("json", "Print JSON")
        .positionals("FILE", "A topic model written by 'topics fit'", 1, 1);
    if (!args.parse(argv))
        return 0;
    const auto m = loadTopics(args.positional()[0]);
    const int n = int(args.getInt("words", 1, 1000));
    const auto shares = m.topicShares();
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (int k = 0; k < m.topics(); ++k) {
        const auto top = m.topWords(k, n);
        if (args.has("json")) {
            nlohmann::ordered_json t;
            t["topic"] = k;
            t["share"] = shares[size_t(k)];
            for (const auto& [w, p] : top)
                t["words"].push_back({{"word", w}, {"p", p}});
            j.push_back(t);
        } else {
            std::printf("%3d  %5.1f%%  ", k, 100 * shares[size_t(k)]);
            for (const auto& [w, p] : top)
                std::printf("%s ", w.c_str());
            std::printf("\n");
        }
    }
    if (args.has("json"))
        std::cout << j.dump(2) << "\n";
    return 0;
}

int runInfer(const std::vector<std::string>& argv) {
    Args args("topics infer", "Infer a text's topic distribution by fold-in Gibbs sampling.");
    args.option("iterations", "N", "Gibbs sweeps over the text", "200")
        .option("seed", "N", "Seed", "1")
        .flag("json", "Print JSON")
        .positionals("FILE TEXT_FILE", "The topic model and a UTF-8 text file", 2, 2);
    if (!args.parse(argv))
        return 0;
    const auto m = loadTopics(args.positional()[0]);
    const std::string text = readText(args.positional()[1]);
    const auto inf = m.infer(text, int(args.getInt("iterations", 2, 1000000)),
                             uint64_t(args.getInt("seed", 0, INT64_MAX)));
    std::vector<int> order(inf.theta.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int(i);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return inf.theta[size_t(a)] > inf.theta[size_t(b)]; });
    if (args.has("json")) {
        nlohmann::ordered_json j;
        j["known_words"] = inf.knownWords;
        j["theta"] = inf.theta;
        std::cout << j.dump() << "\n";
        return 0;
    }
    std::printf("%d words of the text are in the topic model's vocabulary\n", inf.knownWords);
    for (int k : order) {
        if (inf.theta[size_t(k)] < 0.01)
            break;
        std::printf("%3d  %5.1f%%  ", k, 100 * inf.theta[size_t(k)]);
        for (const auto& [w, p] : m.topWords(k, 8))
            std::printf("%s ", w.c_str());
        std::printf("\n");
    }
    return 0;
}

// Paired comparisons of two conditions' divergences: how often the first is lower.
struct SignTally {
    int64_t lower = 0, higher = 0, ties = 0;
    void add(double a, double b) { (a < b ? lower : a > b ? higher : ties) += 1; }
    double p() const { return engine::signTestPValue(lower, higher); }
};

struct Condition {
    std::string name, description;
    std::vector<double> jsd;
};

std::vector<int32_t> greedyContinuation(engine::Generator& g, int tokens) {
    engine::SamplingOptions o;
    o.temperature = 0;
    o.maxTokens = tokens;
    o.stopAtEndOfText = false;
    auto r = g.generate(o);
    check(r);
    return r->tokens;
}

int runExperiment(const std::vector<std::string>& argv) {
    Args args("topics experiment",
              "Topic propagation (method.md section 6, the paper's section 5.3.1): sample N "
              "contexts of T tokens from held-out books; greedy-decode a continuation in a fresh "
              "window (a) by the recurrent model, whose window holds the last context token "
              "plus the state from the context, and (b) by the baseline, which gets only that "
              "one token; (c) as a reference, by the baseline given the last T - C context "
              "tokens in its window; (d) by the recurrent model with the last context token "
              "and the state of a context half the book away (what of (a) is about this "
              "context). Report the mean Jensen-Shannon divergence (bits) between the topic "
              "distributions of context and continuation, the share of contexts where (a) is "
              "lower than (b), and two-sided sign-test p-values of (a) against (b) and (d).");
    args.option("topics-model", "FILE", "A topic model from 'topics fit' (required)")
        .option("recurrent", "DIR", "The recurrent model (default: the bundled baton-mini)")
        .option("baseline", "DIR", "The baseline model (default: the bundled baton-mini-baseline)")
        .option("contexts", "N", "Number of contexts", "1000")
        .option("window", "T", "Context length in tokens (default: the recurrent model's T)", "0")
        .option("continuation-tokens", "C", "Tokens generated per continuation", "30")
        .option("infer-iterations", "N", "Fold-in Gibbs sweeps per text", "200")
        .option("seed", "N", "Seed for the context positions and inference", "1")
        .option("threads", "N", "Compute threads (0: all cores)", "0")
        .flag("json", "Print JSON")
        .positionals("BOOK", "Held-out books (UTF-8 text files)", 1, 1000);
    if (!args.parse(argv))
        return 0;
    if (!args.has("topics-model"))
        throw UsageError("--topics-model FILE is required (make one with 'topics fit')");
    engine::initializeRuntime(int(args.getInt("threads", 0, 1024)));
    const auto topics = loadTopics(args.get("topics-model"));
    auto load = [&](const char* option, const char* bundled) {
        std::string dir = args.has(option) ? args.get(option) : bundledModelDir(bundled);
        if (dir.empty())
            throw UsageError(std::string("--") + option + " DIR is required: the bundled model " +
                             bundled + " is not installed");
        auto m = engine::Model::load(dir);
        check(m);
        return *m;
    };
    const auto recurrent = load("recurrent", "baton-mini");
    const auto baseline = load("baseline", "baton-mini-baseline");
    if (!recurrent->recurrent())
        throw CliError("--recurrent " + recurrent->info().path + " is not a recurrent model");
    if (recurrent->tokenizer()->identity() != baseline->tokenizer()->identity())
        throw CliError("the recurrent and baseline models use different tokenizers");
    int T = int(args.getInt("window", 0, 1 << 20));
    if (T == 0)
        T = recurrent->info().recurrence->window;
    const int C = int(args.getInt("continuation-tokens", 1, 100000));
    const int N = int(args.getInt("contexts", 1, 10000000));
    const int inferIterations = int(args.getInt("infer-iterations", 2, 1000000));
    const uint64_t seed = uint64_t(args.getInt("seed", 0, INT64_MAX));
    if (T < 2 || T > recurrent->config().nPositions || T > baseline->config().nPositions)
        throw UsageError("--window must be in [2, the models' positions]");
    if (C >= T)
        throw UsageError("--continuation-tokens must be less than the window");

    std::vector<std::vector<int32_t>> books;
    int64_t candidates = 0;
    for (const auto& f : args.positional()) {
        books.push_back(recurrent->tokenizer()->encode(readText(f)));
        candidates += std::max<int64_t>(0, int64_t(books.back().size()) - T);
    }
    if (candidates < 1)
        throw CliError("the books are shorter than one context of " + std::to_string(T) +
                       " tokens");
    std::mt19937_64 rng(seed);
    const engine::WindowSettings windows{T, 0};
    Condition rec{"recurrent", "recurrent model: last context token + state", {}};
    Condition one{"baseline_one_token", "baseline: last context token only", {}};
    Condition full{
        "baseline_full_window", "baseline: last " + std::to_string(T - C) + " context tokens", {}};
    Condition far{"recurrent_far_state", "recurrent: last token + state from half a book away", {}};
    SignTally vsOne, vsFar; // the recurrent model against (b) and against (d)
    auto jsdOf = [&](const std::string& context, const std::vector<int32_t>& cont, uint64_t s) {
        const auto a = topics.infer(context, inferIterations, s);
        const auto b = topics.infer(recurrent->tokenizer()->decode(cont), inferIterations, s + 1);
        return engine::jensenShannonBits(a.theta, b.theta);
    };
    for (int n = 0; n < N; ++n) {
        // A context start drawn uniformly over all books' positions.
        int64_t pick = int64_t(rng() % uint64_t(candidates));
        size_t b = 0;
        while (pick >= int64_t(books[b].size()) - T) {
            pick -= std::max<int64_t>(0, int64_t(books[b].size()) - T);
            ++b;
        }
        const std::vector<int32_t> context(books[b].begin() + pick, books[b].begin() + pick + T);
        const std::string contextText = recurrent->tokenizer()->decode(context);
        const uint64_t s = seed * 1000003ULL + uint64_t(n) * 4;

        auto g = engine::Generator::create(recurrent, windows);
        check(g);
        check((*g)->append(context));          // fills the window: the state comes from it
        check((*g)->append({context.back()})); // rolls over: a fresh window + the state
        const double jr = jsdOf(contextText, greedyContinuation(**g, C), s);

        auto g1 = engine::Generator::create(baseline, windows);
        check(g1);
        check((*g1)->append({context.back()}));
        const double jb = jsdOf(contextText, greedyContinuation(**g1, C), s);

        auto g2 = engine::Generator::create(baseline, windows);
        check(g2);
        check((*g2)->append(std::vector<int32_t>(context.end() - (T - C), context.end())));
        const double jf = jsdOf(contextText, greedyContinuation(**g2, C), s);

        // The same last token with the state of the context half the book further on
        // (wrapping round): a state about other text.
        const int64_t span = int64_t(books[b].size()) - T;
        const int64_t farPick = (pick + span / 2) % span;
        auto g3 = engine::Generator::create(recurrent, windows);
        check(g3);
        check((*g3)->append(
            std::vector<int32_t>(books[b].begin() + farPick, books[b].begin() + farPick + T)));
        check((*g3)->append({context.back()}));
        const double jd = jsdOf(contextText, greedyContinuation(**g3, C), s);

        rec.jsd.push_back(jr);
        one.jsd.push_back(jb);
        full.jsd.push_back(jf);
        far.jsd.push_back(jd);
        vsOne.add(jr, jb);
        vsFar.add(jr, jd);
        if ((n + 1) % 50 == 0 || n + 1 == N)
            std::fprintf(stderr, "%d/%d contexts\n", n + 1, N);
    }
    auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v)
            s += x;
        return v.empty() ? 0.0 : s / double(v.size());
    };
    auto stderrOf = [&](const std::vector<double>& v) {
        const double m = mean(v);
        double s = 0;
        for (double x : v)
            s += (x - m) * (x - m);
        return v.size() > 1 ? std::sqrt(s / double(v.size() - 1) / double(v.size())) : 0.0;
    };
    const double share =
        double(vsOne.lower) / double(std::max<int64_t>(1, vsOne.lower + vsOne.higher + vsOne.ties));
    if (args.has("json")) {
        nlohmann::ordered_json j;
        j["contexts"] = N;
        j["window"] = T;
        j["continuation_tokens"] = C;
        j["topics"] = topics.topics();
        for (const auto* c : {&rec, &one, &full, &far})
            j["rows"].push_back({{"condition", c->name},
                                 {"description", c->description},
                                 {"mean_jsd", mean(c->jsd)},
                                 {"jsd_standard_error", stderrOf(c->jsd)}});
        j["recurrent_lower_share"] = share;
        j["recurrent_lower"] = vsOne.lower;
        j["recurrent_higher"] = vsOne.higher;
        j["ties"] = vsOne.ties;
        j["sign_test_p"] = vsOne.p();
        j["against_far_state"] = {{"recurrent_lower", vsFar.lower},
                                  {"recurrent_higher", vsFar.higher},
                                  {"ties", vsFar.ties},
                                  {"sign_test_p", vsFar.p()}};
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::printf("%d contexts of %d tokens, %d-token greedy continuations, %d topics\n\n", N, T, C,
                topics.topics());
    std::printf("%-46s %10s %8s\n", "condition", "mean JSD", "+/-");
    for (const auto* c : {&rec, &one, &full, &far})
        std::printf("%-46s %10.4f %8.4f\n", c->description.c_str(), mean(c->jsd), stderrOf(c->jsd));
    std::printf("\nrecurrent lower than baseline (one token) in %.1f%% of contexts "
                "(%lld lower, %lld higher, %lld ties); sign test p = %.3g\n",
                100 * share, static_cast<long long>(vsOne.lower),
                static_cast<long long>(vsOne.higher), static_cast<long long>(vsOne.ties),
                vsOne.p());
    std::printf("recurrent lower than with the far state in %lld contexts, higher in %lld, "
                "%lld ties; sign test p = %.3g\n",
                static_cast<long long>(vsFar.lower), static_cast<long long>(vsFar.higher),
                static_cast<long long>(vsFar.ties), vsFar.p());
    return 0;
}

} // namespace

int runTopics(const std::vector<std::string>& argv) {
    const char* usage = "Usage: baton-cli topics fit|show|infer|experiment [options]\n"
                        "  fit         fit an LDA topic model on text files or folders\n"
                        "  show        the top words of every topic\n"
                        "  infer       a text's topic distribution\n"
                        "  experiment  topic propagation through the state (method.md section 6)\n"
                        "Run 'baton-cli topics SUBCOMMAND --help' for its options.\n";
    if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
        (argv.empty() ? std::cerr : std::cout) << usage;
        return argv.empty() ? 2 : 0;
    }
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (argv[0] == "fit")
        return runFit(rest);
    if (argv[0] == "show")
        return runShow(rest);
    if (argv[0] == "infer")
        return runInfer(rest);
    if (argv[0] == "experiment")
        return runExperiment(rest);
    throw UsageError("unknown topics subcommand '" + argv[0] + "'\n" + usage);
}

} // namespace baton::cli
