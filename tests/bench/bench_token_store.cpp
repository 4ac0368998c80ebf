// The token store (training/token_store.h) on the library, as a run uses it:
//  - build: the first prepare of a run, every work tokenized with GPT-2's tokenizer on
//    --threads threads, beside its floor measured in the same run: the same shards only
//    decompressed and read (on as many threads);
//  - reopen: a second prepare, every piece mapped and checked, beside reading the
//    pieces' bytes once (its bound);
//  - draw: the trainer's batches (BatchSource::next: B sequences of W windows of T
//    tokens, as tensors) for --seconds, beside copying the same number of tokens from
//    random places of the mapping into int64 (the work a batch cannot avoid).
//   bench_token_store [--corpus PATH] [--shards N] [--threads N] [--window 128
//                      --bptt-windows 20 --batch 8] [--seconds 3] [--out DIR]
//                     [--val-works tools/library/validation-works.txt]
// --corpus: a folder of shards (default ../shared/corpus/library; its first --shards,
// default all) or any corpus path. --out keeps the store (default: a temporary folder,
// removed at the end); a store already there is removed first. Also timed: the held-out
// check a run makes before its first step (the validation works against every training
// token). Exits with 3 when a share of a bound comes out above 1.
#include "bench_util.h"

#include "training/batches.h"
#include "training/held_out.h"
#include "training/token_store.h"
#include "util/files.h"

#include <baton/engine/books.h>

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace baton;
using namespace baton::bench;

namespace {

std::vector<std::string> firstShards(const std::string& folder, int count) {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(folder.c_str())) {
        while (dirent* e = ::readdir(d))
            if (engine::isLibraryShard(e->d_name))
                names.push_back(e->d_name);
        ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    if (count > 0 && int(names.size()) > count)
        names.resize(size_t(count));
    for (auto& n : names)
        n = engine::files::join(folder, n);
    return names;
}

// The floor of a build: every source read and decompressed, nothing tokenized.
double readOnlySeconds(const std::vector<engine::TokenSource>& sources, int threads,
                       uint64_t& textBytes) {
    std::atomic<size_t> next{0};
    std::atomic<uint64_t> bytes{0};
    const auto t0 = Clock::now();
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
        team.emplace_back([&] {
            for (size_t k; (k = next.fetch_add(1)) < sources.size();)
                (void)engine::readSourceDocuments(sources[k], false, [&](engine::Document&& d) {
                    bytes += d.text.size();
                    return true;
                });
        });
    for (auto& t : team)
        t.join();
    textBytes = bytes.load();
    return secondsSince(t0);
}

} // namespace

