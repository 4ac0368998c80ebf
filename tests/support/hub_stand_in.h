// A stand-in for the Hugging Face Hub on loopback, serving the URLs, headers and API
// JSON the real hub serves (as huggingface_hub v0.30.2 reads them: hub/README.md):
//   GET /api/models/{repo}/revision/{rev}?blobs=true  -> {"id", "sha", "private",
//       "gated", "disabled", "siblings": [{"rfilename", "blobId", "size", "lfs"?}]}
//   GET /{repo}/resolve/{rev}/{file}  -> a small file at once (ETag: its git blob id,
//       X-Repo-Commit), an LFS file as a 302 to a second server standing in for the CDN
//       (X-Linked-Etag: its sha256, X-Linked-Size); Range requests answered with 206.
// Errors as the hub sends them: X-Error-Code RepoNotFound (401 without a token),
// RevisionNotFound and EntryNotFound (404), GatedRepo (401 without a token, 403 with
// one that has no access), with X-Error-Message. Faults on demand: a transfer cut off
// after some bytes, wrong bytes for a file. Every request is recorded.
#pragma once

#include <httplib.h>
#include <openssl/evp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace baton::test {

class HubStandIn {
public:
    struct File {
        std::string bytes;
        bool lfs = false;
    };
    struct Repo {
        std::string commit = std::string(40, 'c');
        std::map<std::string, File> files;
        bool gated = false; // needs the token "hf_good"
    };
    struct Seen {
        std::string path, range, authorization;
        bool cdn = false;
    };

    HubStandIn() {
        m_port = m_hub.bind_to_any_port("127.0.0.1");
        m_cdnPort = m_cdn.bind_to_any_port("127.0.0.1");
        m_hub.Get(R"(/api/models/(.+)/revision/([^/]+))",
                  [this](const httplib::Request& q, httplib::Response& r) { listing(q, r); });
        m_hub.Get(R"(/(.+)/resolve/([^/]+)/(.+))",
                  [this](const httplib::Request& q, httplib::Response& r) { resolve(q, r); });
        m_cdn.Get(R"(/blobs/([0-9a-f]{64}))",
                  [this](const httplib::Request& q, httplib::Response& r) { blob(q, r); });
        m_hubThread = std::thread([this] { m_hub.listen_after_bind(); });
        m_cdnThread = std::thread([this] { m_cdn.listen_after_bind(); });
    }
    ~HubStandIn() {
        m_hub.stop();
        m_cdn.stop();
        m_hubThread.join();
        m_cdnThread.join();
    }

    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    void addRepo(const std::string& id, Repo repo) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_repos[id] = std::move(repo);
    }
    // The next transfer of this file stops after `bytes` bytes (the connection closes).
    void cutOnce(const std::string& file, size_t bytes) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_cut[file] = bytes;
    }
    // This file's transfers carry other bytes than the listing's checksum says.
    void corrupt(const std::string& file) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_corrupt[file] = true;
    }
    // Each 4 kB of a transfer waits this long (a slow connection).
    void setChunkDelay(int milliseconds) { m_delayMs = milliseconds; }
    // No more faults.
    void clearFaults() {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_cut.clear();
        m_corrupt.clear();
        m_delayMs = 0;
    }
    std::vector<Seen> seen() const {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_seen;
    }
    void clearSeen() {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_seen.clear();
    }

    static std::string hexDigest(const EVP_MD* md, const std::string& prefix,
                                 const std::string& bytes) {
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int n = 0;
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        EVP_DigestInit_ex(ctx, md, nullptr);
        EVP_DigestUpdate(ctx, prefix.data(), prefix.size());
        EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
        EVP_DigestFinal_ex(ctx, out, &n);
        EVP_MD_CTX_free(ctx);
        std::string s;
        for (unsigned int i = 0; i < n; ++i) {
            s += "0123456789abcdef"[out[i] >> 4];
            s += "0123456789abcdef"[out[i] & 15];
        }
        return s;
    }
    static std::string sha256(const std::string& bytes) {
        return hexDigest(EVP_sha256(), {}, bytes);
    }
    static std::string gitBlob(const std::string& bytes) {
        return hexDigest(EVP_sha1(), "blob " + std::to_string(bytes.size()) + std::string(1, '\0'),
                         bytes);
    }

