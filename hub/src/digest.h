// The hashes the hub lists for its files: sha256 (LFS files) and the git blob id (sha1
// of "blob SIZE\0" and the bytes), over OpenSSL's EVP interface, fed as bytes arrive.
#pragma once

#include <baton/engine/cancel.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace baton::hub {

class Digest {
public:
    enum Kind { Sha256, GitBlobSha1 };
    // size: the file's length (the git blob header holds it).
    Digest(Kind kind, int64_t size);
    ~Digest();
    Digest(const Digest&) = delete;
    Digest& operator=(const Digest&) = delete;
    void update(const void* data, size_t size);
    std::string hex(); // lower-case; the digest is finished

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

// The digest of a file's bytes ("" when it cannot be read, or cancel fires meanwhile:
// a file of gigabytes takes a while).
std::string fileDigest(const std::string& path, Digest::Kind kind, int64_t size,
                       const engine::CancelToken& cancel);

} // namespace baton::hub