int main(int argc, char** argv) {
    const std::string shared = BATON_SHARED_DIR;
    const std::string corpus = arg(argc, argv, "corpus", shared + "/corpus/library");
    const int shards = std::stoi(arg(argc, argv, "shards", "0"));
    const int threads = std::stoi(arg(
        argc, argv, "threads", std::to_string(std::max(1u, std::thread::hardware_concurrency()))));
    const double seconds = std::stod(arg(argc, argv, "seconds", "3"));
    std::string out = arg(argc, argv, "out", "");
    const bool temporary = out.empty();
    if (temporary) {
        char tmpl[] = "/tmp/bench-token-store-XXXXXX";
        out = ::mkdtemp(tmpl);
    }
    engine::files::removeTree(engine::files::join(out, "data")); // the build is timed whole
    engine::TrainConfig c;
    c.outDir = out;
    c.corpus = engine::files::isDirectory(corpus) && !firstShards(corpus, 0).empty()
                   ? firstShards(corpus, shards)
                   : std::vector<std::string>{corpus};
    c.window = std::stoi(arg(argc, argv, "window", "128"));
    c.bpttWindows = std::stoi(arg(argc, argv, "bptt-windows", "20"));
    c.batchSize = std::stoi(arg(argc, argv, "batch", "8"));
    c.validationFraction = 0.01;
    if (const std::string works = arg(argc, argv, "val-works", ""); !works.empty()) {
        auto list = engine::readWorkList(works);
        if (!list) {
            std::fprintf(stderr, "error: %s\n", list.error().message.c_str());
            return 1;
        }
        c.validationWorks = std::move(*list);
    }
    auto tokenizer = engine::loadTokenizer(shared + "/tokenizers/gpt2");
    auto sources = engine::listTokenSources(c.corpus);
    if (!tokenizer || !sources) {
        std::fprintf(stderr, "error: %s\n",
                     (!tokenizer ? tokenizer.error() : sources.error()).message.c_str());
        return 1;
    }
    uint64_t sourceBytes = 0;
    for (const auto& s : *sources)
        sourceBytes += s.bytes;
    const std::string extra = "\"sources\": " + std::to_string(sources->size()) +
                              ", \"source_mb\": " + std::to_string(double(sourceBytes) / 1e6) +
                              ", \"threads\": " + std::to_string(threads);

    // The floor first, so that the build does not find the shards' pages cached when
    // the floor did not.
    uint64_t textBytes = 0;
    readOnlySeconds(*sources, threads, textBytes); // warms the page cache for both
    const double floorSeconds = readOnlySeconds(*sources, threads, textBytes);

    engine::BatchSource data;
    std::string summary;
    const auto t0 = Clock::now();
    if (auto r = data.prepare(c, *tokenizer, summary); !r) {
        std::fprintf(stderr, "error: %s\n", r.error().message.c_str());
        return 1;
    }
    const double buildSeconds = secondsSince(t0);
    std::fprintf(stderr, "%s\n", summary.c_str());

    // The pieces' bytes, each mapped and read once (summed) on as many threads: the
    // bound of a reopen, which maps them and hashes every byte.
    std::vector<std::string> pieceFiles;
    const std::string folder = engine::files::join(out, "data");
    if (DIR* d = ::opendir(folder.c_str())) {
        while (dirent* e = ::readdir(d))
            if (std::string(e->d_name).rfind("piece-", 0) == 0)
                pieceFiles.push_back(engine::files::join(folder, e->d_name));
        ::closedir(d);
    }
    std::atomic<uint64_t> storeBytes{0}, checksum{0};
    const auto r0 = Clock::now();
    {
        std::atomic<size_t> nextPiece{0};
        std::vector<std::thread> team;
        for (int t = 0; t < threads; ++t)
            team.emplace_back([&] {
                for (size_t k; (k = nextPiece.fetch_add(1)) < pieceFiles.size();) {
                    const int fd = ::open(pieceFiles[k].c_str(), O_RDONLY);
                    struct stat st {};
                    if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size < 8) {
                        if (fd >= 0)
                            ::close(fd);
                        continue;
                    }
                    const size_t n = size_t(st.st_size);
                    void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);
                    ::close(fd);
                    if (p == MAP_FAILED)
                        continue;
                    const auto* words = static_cast<const uint64_t*>(p);
                    uint64_t sum = 0;
                    for (size_t i = 0; i < n / 8; ++i)
                        sum += words[i];
                    ::munmap(p, n);
                    checksum += sum;
                    storeBytes += n;
                }
            });
        for (auto& t : team)
            t.join();
    }
    const double readSeconds = secondsSince(r0);
    // The store alone, mapped and checked again (a run's second start).
    engine::TokenStoreOptions storeOptions;
    storeOptions.folder = engine::files::join(out, "data");
    storeOptions.unwrap = c.unwrap;
    const auto t1 = Clock::now();
    auto reopened = engine::buildTokenStore(*sources, **tokenizer, storeOptions);
    if (!reopened) {
        std::fprintf(stderr, "error: %s\n", reopened.error().message.c_str());
        return 1;
    }
    const double reopenSeconds = secondsSince(t1);

    // The held-out check a run makes before its first step, over the whole store.
    engine::BatchSource again;
    if (auto r = again.prepare(c, *tokenizer, summary); !r) {
        std::fprintf(stderr, "error: %s\n", r.error().message.c_str());
        return 1;
    }
    const auto h0 = Clock::now();
    const engine::Overlap overlap = engine::longestOverlap(again.training(), {&again.validation()});
    const double checkSeconds = secondsSince(h0);

    // Drawing batches, then the copy bound over as many tokens.
    again.startEpoch(0);
    int64_t epoch = 0, position = 0, drawn = 0;
    const int64_t perBatch = int64_t(c.bpttWindows) * c.batchSize * c.window;
    const auto d0 = Clock::now();
    while (secondsSince(d0) < seconds) {
        const auto batch = again.next(epoch, position);
        drawn += batch.inputs.numel();
    }
    const double drawSeconds = secondsSince(d0);
    const auto& docs = again.validation().docs; // any mapped tokens serve the bound
    std::vector<const int32_t*> starts;
    std::mt19937_64 rng(1);
    for (const auto& doc : docs)
        if (doc.size() > size_t(perBatch / c.batchSize))
            starts.push_back(doc.data());
    double copySeconds = 0;
    if (!starts.empty()) {
        const size_t seq = size_t(perBatch / c.batchSize);
        std::vector<int64_t> dst(static_cast<size_t>(perBatch));
        const auto k0 = Clock::now();
        int64_t copied = 0;
        while (copied < drawn) {
            for (int64_t b = 0; b < c.batchSize; ++b) {
                const int32_t* from = starts[rng() % starts.size()];
                std::copy(from, from + seq, dst.begin() + long(size_t(b) * seq));
            }
            copied += perBatch;
        }
        copySeconds = secondsSince(k0) * double(drawn) / double(copied);
    }

    bool wrong = false;
    const auto share = [&](double bound, double measured) {
        const double s = measured > 0 ? bound / measured : 0;
        wrong = wrong || s > 1.0;
        return std::to_string(s);
    };
    const double tokens = double(again.training().tokenCount() + again.validation().tokenCount());
    report("token_store", "build_seconds", buildSeconds, "s",
           extra + ", \"text_mb\": " + std::to_string(double(textBytes) / 1e6) +
               ", \"tokens\": " + std::to_string(int64_t(tokens)) +
               ", \"tokens_per_second\": " + std::to_string(tokens / buildSeconds) +
               ", \"floor_read_only_seconds\": " + std::to_string(floorSeconds) +
               ", \"share_of_floor\": " + share(floorSeconds, buildSeconds));
    report("token_store", "reopen_seconds", reopenSeconds, "s",
           extra + ", \"store_mb\": " + std::to_string(double(storeBytes.load()) / 1e6) +
               ", \"bound_read_once_seconds\": " + std::to_string(readSeconds) +
               ", \"share_of_bound\": " + share(readSeconds, reopenSeconds));
    report("token_store", "held_out_check_seconds", checkSeconds, "s",
           extra + ", \"held_out_tokens\": " + std::to_string(again.validation().tokenCount()) +
               ", \"longest_stretch\": " + std::to_string(overlap.tokens) +
               ", \"tokens_per_second\": " +
               std::to_string(double(again.training().tokenCount()) / checkSeconds));
    report("token_store", "draw_tokens_per_second", double(drawn) / drawSeconds, "tokens/s",
           extra + ", \"batch\": " + std::to_string(c.batchSize) + ", \"bptt_windows\": " +
               std::to_string(c.bpttWindows) + ", \"window\": " + std::to_string(c.window) +
               ", \"bound_copy_tokens_per_second\": " +
               std::to_string(copySeconds > 0 ? double(drawn) / copySeconds : 0) +
               ", \"share_of_bound\": " + share(copySeconds, drawSeconds));
    if (temporary)
        engine::files::removeTree(out);
    return wrong ? 3 : 0;
}
