// Storage benchmarks (one JSON object per measurement):
//  - time to save one generated chunk (passage + ~7 KB state blob, one transaction,
//    synchronous=FULL; and NORMAL for comparison): median and p99;
//  - listing 10,000 stories;
//  - loading a 100,000-token story (its current path: 6,250 passages);
//  - time to the first new token after reopening a story of 100,000 tokens against
//    a one-window story: open the database, load the current path, find the latest
//    state, import it (re-encodes the open window) and generate one token. Both
//    stories end with the same number of tokens in their open window, so the ratio
//    measures what the length of the story adds. GPT-2-small-shaped recurrent model
//    with random weights (engine createModel), T = 300, o = 0; the model is built
//    once, before the clock starts, as a running application would have it loaded.
//   bench_storage [--dir DIR] [--tokens 100000] [--layers 12 --embd 768] [--runs 5]
#include "bench_util.h"

#include "connection.h"
#include "model/model_impl.h"

#include <baton/engine/generator.h>
#include <baton/storage/database.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <cstdio>
#include <filesystem>
#include <random>

using namespace baton;
using namespace baton::bench;

namespace {

std::unique_ptr<storage::Database> openOrDie(const std::string& path) {
    auto db = storage::Database::open(path);
    if (!db) {
        std::fprintf(stderr, "error: %s\n", storage::describe(db.error()).c_str());
        std::exit(1);
    }
    return std::move(*db);
}

template <typename R>
void die(const R& r, const char* what) {
    if (!r.ok()) {
        std::fprintf(stderr, "error: %s\n", what);
        std::exit(1);
    }
}

storage::Story titled(const std::string& t) {
    storage::Story s;
    s.title = t;
    return s;
}

// 16 tokens' worth of text (about 4 bytes a token).
std::string chunkText(int64_t i) {
    return "Chunk " + std::to_string(i) + " of the story goes on and on, word after word.. ";
}

void benchChunkSaves(const std::string& dir, const char* synchronous) {
    const std::string path = dir + "/chunks-" + synchronous + ".db";
    std::filesystem::remove(path);
    auto db = openOrDie(path);
    connectionOf(*db).exec(std::string("PRAGMA synchronous=") + synchronous);
    const int64_t story = *db->stories().create(titled("chunks"));
    std::vector<uint8_t> blob(300 * 4 + 768 * 4 * 2 + 80, 7); // a GPT-2-small state
    std::vector<double> times;
    for (int i = 0; i < 500; ++i) {
        const auto t0 = Clock::now();
        auto r = db->transaction([&]() -> storage::Result<void> {
            auto p = db->stories().append(story, chunkText(i), storage::PassageAuthor::Model);
            if (!p)
                return p.error();
            storage::StoredState s;
            s.passageId = *p;
            s.tokenOffset = i * 16;
            s.modelIdentity = "bench";
            s.window = 300;
            s.formatVersion = 1;
            s.blob = blob;
            auto saved = db->states().save(s);
            if (!saved)
                return saved.error();
            return {};
        });
        times.push_back(secondsSince(t0));
        die(r, "saving a chunk");
    }
    const std::string tag = std::string("\"synchronous\": \"") + synchronous +
                            "\", \"chunks\": 500, \"blob_bytes\": " + std::to_string(blob.size());
    report("storage", "save_chunk_median_ms", 1000 * median(times), "ms", tag);
    report("storage", "save_chunk_p99_ms", 1000 * percentile(times, 0.99), "ms", tag);
}

} // namespace

