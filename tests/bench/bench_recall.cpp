// Recall benchmarks (story/recall.h, storage/recall_store.h), one JSON object per
// measurement, on a story of --words words (default 500,000: the King James Bible's
// first half from ../shared) in passages of about 12 words, as the app saves a
// generation's chunks of 16 tokens:
//  - writing a passage as the app does (StoryStore::append, one transaction with
//    synchronous=FULL, the passage indexed in it), median of --appends, beside the
//    index's own work for the same passages (indexPassage alone, in a transaction of
//    its own) and its share;
//  - the migration's pass (indexPending over every passage of the story): per passage;
//  - a recall query at --queries points of the story (the terms of the 600 bytes
//    before each): the index's search (RecallStore::search), median and p95, beside the
//    brute-force substring scan of the same story (StoryStore::search, LIKE over every
//    passage) in the same run; and the whole selectRecall (terms, search, excerpts,
//    their tokens with baton-mini's tokenizer) given the path.
//   bench_recall [--dir DIR] [--words 500000] [--appends 300] [--queries 200]
#include "bench_util.h"

#include "connection.h"
#include "recall_index.h"
#include "statement.h"
#include "transaction.h"

#include <baton/engine/tokenizer.h>
#include <baton/storage/database.h>
#include <baton/storage/recall_store.h>
#include <baton/storage/story_store.h>
#include <baton/story/recall.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace baton;
using namespace baton::bench;

namespace {

template <typename R>
void die(const R& r, const char* what) {
    if (!r.ok()) {
        std::fprintf(stderr, "error: %s\n", what);
        std::exit(1);
    }
}

// Passages of about 12 words each, `words` words in all.
std::vector<std::string> passagesOf(const std::string& file, size_t words) {
    std::ifstream in(file);
    if (!in) {
        std::fprintf(stderr, "error: cannot read %s\n", file.c_str());
        std::exit(1);
    }
    std::vector<std::string> out;
    std::string word, piece;
    size_t n = 0, inPiece = 0;
    while (n < words) {
        if (!(in >> word)) { // a longer story than the book: it goes round again
            in.clear();
            in.seekg(0);
            if (!(in >> word))
                break;
        }
        piece += word + " ";
        ++n;
        if (++inPiece == 12) {
            out.push_back(std::move(piece));
            piece.clear();
            inPiece = 0;
        }
    }
    if (!piece.empty())
        out.push_back(piece);
    return out;
}

} // namespace

