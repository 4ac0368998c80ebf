#include "digest.h"

#include <openssl/evp.h>

#include <cstdio>
#include <vector>

namespace baton::hub {

struct Digest::Impl {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Impl() { EVP_MD_CTX_free(ctx); }
};

Digest::Digest(Kind kind, int64_t size)
    : m(std::make_unique<Impl>()) {
    EVP_DigestInit_ex(m->ctx, kind == Sha256 ? EVP_sha256() : EVP_sha1(), nullptr);
    if (kind == GitBlobSha1) {
        const std::string header = "blob " + std::to_string(size);
        EVP_DigestUpdate(m->ctx, header.c_str(), header.size() + 1); // with its NUL
    }
}

Digest::~Digest() = default;

void Digest::update(const void* data, size_t size) {
    EVP_DigestUpdate(m->ctx, data, size);
}

std::string Digest::hex() {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(m->ctx, out, &n);
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (unsigned int i = 0; i < n; ++i) {
        s += digits[out[i] >> 4];
        s += digits[out[i] & 15];
    }
    return s;
}

std::string fileDigest(const std::string& path, Digest::Kind kind, int64_t size,
                       const engine::CancelToken& cancel) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return {};
    Digest d(kind, size);
    std::vector<char> buf(1 << 20);
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
        if (cancel.cancelled()) {
            std::fclose(f);
            return {};
        }
        d.update(buf.data(), n);
    }
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    return failed ? std::string() : d.hex();
}

} // namespace baton::hub