int main(int argc, char** argv) {
    const std::string dir =
        arg(argc, argv, "dir",
            std::filesystem::temp_directory_path().string() + "/baton-bench-storage");
    std::filesystem::create_directories(dir);
    const int64_t tokens = std::stoll(arg(argc, argv, "tokens", "100000"));
    const int runs = std::stoi(arg(argc, argv, "runs", "5"));

    benchChunkSaves(dir, "FULL");
    benchChunkSaves(dir, "NORMAL");

    // Listing 10,000 stories.
    {
        const std::string path = dir + "/list.db";
        std::filesystem::remove(path);
        auto db = openOrDie(path);
        die(db->transaction([&]() -> storage::Result<void> {
            for (int i = 0; i < 10000; ++i)
                if (auto r = db->stories().create(titled("Story number " + std::to_string(i))); !r)
                    return r.error();
            return {};
        }),
            "creating stories");
        std::vector<double> times;
        for (int r = 0; r < runs; ++r) {
            const auto t0 = Clock::now();
            auto list = db->stories().list();
            times.push_back(secondsSince(t0));
            if (!list || list->size() != 10000)
                return 1;
        }
        report("storage", "list_10000_stories_ms", 1000 * median(times), "ms");
    }

    // The model, and the long and one-window stories with their states.
    engine::initializeRuntime();
    engine::ModelConfig c;
    c.nLayer = std::stoi(arg(argc, argv, "layers", "12"));
    c.nEmbd = std::stoi(arg(argc, argv, "embd", "768"));
    c.nHead = c.nEmbd / 64;
    c.vocabSize = 50257;
    c.nPositions = 1024;
    c.nInner = 4 * c.nEmbd;
    c.bosTokenId = c.eosTokenId = 50256;
    const int T = 300;
    engine::RecurrenceConfig rec;
    rec.window = T;
    auto model = engine::createModel(c, nullptr, 1, {}, rec);
    die(model, "creating the model");
    const engine::WindowSettings windows{T, 0};
    const int fill = 200; // tokens in the open window at the end of both stories
    const int64_t longTokens = (std::max<int64_t>(tokens, T) / T) * T + fill;

    const std::string path = dir + "/stories.db";
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    int64_t longStory = 0, shortStory = 0;
    {
        auto db = openOrDie(path);
        std::mt19937 rng(5);
        auto build = [&](const std::string& title, int64_t count) {
            const int64_t story = *db->stories().create(titled(title));
            auto gen = engine::Generator::create(*model, windows);
            die(gen, "generator");
            const auto t0 = Clock::now();
            std::vector<int32_t> ids(static_cast<size_t>(count));
            for (auto& id : ids)
                id = static_cast<int32_t>(rng() % 50000);
            if (!(*gen)->append(ids).ok()) // windowed prefill of the whole stream
                std::exit(1);
            die(db->transaction([&]() -> storage::Result<void> {
                for (int64_t i = 0; i < count; i += 16) {
                    auto p = db->stories().append(story, chunkText(i / 16),
                                                  storage::PassageAuthor::Model);
                    if (!p)
                        return p.error();
                }
                return {};
            }),
                "building a story");
            auto blob = (*gen)->exportState();
            die(blob, "exporting the state");
            storage::StoredState s;
            s.passageId = db->stories().get(story)->currentPassageId;
            s.windowIndex = (*gen)->windowStart() / T;
            s.tokenOffset = (*gen)->streamLength();
            s.modelIdentity = (*model)->info().identity;
            s.window = T;
            s.overlap = 0;
            s.formatVersion = static_cast<int>(engine::kStateFormatVersion);
            s.blob = *blob;
            die(db->states().save(s), "saving the state");
            std::fprintf(stderr, "[built %s: %lld tokens in %.1f s, open window %d tokens]\n",
                         title.c_str(), static_cast<long long>((*gen)->streamLength()),
                         secondsSince(t0), (*gen)->windowFill());
            return story;
        };
        shortStory = build("one window", fill);
        longStory = build("long", longTokens);
    }

    // Loading the long story's current path.
    {
        auto db = openOrDie(path);
        std::vector<double> times;
        size_t bytes = 0;
        for (int r = 0; r < runs; ++r) {
            const auto t0 = Clock::now();
            auto text = db->stories().currentText(longStory);
            times.push_back(secondsSince(t0));
            die(text, "loading");
            bytes = text->size();
        }
        report("storage", "load_story_ms", 1000 * median(times), "ms",
               "\"tokens\": " + std::to_string(longTokens) +
                   ", \"passages\": " + std::to_string((longTokens + 15) / 16) +
                   ", \"bytes\": " + std::to_string(bytes));
    }

    // Time to the first new token after reopening.
    auto reopen = [&](int64_t story) {
        std::vector<double> times;
        for (int r = 0; r < runs; ++r) {
            const auto t0 = Clock::now();
            auto db = openOrDie(path);
            auto storyPath = db->stories().currentPath(story);
            die(storyPath, "path");
            auto state = db->states().latestOnPath(storyPath->back().id, (*model)->info().identity,
                                                   T, 0, int(engine::kStateFormatVersion));
            if (!state || !*state)
                std::exit(1);
            auto gen = engine::Generator::importState(*model, (*state)->blob, windows);
            die(gen, "import");
            engine::SamplingOptions greedy;
            greedy.temperature = 0;
            greedy.maxTokens = 1;
            greedy.stopAtEndOfText = false;
            bool first = false;
            auto g = (*gen)->generate(greedy, [&](const engine::GenerationEvent&) {
                first = true;
                return false;
            });
            times.push_back(secondsSince(t0));
            if (!g.ok() || !first)
                std::exit(1);
        }
        return median(times);
    };
    reopen(shortStory); // warm-up (page cache, allocator)
    const double shortS = reopen(shortStory);
    const double longS = reopen(longStory);
    const std::string tag =
        "\"layers\": " + std::to_string(c.nLayer) + ", \"embd\": " + std::to_string(c.nEmbd) +
        ", \"window\": " + std::to_string(T) + ", \"open_window_tokens\": " + std::to_string(fill);
    report("storage", "first_token_after_reopen_one_window_ms", 1000 * shortS, "ms",
           tag + ", \"tokens\": " + std::to_string(fill));
    report("storage", "first_token_after_reopen_long_ms", 1000 * longS, "ms",
           tag + ", \"tokens\": " + std::to_string(longTokens));
    report("storage", "first_token_after_reopen_ratio", longS / shortS, "ratio",
           tag + ", \"target\": 1.3");
    return 0;
}