int main(int argc, char** argv) {
    const std::string dir =
        arg(argc, argv, "dir", std::filesystem::temp_directory_path() / "baton-bench-recall");
    const size_t words = std::stoul(arg(argc, argv, "words", "500000"));
    const int appends = std::stoi(arg(argc, argv, "appends", "300"));
    const int queries = std::stoi(arg(argc, argv, "queries", "200"));
    const std::string book =
        arg(argc, argv, "text", BATON_SHARED_DIR "/corpus/books/kjv-bible.txt");
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto tokenizer = engine::loadTokenizer(BATON_SOURCE_DIR "/resources/models/baton-mini");
    die(tokenizer, "the bundled baton-mini tokenizer");

    const auto passages = passagesOf(book, words);
    auto opened = storage::Database::open(dir + "/recall.db");
    die(opened, "open");
    storage::Database& db = **opened;
    storage::Story s;
    s.title = "A long story";
    const int64_t story = *db.stories().create(s);
    // The story, a thousand passages a transaction (each passage indexed as it is added).
    auto t0 = Clock::now();
    for (size_t i = 0; i < passages.size(); i += 1000)
        die(db.transaction([&]() -> storage::Result<void> {
            for (size_t j = i; j < std::min(passages.size(), i + 1000); ++j)
                if (auto r = db.stories().append(story, passages[j], storage::PassageAuthor::Model);
                    !r)
                    return r.error();
            return {};
        }),
            "build the story");
    report("recall", "build_story", secondsSince(t0), "s",
           "\"passages\": " + std::to_string(passages.size()) +
               ", \"words\": " + std::to_string(words));

    // Writing one passage as the app does, and the index's part of it.
    std::vector<double> append, index;
    auto& connection = storage::connectionOf(db);
    for (int i = 0; i < appends; ++i) {
        const std::string& text = passages[size_t(i) % passages.size()];
        auto a = Clock::now();
        auto id = db.stories().append(story, text, storage::PassageAuthor::Model);
        append.push_back(secondsSince(a) * 1e3);
        die(id, "append");
        auto b = Clock::now();
        {
            storage::Transaction t(connection);
            storage::indexPassage(connection, *id);
            t.commit();
        }
        index.push_back(secondsSince(b) * 1e3);
    }
    report("recall", "append_passage_median", median(append), "ms",
           "\"p95\": " + std::to_string(percentile(append, 0.95)));
    report("recall", "index_passage_median", median(index), "ms",
           "\"p95\": " + std::to_string(percentile(index, 0.95)) +
               ", \"share_of_append\": " + std::to_string(median(index) / median(append)));

    // The migration's pass over the whole story.
    connection.exec("INSERT INTO recall_pending (passage_id) SELECT id FROM passages");
    connection.exec("DELETE FROM passage_chunks");
    t0 = Clock::now();
    auto indexed = db.recall().indexPending();
    die(indexed, "index pending");
    const double pass = secondsSince(t0);
    report("recall", "index_pending_per_passage", pass / double(*indexed) * 1e3, "ms",
           "\"passages\": " + std::to_string(*indexed) + ", \"seconds\": " + std::to_string(pass));

    // Queries at points of the story.
    auto path = db.stories().currentPath(story);
    die(path, "path");
    std::string text;
    for (const auto& p : *path)
        text += p.text;
    std::mt19937 rng(7);
    std::vector<double> search, scan, select;
    size_t hits = 0;
    for (int q = 0; q < queries; ++q) {
        const size_t end = 600 + size_t(rng()) % (text.size() - 600);
        const std::string recent = text.substr(end - 600, 600);
        const auto terms = story::recallTerms(recent);
        auto a = Clock::now();
        auto found = db.recall().search(story, terms, 56);
        search.push_back(secondsSince(a) * 1e3);
        die(found, "search");
        hits += found->size();
        if (!terms.empty()) {
            auto b = Clock::now();
            // The brute force: every passage of the story read for the first term.
            storage::Statement like = connection.prepare(
                "SELECT count(*) FROM passages WHERE story_id = ?1 AND instr(text, ?2) > 0");
            like.bind(1, story).bind(2, terms.front());
            like.step();
            scan.push_back(secondsSince(b) * 1e3);
        }
        story::RecallSettings settings;
        auto c = Clock::now();
        auto chosen = story::selectRecall(db, story, *path, text.substr(0, end), settings, 1024,
                                          256, **tokenizer);
        select.push_back(secondsSince(c) * 1e3);
        die(chosen, "selectRecall");
    }
    report("recall", "search_median", median(search), "ms",
           "\"p95\": " + std::to_string(percentile(search, 0.95)) +
               ", \"mean_hits\": " + std::to_string(double(hits) / queries) +
               ", \"substring_scan_median_ms\": " + std::to_string(median(scan)) +
               ", \"search_over_scan\": " + std::to_string(median(search) / median(scan)));
    {
        std::vector<double> enc;
        for (int i = 0; i < 5; ++i) {
            auto e = Clock::now();
            (*tokenizer)
                ->encode(std::string_view(text).substr(text.size() -
                                                       std::min<size_t>(text.size(), 16384)));
            enc.push_back(secondsSince(e) * 1e3);
        }
        report("recall", "encode_16k_median", median(enc), "ms");
    }
    report("recall", "select_recall_median", median(select), "ms",
           "\"p95\": " + std::to_string(percentile(select, 0.95)) +
               ", \"window\": 1024, \"budget\": 256");
    if (arg(argc, argv, "keep", "0") == "0")
        std::filesystem::remove_all(dir);
    return 0;
}