private:
    void record(const httplib::Request& q, bool cdn) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_seen.push_back(
            {q.path, q.get_header_value("Range"), q.get_header_value("Authorization"), cdn});
    }
    // The hub's refusals; nullptr when the request may see the repository.
    const Repo* access(const std::string& id, const httplib::Request& q, httplib::Response& r) {
        const auto it = m_repos.find(id);
        const std::string auth = q.get_header_value("Authorization");
        if (it == m_repos.end()) {
            r.status = auth.empty() ? 401 : 404;
            r.set_header("X-Error-Code", "RepoNotFound");
            r.set_header("X-Error-Message", "Repository not found");
            r.set_content(R"({"error":"Repository not found"})", "application/json");
            return nullptr;
        }
        if (it->second.gated && auth != "Bearer hf_good") {
            r.status = auth.empty() ? 401 : 403;
            r.set_header("X-Error-Code", "GatedRepo");
            r.set_header("X-Error-Message",
                         auth.empty() ? "Access to model " + id +
                                            " is restricted. You must have access to it and be "
                                            "authenticated to access it. Please log in."
                                      : "Access to model " + id +
                                            " is restricted and you are not in the authorized "
                                            "list. Visit https://huggingface.co/" +
                                            id + " to ask for access.");
            r.set_content(R"({"error":"gated"})", "application/json");
            return nullptr;
        }
        return &it->second;
    }

    void listing(const httplib::Request& q, httplib::Response& r) {
        record(q, false);
        std::lock_guard<std::mutex> lock(m_mutex);
        const std::string id = q.matches[1];
        const Repo* repo = access(id, q, r);
        if (!repo)
            return;
        const std::string rev = q.matches[2];
        if (rev != "main" && rev != repo->commit) {
            r.status = 404;
            r.set_header("X-Error-Code", "RevisionNotFound");
            r.set_header("X-Error-Message", "Invalid rev id: " + rev);
            return;
        }
        std::string siblings;
        for (const auto& [name, f] : repo->files) {
            if (!siblings.empty())
                siblings += ",";
            // An LFS file's blobId is the git id of its pointer file, not of its bytes.
            const std::string pointer =
                "version https://git-lfs.github.com/spec/v1\noid sha256:" + sha256(f.bytes) +
                "\nsize " + std::to_string(f.bytes.size()) + "\n";
            siblings += R"({"rfilename":")" + name + R"(","blobId":")" +
                        gitBlob(f.lfs ? pointer : f.bytes) + R"(","size":)" +
                        std::to_string(f.bytes.size());
            if (f.lfs)
                siblings += R"(,"lfs":{"sha256":")" + sha256(f.bytes) + R"(","size":)" +
                            std::to_string(f.bytes.size()) + R"(,"pointerSize":)" +
                            std::to_string(pointer.size()) + "}";
            siblings += "}";
        }
        r.set_content(R"({"_id":"0","id":")" + id + R"(","private":false,"gated":)" +
                          (repo->gated ? "\"manual\"" : "false") + R"(,"disabled":false,"sha":")" +
                          repo->commit + R"(","siblings":[)" + siblings + "]}",
                      "application/json");
    }

    void resolve(const httplib::Request& q, httplib::Response& r) {
        record(q, false);
        std::lock_guard<std::mutex> lock(m_mutex);
        const Repo* repo = access(q.matches[1], q, r);
        if (!repo)
            return;
        const std::string rev = q.matches[2], name = q.matches[3];
        const auto f = repo->files.find(name);
        r.set_header("X-Repo-Commit", repo->commit);
        if ((rev != "main" && rev != repo->commit) || f == repo->files.end()) {
            r.status = 404;
            r.set_header("X-Error-Code",
                         f == repo->files.end() ? "EntryNotFound" : "RevisionNotFound");
            r.set_header("X-Error-Message", "Entry not found");
            return;
        }
        if (f->second.lfs) {
            const std::string sum = sha256(f->second.bytes);
            m_blobs[sum] = name;
            m_blobBytes[sum] = f->second.bytes;
            r.status = 302;
            r.set_header("Location",
                         "http://localhost:" + std::to_string(m_cdnPort) + "/blobs/" + sum);
            r.set_header("X-Linked-Etag", "\"" + sum + "\"");
            r.set_header("X-Linked-Size", std::to_string(f->second.bytes.size()));
            return;
        }
        r.set_header("ETag", "\"" + gitBlob(f->second.bytes) + "\"");
        serve(name, f->second.bytes, r);
    }

    void blob(const httplib::Request& q, httplib::Response& r) {
        record(q, true);
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto it = m_blobBytes.find(q.matches[1]);
        if (it == m_blobBytes.end()) {
            r.status = 404;
            return;
        }
        serve(m_blobs[it->first], it->second, r);
    }

    // The bytes (ranges handled by the server library), with the faults asked for.
    void serve(const std::string& name, std::string bytes, httplib::Response& r) {
        if (m_corrupt.count(name) && !bytes.empty())
            bytes[bytes.size() / 2] ^= 0x55;
        size_t cut = std::string::npos;
        if (const auto c = m_cut.find(name); c != m_cut.end()) {
            cut = c->second;
            m_cut.erase(c);
        }
        auto data = std::make_shared<std::string>(std::move(bytes));
        const int delay = m_delayMs;
        r.set_content_provider(
            data->size(), "application/octet-stream",
            [data, cut, delay](size_t offset, size_t length, httplib::DataSink& sink) {
                if (delay > 0)
                    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
                size_t n = std::min<size_t>(length, 4096);
                if (cut != std::string::npos) {
                    if (offset >= cut)
                        return false; // the connection closes mid-transfer
                    n = std::min(n, cut - offset);
                }
                sink.write(data->data() + offset, n);
                return true;
            });
    }

    httplib::Server m_hub, m_cdn;
    int m_port = 0, m_cdnPort = 0;
    std::thread m_hubThread, m_cdnThread;
    mutable std::mutex m_mutex;
    std::map<std::string, Repo> m_repos;
    std::map<std::string, size_t> m_cut;
    std::map<std::string, bool> m_corrupt;
    std::map<std::string, std::string> m_blobs;     // sha256 -> file name
    std::map<std::string, std::string> m_blobBytes; // sha256 -> bytes
    std::vector<Seen> m_seen;
    std::atomic<int> m_delayMs{0};
};

} // namespace baton::test
