#include "training/token_store.h"

#include "util/files.h"
#include "util/hash.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <iterator>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace baton::engine {

namespace {

constexpr char kMagic[8] = {'B', 'A', 'T', 'O', 'N', 'T', 'O', 'K'};
constexpr uint64_t kVersion = 1;
constexpr size_t kTrailerBytes = 64;

struct Trailer {
    char magic[8];
    uint64_t version, docs, tokens, nameBytes, checksum, identity, reserved;
};
static_assert(sizeof(Trailer) == kTrailerBytes, "the trailer is 64 bytes");

struct Piece {
    std::vector<const TokenSource*> sources;
    uint64_t bytes = 0;
    uint64_t identity = 0;
    std::string path;
};

// A mapped piece file; unmapped when the last corpus that points into it goes.
struct Mapping {
    void* base = nullptr;
    size_t size = 0;
    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping() {
        if (base)
            ::munmap(base, size);
    }
};

struct MappedPieces {
    std::vector<std::unique_ptr<Mapping>> maps;
};

// A source's bytes as a ContentHash digest: its part of a piece's identity. Not its
// modification time, which a copy, an unpacked archive or a fresh checkout changes.
Result<std::string> sourceDigest(const TokenSource& s) {
    const int fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(ErrorCode::FileUnreadable, "cannot read " + s.path);
    ContentHash h;
    std::vector<char> buffer(size_t(1) << 20);
    ssize_t n = 0;
    uint64_t total = 0;
    while ((n = ::read(fd, buffer.data(), buffer.size())) > 0) {
        h.update(buffer.data(), size_t(n));
        total += uint64_t(n);
    }
    ::close(fd);
    if (n < 0)
        return makeError(ErrorCode::FileUnreadable, "cannot read " + s.path);
    return h.hex() + " " + std::to_string(total);
}

Result<std::vector<Piece>> planPieces(const std::vector<TokenSource>& sources,
                                      const Tokenizer& tokenizer, const TokenStoreOptions& o) {
    std::vector<Piece> pieces;
    for (const auto& s : sources) {
        const bool join = !s.shard && !pieces.empty() && !pieces.back().sources.front()->shard &&
                          pieces.back().bytes + s.bytes <= o.pieceBytes;
        if (!join)
            pieces.emplace_back();
        pieces.back().sources.push_back(&s);
        pieces.back().bytes += s.bytes;
    }
    for (auto& p : pieces) {
        ContentHash h;
        h.update("baton token store " + std::to_string(kVersion) + "\n");
        h.update(tokenizer.identity());
        h.update(o.unwrap ? "\nunwrap\n" : "\nas is\n");
        for (const auto* s : p.sources) {
            const auto digest = sourceDigest(*s);
            if (!digest)
                return digest.error();
            h.update(s->path + "\n" + *digest + "\n");
        }
        p.identity = h.digest();
        p.path = files::join(o.folder, "piece-" + h.hex() + ".tok");
    }
    return pieces;
}

// Maps a finished piece and checks it whole; an error when it is missing, damaged or not
// the piece asked for (then it is built again).
Result<std::unique_ptr<Mapping>> mapPiece(const Piece& piece, TokenizedCorpus& out) {
    const int fd = ::open(piece.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(ErrorCode::FileNotFound, piece.path + " is not built");
    struct stat st {};
    const bool sized = ::fstat(fd, &st) == 0 && size_t(st.st_size) >= kTrailerBytes;
    auto map = std::make_unique<Mapping>();
    if (sized) {
        map->size = size_t(st.st_size);
        void* p = ::mmap(nullptr, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
        map->base = p == MAP_FAILED ? nullptr : p;
    }
    ::close(fd);
    const auto damaged = [&](const std::string& why) {
        return makeError(ErrorCode::TruncatedFile, piece.path + ": " + why);
    };
    if (!map->base)
        return damaged("too short to be a token store piece");
    const char* bytes = static_cast<const char*>(map->base);
    Trailer t{};
    std::memcpy(&t, bytes + map->size - kTrailerBytes, kTrailerBytes);
    const uint64_t body = map->size - kTrailerBytes;
    if (std::memcmp(t.magic, kMagic, 8) != 0 || t.version != kVersion ||
        t.identity != piece.identity)
        return damaged("not this store's piece");
    if (t.docs > body / 8 || t.tokens > body / 4 || t.nameBytes > body ||
        t.tokens * 4 + (t.docs + 1) * 8 + t.nameBytes != body)
        return damaged("its sizes do not add up");
    ContentHash h;
    h.update(bytes, body);
    if (h.digest() != t.checksum)
        return damaged("its checksum does not match");
    const auto* ids = reinterpret_cast<const int32_t*>(bytes);
    const char* offsetBytes = bytes + t.tokens * 4;
    const char* names = offsetBytes + (t.docs + 1) * 8;
    std::vector<uint64_t> offsets(t.docs + 1);
    std::memcpy(offsets.data(), offsetBytes, offsets.size() * 8);
    if (offsets.front() != 0 || offsets.back() != t.tokens ||
        !std::is_sorted(offsets.begin(), offsets.end()))
        return damaged("its document offsets are out of order");
    size_t pos = 0;
    for (uint64_t d = 0; d < t.docs; ++d) {
        const void* nl = std::memchr(names + pos, '\n', t.nameBytes - pos);
        if (!nl)
            return damaged("its document names are cut short");
        const size_t end = size_t(static_cast<const char*>(nl) - names);
        out.names.emplace_back(names + pos, end - pos);
        out.docs.push_back({ids + offsets[d], size_t(offsets[d + 1] - offsets[d])});
        pos = end + 1;
    }
    return map;
}

// Removes what a build killed part-way left: piece-*.tok.tmp-PID files of a process that
// is gone, untouched for an hour (a live build on another machine sharing the folder
// writes to its file continually).
void removeStaleTemporaries(const std::string& folder) {
    DIR* dir = ::opendir(folder.c_str());
    if (!dir)
        return;
    const time_t now = ::time(nullptr);
    while (dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name;
        const size_t tmp = name.rfind(".tok.tmp-");
        if (name.rfind("piece-", 0) != 0 || tmp == std::string::npos)
            continue;
        const std::string pid = name.substr(tmp + 9);
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos ||
            pid.size() > 9)
            continue;
        const std::string path = files::join(folder, name);
        struct stat st {};
        const bool gone = ::kill(pid_t(std::stol(pid)), 0) != 0 && errno == ESRCH;
        if (gone && ::stat(path.c_str(), &st) == 0 && now - st.st_mtime > 3600)
            ::unlink(path.c_str());
    }
    ::closedir(dir);
}

// Tokenizes one piece's documents into its file; `done` counts the source bytes read.
Result<void> buildPiece(const Piece& piece, const Tokenizer& tokenizer, const TokenStoreOptions& o,
                        std::atomic<uint64_t>& done, const CancelToken& stop) {
    files::AtomicWriter out;
    if (auto r = out.open(piece.path); !r)
        return r.error();
    ContentHash h;
    std::vector<uint64_t> offsets{0};
    std::string names;
    Result<void> failed;
    const auto write = [&](const void* data, size_t size) {
        h.update(data, size);
        return out.write(data, size);
    };
    for (const TokenSource* s : piece.sources) {
        uint64_t counted = 0;
        const auto read = [&](double share) {
            const uint64_t now = uint64_t(share * double(s->bytes));
            if (now > counted) {
                done += now - counted;
                counted = now;
            }
        };
        auto r = readSourceDocuments(
            *s, o.unwrap,
            [&](Document&& d) {
                const auto ids = tokenizer.encode(d.text);
                if (auto w = write(ids.data(), ids.size() * 4); !w) {
                    failed = w.error();
                    return false;
                }
                offsets.push_back(offsets.back() + ids.size());
                for (const char c : d.name) // one line each: a '\n' in a name is a space
                    names += c == '\n' ? ' ' : c;
                names += '\n';
                return !stop.cancelled();
            },
            stop, read);
        if (!r)
            return r.error();
        if (!failed)
            return failed;
        if (stop.cancelled())
            return makeError(ErrorCode::Cancelled, "cancelled");
        read(1.0);
    }
    if (auto w = write(offsets.data(), offsets.size() * 8); !w)
        return w;
    if (auto w = write(names.data(), names.size()); !w)
        return w;
    Trailer t{};
    std::memcpy(t.magic, kMagic, 8);
    t.version = kVersion;
    t.docs = offsets.size() - 1;
    t.tokens = offsets.back();
    t.nameBytes = names.size();
    t.checksum = h.digest();
    t.identity = piece.identity;
    if (auto w = out.write(&t, sizeof t); !w)
        return w;
    return out.commit();
}

} // namespace

Result<TokenizedCorpus> buildTokenStore(const std::vector<TokenSource>& sources,
                                        const Tokenizer& tokenizer,
                                        const TokenStoreOptions& options,
                                        const JobProgress& progress, const CancelToken& cancel,
                                        TokenStoreStats* stats) {
    TokenStoreStats local;
    TokenStoreStats& st = stats ? *stats : local;
    st = {};
    if (sources.empty())
        return makeError(ErrorCode::InvalidArgument, "the corpus is empty");
    if (!files::makeDirectories(options.folder))
        return makeError(ErrorCode::FileWriteFailed, "cannot make " + options.folder);
    const auto planned = planPieces(sources, tokenizer, options);
    if (!planned)
        return planned.error();
    const std::vector<Piece>& pieces = *planned;
    for (const auto& s : sources)
        st.sourceBytes += s.bytes;

    // Map and check every piece already built (each is read whole to check it: on all
    // cores); those that do not map whole are built.
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t team = options.threads > 0 ? size_t(options.threads) : size_t(cores);
    struct Mapped {
        std::unique_ptr<Mapping> map;
        TokenizedCorpus docs;
        bool damaged = false;
    };
    std::vector<Mapped> mapped(pieces.size());
    const auto mapAll = [&](const std::vector<size_t>& which) {
        std::atomic<size_t> next{0};
        std::vector<std::thread> mappers;
        for (size_t t = 0; t < std::min(team, which.size()); ++t)
            mappers.emplace_back([&] {
                for (size_t k; (k = next.fetch_add(1)) < which.size();) {
                    Mapped& m = mapped[which[k]];
                    m.docs = {};
                    auto r = mapPiece(pieces[which[k]], m.docs);
                    m.damaged = !r && r.error().code == ErrorCode::TruncatedFile;
                    if (r)
                        m.map = std::move(*r);
                    else
                        m.docs = {};
                }
            });
        for (auto& t : mappers)
            t.join();
    };
    std::vector<size_t> all(pieces.size());
    for (size_t i = 0; i < all.size(); ++i)
        all[i] = i;
    mapAll(all);
    std::vector<size_t> missing;
    uint64_t reusedBytes = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
        if (mapped[i].map) {
            ++st.piecesReused;
            reusedBytes += pieces[i].bytes;
            continue;
        }
        st.piecesDamaged += mapped[i].damaged ? 1 : 0;
        missing.push_back(i);
    }

