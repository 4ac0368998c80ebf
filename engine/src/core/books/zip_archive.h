// A zip archive opened read-only with libzip, for EPUB: entries read whole, with limits
// on their sizes so that a small hostile file cannot claim gigabytes.
#pragma once

#include "baton/engine/error.h"

#include <memory>
#include <string>

struct zip;

namespace baton::engine::books {

class ZipArchive {
public:
    static constexpr uint64_t kMaxEntryBytes = uint64_t(64) << 20;
    static constexpr uint64_t kMaxTotalBytes = uint64_t(512) << 20;

    // BookInvalid when the file is not a readable zip archive.
    static Result<std::unique_ptr<ZipArchive>> open(const std::string& path);
    ~ZipArchive();

    bool has(const std::string& name) const;
    // The entry's bytes: BookInvalid when it is missing, damaged or over the limits.
    Result<std::string> read(const std::string& name);

private:
    explicit ZipArchive(zip* archive)
        : m_zip(archive) {}
    zip* m_zip;
    uint64_t m_readBytes = 0;
};

} // namespace baton::engine::books
