// Pulling a repository into a model folder: the partial folder, its lock, each file
// fetched (resumed with ranges, retried), checked and named, the folder renamed last.
#include "baton/hub/hub.h"

#include "digest.h"
#include "http.h"
#include "hub_answers.h"

#include <baton/common/json.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

namespace baton::hub {

namespace fs = std::filesystem;

namespace {

// Where a pull stands: the partial folder, and the bytes there and still to come.
struct PullState {
    const HubOptions* options = nullptr;
    const RepoRef* ref = nullptr;
    std::string commit;
    std::string partial;
    int64_t total = 0, doneBefore = 0, fetched = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    const std::function<void(const PullProgress&)>* progress = nullptr;
    const engine::CancelToken* cancel = nullptr;

    void report(const std::string& file, int64_t current) const {
        if (!progress || !*progress)
            return;
        PullProgress p;
        p.file = file;
        p.total = total;
        p.done = doneBefore + current;
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const int64_t thisTime = fetched + current;
        p.bytesPerSecond = seconds > 0 ? double(thisTime) / seconds : 0;
        p.secondsLeft =
            seconds >= 1 && p.bytesPerSecond > 0 ? double(total - p.done) / p.bytesPerSecond : -1;
        (*progress)(p);
    }
};

std::string expected(const RemoteFile& f) {
    return f.sha256.empty() ? f.gitSha1 : f.sha256;
}

std::string digestOf(const std::string& path, const RemoteFile& f,
                     const engine::CancelToken& cancel) {
    return fileDigest(path, f.sha256.empty() ? Digest::GitBlobSha1 : Digest::Sha256, f.size,
                      cancel);
}

int64_t sizeOf(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? int64_t(st.st_size) : -1;
}

// One attempt at fetching the rest of f into its .incomplete file.
Result<void> fetchOnce(PullState& s, const RemoteFile& f, const std::string& incomplete) {
    int64_t have = std::max<int64_t>(0, sizeOf(incomplete));
    if (have > f.size) {
        ::truncate(incomplete.c_str(), 0);
        have = 0;
    }
    const int fd = ::open(incomplete.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(HubErrorCode::WriteFailed, errnoText("cannot write " + incomplete, errno));
    if (have == f.size) { // all there (an empty file: now created)
        ::close(fd);
        return {};
    }
    bool tooLong = false;
    int writeErrno = 0;
    int64_t written = 0;
    HttpGet get;
    get.url = s.options->endpoint + "/" + s.ref->repo + "/resolve/" + s.commit + "/" +
              encode(f.name, true);
    get.headers = headersFor(*s.options);
    get.userAgent = s.options->userAgent;
    get.rangeFrom = have > 0 ? have : -1;
    std::string badRange;
    get.onResponse = [&](long status, const std::map<std::string, std::string>& headers) {
        if (status == 206) {
            const auto it = headers.find("content-range");
            const std::string want = "bytes " + std::to_string(have) + "-";
            if (it == headers.end() || it->second.rfind(want, 0) != 0) {
                badRange = it == headers.end() ? "none" : it->second;
                return false;
            }
            return true;
        }
        // The whole file again (the server ignored the range): start over.
        if (have > 0 && ::ftruncate(fd, 0) != 0) {
            writeErrno = errno;
            return false;
        }
        have = 0;
        return true;
    };
    get.sink = [&](const char* data, size_t n) {
        if (have + written + int64_t(n) > f.size) { // more than the hub lists: never kept
            tooLong = true;
            return false;
        }
        while (n > 0) {
            const ssize_t w = ::write(fd, data, n);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                writeErrno = errno;
                return false;
            }
            data += w;
            n -= size_t(w);
            written += w;
        }
        s.report(f.name, have + written);
        return true;
    };
    const HttpResponse r = httpGet(get, *s.cancel);
    const bool synced = ::fsync(fd) == 0;
    const int syncErrno = errno;
    ::close(fd);
    s.fetched += written;
    if (writeErrno != 0)
        return fail(HubErrorCode::WriteFailed, errnoText("cannot write " + incomplete, writeErrno));
    if (tooLong) {
        ::truncate(incomplete.c_str(), 0);
        return fail(HubErrorCode::BadResponse, "fetching " + f.name +
                                                   ": the answer is longer than the " +
                                                   std::to_string(f.size) + " bytes the hub lists");
    }
    if (!badRange.empty())
        return fail(HubErrorCode::BadResponse, "fetching " + f.name +
                                                   ": the answer's range is not the one asked (" +
                                                   badRange + ")");
    if (r.status == 416) { // the range is past the end: the partial file is wrong
        ::truncate(incomplete.c_str(), 0);
        return fail(HubErrorCode::Network, "fetching " + f.name + ": the range was refused");
    }
    if (!r.error.empty() || r.cancelled || (r.status != 200 && r.status != 206))
        return answerError(r, "fetching " + f.name);
    if (!synced)
        return fail(HubErrorCode::WriteFailed, errnoText("cannot write " + incomplete, syncErrno));
    if (sizeOf(incomplete) != f.size)
        return fail(HubErrorCode::Network, "fetching " + f.name + ": the transfer ended early");
    return {};
}

// Fetches f into the partial folder, resuming, with a few more tries when the network
// fails; checks it and gives it its name.
Result<void> fetchFile(PullState& s, const RemoteFile& f) {
    const std::string target = s.partial + "/" + f.name;
    const std::string incomplete = target + ".incomplete";
    if (sizeOf(target) == f.size && digestOf(target, f, *s.cancel) == expected(f))
        return {};
    std::remove(target.c_str());
    for (int attempt = 1;; ++attempt) {
        auto r = fetchOnce(s, f, incomplete);
        if (r.ok())
            break;
        if (r.error().code != HubErrorCode::Network || attempt == 4)
            return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(250 * attempt));
    }
    const std::string digest = digestOf(incomplete, f, *s.cancel);
    if (s.cancel->cancelled())
        return fail(HubErrorCode::Cancelled, "cancelled");
    if (digest != expected(f)) {
        std::remove(incomplete.c_str()); // wrong bytes are never resumed
        return fail(HubErrorCode::Checksum, f.name +
                                                " does not match the checksum the hub lists (" +
                                                (f.sha256.empty() ? "git blob " : "sha256 ") +
                                                expected(f) + "): it was deleted; pull again");
    }
    if (std::rename(incomplete.c_str(), target.c_str()) != 0)
        return fail(HubErrorCode::WriteFailed, errnoText("cannot rename " + incomplete, errno));
    return {};
}

// A file of Baton's own making (at most 1 MiB read).
std::string readSmallFile(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return {};
    std::string text(1 << 20, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), f));
    std::fclose(f);
    return text;
}

