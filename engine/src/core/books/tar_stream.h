// Tar archives read as a stream, plain or compressed with xz: one member at a time in
// archive order, never unpacked to disk nor held whole in memory. Reads POSIX ustar
// headers (with the prefix field), pax extended headers (path, size) and GNU long names;
// regular files only (folders, links and devices are skipped). Every header's checksum
// is verified, and xz's own block checks catch damaged compressed data.
#pragma once

#include "baton/engine/error.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace baton::engine {

class TarStream {
public:
    ~TarStream();
    TarStream(const TarStream&) = delete;
    TarStream& operator=(const TarStream&) = delete;

    // FileNotFound, FileUnreadable, or BookInvalid when the file is neither a tar
    // archive nor xz-compressed data.
    static Result<std::unique_ptr<TarStream>> open(const std::string& path);

    // The next regular file's path and contents; false at the end of the archive.
    // A member over maxBytes, a truncated archive, damaged compressed data and a header
    // that fails its checksum are BookInvalid errors naming the archive.
    Result<bool> next(std::string& name, std::string& data, size_t maxBytes);

    // The share of the archive file read so far (compressed bytes), 0..1.
    double fraction() const;

private:
    TarStream() = default;
    // Exactly n bytes of the tar stream into out (or discarded when out is null);
    // false at a clean end of the data before the first byte.
    Result<bool> read(char* out, size_t n);
    Result<void> skip(uint64_t n);
    Result<void> fill();
    Error invalid(const std::string& what) const;

    std::string m_path;
    std::FILE* m_file = nullptr;
    uint64_t m_fileSize = 0, m_fileRead = 0;
    struct Xz;
    std::unique_ptr<Xz> m_xz; // null for a plain tar archive
    std::vector<char> m_in;   // compressed (or plain) bytes read from the file
    std::vector<char> m_out;  // decompressed bytes not consumed yet
    size_t m_outPos = 0;
    bool m_inputEnded = false, m_streamEnded = false;
    uint64_t m_offset = 0; // of the next tar byte, for error messages
};

} // namespace baton::engine