    if (cancel.cancelled() && !missing.empty())
        return makeError(ErrorCode::Cancelled, "tokenizing cancelled");
    // Build them on a few threads; the calling thread reports progress.
    // A piece listed twice (the same files named twice) is built once.
    std::vector<size_t> build;
    for (size_t i : missing)
        if (std::none_of(build.begin(), build.end(),
                         [&](size_t j) { return pieces[j].path == pieces[i].path; }))
            build.push_back(i);
    removeStaleTemporaries(options.folder);
    const size_t threads = std::min(build.size(), team);
    std::atomic<size_t> nextPiece{0};
    std::atomic<uint64_t> doneBytes{reusedBytes};
    std::atomic<int> built{0};
    CancelToken stop; // the caller's cancel, or the first failure
    std::mutex mutex;
    std::condition_variable finished;
    size_t running = threads;
    Error firstError{ErrorCode::Internal, ""};
    bool failed = false;
    std::vector<std::thread> workers;
    for (size_t w = 0; w < threads; ++w)
        workers.emplace_back([&] {
            for (;;) {
                const size_t k = nextPiece.fetch_add(1);
                if (k >= build.size() || stop.cancelled() || cancel.cancelled())
                    break;
                auto r = buildPiece(pieces[build[k]], tokenizer, options, doneBytes, stop);
                if (!r) {
                    std::lock_guard<std::mutex> lock(mutex);
                    if (!failed &&
                        !(r.error().code == ErrorCode::Cancelled && !cancel.cancelled())) {
                        failed = true;
                        firstError = r.error();
                    }
                    stop.cancel();
                    break;
                }
                ++built;
            }
            std::lock_guard<std::mutex> lock(mutex);
            --running;
            finished.notify_all();
        });
    {
        std::unique_lock<std::mutex> lock(mutex);
        while (running > 0) {
            finished.wait_for(lock, std::chrono::milliseconds(250));
            if (cancel.cancelled())
                stop.cancel();
            if (progress && running > 0) {
                const double share =
                    st.sourceBytes ? double(doneBytes.load()) / double(st.sourceBytes) : 1.0;
                lock.unlock();
                progress(std::min(1.0, share),
                         "tokenizing: " + std::to_string(built.load() + st.piecesReused) + " of " +
                             std::to_string(pieces.size()) + " pieces done");
                lock.lock();
            }
        }
    }
    for (auto& w : workers)
        w.join();
    st.piecesBuilt = built.load();
    if (failed)
        return firstError;
    if (cancel.cancelled() && !missing.empty())
        return makeError(ErrorCode::Cancelled, "tokenizing cancelled; " +
                                                   std::to_string(st.piecesBuilt) +
                                                   " pieces kept for the next run");

    // Map the pieces just built; then every piece's documents, in source order.
    mapAll(missing);
    TokenizedCorpus out;
    auto held = std::make_shared<MappedPieces>();
    for (size_t i = 0; i < pieces.size(); ++i) {
        if (!mapped[i].map)
            return makeError(ErrorCode::FileUnreadable,
                             pieces[i].path + " cannot be read back after it was written");
        auto& docs = mapped[i].docs;
        std::move(docs.names.begin(), docs.names.end(), std::back_inserter(out.names));
        out.docs.insert(out.docs.end(), docs.docs.begin(), docs.docs.end());
        held->maps.push_back(std::move(mapped[i].map));
    }
    out.storage = std::move(held);
    if (progress)
        progress(1.0, "tokenized: " + std::to_string(out.docs.size()) + " documents");
    return out;
}

} // namespace baton::engine