bool writeSmallFile(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return false;
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    return std::fclose(f) == 0 && ok;
}

constexpr const char* kSourceFile = "hub-source.json";

// An exclusive lock on a file for as long as it lives (flock: released when the
// process ends, however it ends).
class FolderLock {
public:
    explicit FolderLock(const std::string& path)
        : m_fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
        m_locked = m_fd >= 0 && ::flock(m_fd, LOCK_EX | LOCK_NB) == 0;
    }
    ~FolderLock() {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;
    bool opened() const { return m_fd >= 0; }
    bool locked() const { return m_locked; }

private:
    int m_fd = -1;
    bool m_locked = false;
};

} // namespace

Result<PullResult> pull(const HubOptions& options, const RepoRef& ref,
                        const std::string& destination,
                        const std::function<void(const PullProgress&)>& progress,
                        const engine::CancelToken& cancel) {
    auto listing = listRepo(options, ref, cancel);
    if (!listing)
        return listing.error();
    auto files = gpt2Files(*listing);
    if (!files)
        return files.error();
    PullResult out;
    out.commit = listing->commit;
    out.folder = destination + "/" + folderName(ref);
    for (const RemoteFile& f : *files)
        out.bytes += f.size;

    std::error_code ec;
    fs::create_directories(destination, ec);
    if (ec)
        return fail(HubErrorCode::WriteFailed,
                    "cannot create " + destination + ": " + ec.message());
    // An earlier pull of this repository: done when it holds this commit (asked again
    // once the lock is held: another pull may have finished meanwhile).
    auto earlier = [&]() -> std::optional<Result<PullResult>> {
        if (!fs::exists(out.folder, ec) && !ec)
            return std::nullopt;
        auto source = json::parse(readSmallFile(out.folder + "/" + kSourceFile), nullptr);
        if (!source || json::stringOrEmpty(*source, "repo") != ref.repo)
            return Result<PullResult>(
                fail(HubErrorCode::AlreadyExists, out.folder + " exists and is not a download of " +
                                                      ref.repo +
                                                      ": it is left as it is (choose another "
                                                      "destination)"));
        if (json::stringOrEmpty(*source, "commit") == out.commit) {
            out.alreadyThere = true;
            return Result<PullResult>(out);
        }
        return Result<PullResult>(fail(HubErrorCode::AlreadyExists,
                                       out.folder + " holds another revision of " + ref.repo +
                                           " (commit " + json::stringOrEmpty(*source, "commit") +
                                           "): remove it, or pull into another destination"));
    };
    if (auto done = earlier())
        return *done;

    PullState s;
    s.options = &options;
    s.ref = &ref;
    s.commit = listing->commit;
    s.partial = destination + "/." + folderName(ref) + ".partial";
    s.total = out.bytes;
    s.progress = &progress;
    s.cancel = &cancel;
    FolderLock lock(destination + "/." + folderName(ref) + ".lock");
    if (!lock.opened())
        return fail(HubErrorCode::WriteFailed, errnoText("cannot write in " + destination, errno));
    if (!lock.locked())
        return fail(HubErrorCode::Busy, ref.repo + " is being downloaded into " + destination +
                                            " by another process; wait for it to finish");
    if (auto done = earlier())
        return *done;
    // A partial download of another commit is not resumed.
    const std::string commitFile = s.partial + "/.commit";
    if (fs::exists(s.partial, ec) && readSmallFile(commitFile) != s.commit) {
        fs::remove_all(s.partial, ec);
        if (ec)
            return fail(HubErrorCode::WriteFailed, "cannot remove the old partial download " +
                                                       s.partial + ": " + ec.message());
    }
    fs::create_directories(s.partial, ec);
    if (ec || !writeSmallFile(commitFile, s.commit))
        return fail(HubErrorCode::WriteFailed, "cannot write in " + destination);
    for (const RemoteFile& f : *files) {
        if (cancel.cancelled())
            return fail(HubErrorCode::Cancelled, "cancelled");
        if (auto r = fetchFile(s, f); !r)
            return r.error();
        s.doneBefore += f.size;
        s.report(f.name, 0);
    }
    nlohmann::ordered_json record = {{"repo", ref.repo},
                                     {"revision", ref.revision},
                                     {"commit", s.commit},
                                     {"endpoint", options.endpoint}};
    for (const RemoteFile& f : *files)
        record["files"].push_back({{"name", f.name}, {"size", f.size}, {"checksum", expected(f)}});
    if (!writeSmallFile(s.partial + "/" + kSourceFile,
                        record.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                            "\n"))
        return fail(HubErrorCode::WriteFailed, "cannot write in " + s.partial);
    fs::remove(commitFile, ec);
    if (std::rename(s.partial.c_str(), out.folder.c_str()) != 0)
        return fail(HubErrorCode::WriteFailed, errnoText("cannot rename " + s.partial, errno));
    out.downloaded = s.fetched;
    return out;
}
} // namespace baton::hub
