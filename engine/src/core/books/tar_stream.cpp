#include "books/tar_stream.h"

#include <lzma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace baton::engine {

namespace {

constexpr size_t kBlock = 512;
constexpr size_t kChunk = size_t(1) << 20;
// xz -9 needs 64 MiB of dictionary; anything asking for far more is not a library.
constexpr uint64_t kXzMemoryLimit = uint64_t(512) << 20;
constexpr size_t kMostExtendedHeader = size_t(1) << 20;

bool allZero(const char* p, size_t n) {
    return std::all_of(p, p + n, [](char c) { return c == 0; });
}

// A numeric header field: octal digits (space- or NUL-terminated), or GNU's base-256
// form (first byte's high bit set) for sizes past 8 GiB. -1 when malformed.
int64_t headerNumber(const char* field, size_t width) {
    const auto* u = reinterpret_cast<const unsigned char*>(field);
    if (u[0] & 0x80) {
        if (u[0] != 0x80)
            return -1; // negative or too wide for us
        uint64_t v = 0;
        for (size_t i = 1; i < width; ++i) {
            if (v >> 55)
                return -1;
            v = (v << 8) | u[i];
        }
        return int64_t(v);
    }
    size_t i = 0;
    while (i < width && field[i] == ' ')
        ++i;
    uint64_t v = 0;
    bool any = false;
    for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i) {
        if (v >> 60)
            return -1;
        v = v * 8 + uint64_t(field[i] - '0');
        any = true;
    }
    for (; i < width; ++i)
        if (field[i] != ' ' && field[i] != '\0')
            return -1;
    return any ? int64_t(v) : -1;
}

std::string headerString(const char* field, size_t width) {
    return std::string(field, strnlen(field, width));
}

bool checksumMatches(const char* header) {
    const int64_t stored = headerNumber(header + 148, 8);
    if (stored < 0)
        return false;
    int64_t unsignedSum = 0, signedSum = 0;
    for (size_t i = 0; i < kBlock; ++i) {
        const bool inField = i >= 148 && i < 156;
        unsignedSum += inField ? ' ' : static_cast<unsigned char>(header[i]);
        signedSum += inField ? ' ' : static_cast<signed char>(header[i]);
    }
    return stored == unsignedSum || stored == signedSum; // some old tars summed signed bytes
}

// A pax extended header's records, "LENGTH KEY=VALUE\n"; path and size are kept.
bool parsePax(const std::string& data, std::string& path, int64_t& size) {
    size_t pos = 0;
    while (pos < data.size()) {
        size_t sp = pos;
        uint64_t length = 0;
        while (sp < data.size() && data[sp] >= '0' && data[sp] <= '9' && length < data.size())
            length = length * 10 + uint64_t(data[sp++] - '0');
        if (sp >= data.size() || data[sp] != ' ' || length <= sp - pos + 1 ||
            pos + length > data.size() || data[pos + length - 1] != '\n')
            return false;
        const std::string record = data.substr(sp + 1, pos + length - sp - 2);
        const size_t eq = record.find('=');
        if (eq == std::string::npos)
            return false;
        const std::string key = record.substr(0, eq), value = record.substr(eq + 1);
        if (key == "path") {
            path = value;
        } else if (key == "size") {
            if (value.empty() || value.size() > 18 ||
                value.find_first_not_of("0123456789") != std::string::npos)
                return false;
            size = std::stoll(value);
        }
        pos += length;
    }
    return true;
}

std::string xzProblem(lzma_ret r) {
    switch (r) {
    case LZMA_FORMAT_ERROR:
        return "not xz-compressed data";
    case LZMA_DATA_ERROR:
        return "the compressed data is damaged";
    case LZMA_BUF_ERROR:
        return "the compressed data ends early (truncated file)";
    case LZMA_MEMLIMIT_ERROR:
        return "it needs more than 512 MiB of memory to decompress";
    case LZMA_OPTIONS_ERROR:
        return "it uses xz options this build cannot read";
    case LZMA_MEM_ERROR:
        return "out of memory while decompressing";
    default:
        return "xz error " + std::to_string(int(r));
    }
}

} // namespace

struct TarStream::Xz {
    lzma_stream stream = LZMA_STREAM_INIT;
    ~Xz() { lzma_end(&stream); }
};

TarStream::~TarStream() {
    if (m_file)
        std::fclose(m_file);
}

Result<std::unique_ptr<TarStream>> TarStream::open(const std::string& path) {
    std::unique_ptr<TarStream> t(new TarStream());
    t->m_path = path;
    t->m_file = std::fopen(path.c_str(), "rb");
    if (!t->m_file)
        return makeError(errno == ENOENT ? ErrorCode::FileNotFound : ErrorCode::FileUnreadable,
                         path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fileno(t->m_file), &st) == 0)
        t->m_fileSize = uint64_t(st.st_size);
    char magic[6] = {};
    const size_t got = std::fread(magic, 1, sizeof magic, t->m_file);
    std::rewind(t->m_file);
    if (got == sizeof magic && std::memcmp(magic,
                                           "\xFD"
                                           "7zXZ\0",
                                           6) == 0) {
        t->m_xz = std::make_unique<Xz>();
        const lzma_ret r = lzma_stream_decoder(&t->m_xz->stream, kXzMemoryLimit, LZMA_CONCATENATED);
        if (r != LZMA_OK)
            return t->invalid(xzProblem(r));
    } else if (t->m_fileSize < kBlock) {
        return t->invalid("neither a tar archive nor xz-compressed data");
    }
    t->m_in.resize(kChunk);
    return t;
}

Error TarStream::invalid(const std::string& what) const {
    return {ErrorCode::BookInvalid, m_path + ": " + what};
}

double TarStream::fraction() const {
    return m_fileSize == 0 ? 1.0 : std::min(1.0, double(m_fileRead) / double(m_fileSize));
}

Result<void> TarStream::fill() {
    m_out.clear();
    m_outPos = 0;
    while (m_out.empty() && !m_streamEnded) {
        if (!m_xz) {
            m_out.resize(kChunk);
            const size_t n = std::fread(m_out.data(), 1, kChunk, m_file);
            if (n < kChunk && std::ferror(m_file))
                return makeError(ErrorCode::FileUnreadable, m_path + ": read error");
            m_out.resize(n);
            m_fileRead += n;
            m_streamEnded = n == 0;
            continue;
        }
        lzma_stream& s = m_xz->stream;
        if (s.avail_in == 0 && !m_inputEnded) {
            const size_t n = std::fread(m_in.data(), 1, m_in.size(), m_file);
            if (n < m_in.size() && std::ferror(m_file))
                return makeError(ErrorCode::FileUnreadable, m_path + ": read error");
            m_fileRead += n;
            m_inputEnded = n == 0;
            s.next_in = reinterpret_cast<const uint8_t*>(m_in.data());
            s.avail_in = n;
        }
        m_out.resize(kChunk);
        s.next_out = reinterpret_cast<uint8_t*>(m_out.data());
        s.avail_out = kChunk;
        const lzma_ret r = lzma_code(&s, m_inputEnded ? LZMA_FINISH : LZMA_RUN);
        m_out.resize(kChunk - s.avail_out);
        if (r == LZMA_STREAM_END)
            m_streamEnded = true;
        else if (r != LZMA_OK)
            return invalid(xzProblem(r));
    }
    return {};
}

Result<bool> TarStream::read(char* out, size_t n) {
    size_t copied = 0;
    while (copied < n) {
        if (m_outPos == m_out.size()) {
            if (auto r = fill(); !r)
                return r.error();
            if (m_out.empty()) {
                if (copied == 0)
                    return false;
                return invalid("the archive ends in the middle of a member (truncated file)");
            }
        }
        const size_t take = std::min(n - copied, m_out.size() - m_outPos);
        if (out)
            std::memcpy(out + copied, m_out.data() + m_outPos, take);
        m_outPos += take;
        copied += take;
    }
    m_offset += n;
    return true;
}

Result<void> TarStream::skip(uint64_t n) {
    while (n > 0) {
        const size_t step = size_t(std::min<uint64_t>(n, kChunk));
        auto r = read(nullptr, step);
        if (!r)
            return r.error();
        if (!*r)
            return invalid("the archive ends in the middle of a member (truncated file)");
        n -= step;
    }
    return {};
}

Result<bool> TarStream::next(std::string& name, std::string& data, size_t maxBytes) {
    std::string longName;
    int64_t paxSize = -1;
    char header[kBlock];
    for (;;) {
        const uint64_t at = m_offset;
        auto got = read(header, kBlock);
        if (!got)
            return got.error();
        if (!*got)
            return invalid("the archive ends without its end-of-archive blocks (truncated "
                           "file)");
        if (allZero(header, kBlock))
            return false; // the end-of-archive marker
        if (!checksumMatches(header))
            return invalid("the header at byte " + std::to_string(at) +
                           " fails its checksum (not a tar archive, or damaged)");
        int64_t size = headerNumber(header + 124, 12);
        if (size < 0)
            return invalid("the header at byte " + std::to_string(at) + " has no valid size");
        const char type = header[156];
        const uint64_t padded = (uint64_t(size) + kBlock - 1) / kBlock * kBlock;
        if (type == 'x' || type == 'L') {
            if (uint64_t(size) > kMostExtendedHeader)
                return invalid("an extended header of " + std::to_string(size) + " bytes");
            std::string ext(size_t(padded), '\0');
            auto r = read(ext.data(), ext.size());
            if (!r)
                return r.error();
            if (!*r)
                return invalid("the archive ends in an extended header (truncated file)");
            ext.resize(size_t(size));
            if (type == 'L') {
                longName = ext.substr(0, ext.find('\0'));
            } else if (!parsePax(ext, longName, paxSize)) {
                return invalid("the pax header at byte " + std::to_string(at) + " is malformed");
            }
            continue;
        }
        if (paxSize >= 0)
            size = paxSize;
        const uint64_t dataPadded = (uint64_t(size) + kBlock - 1) / kBlock * kBlock;
        if (type != '0' && type != '\0' && type != '7') {
            // A folder, link, device or a global header: nothing to read.
            if (auto r = skip(dataPadded); !r)
                return r.error();
            longName.clear();
            paxSize = -1;
            continue;
        }
        if (!longName.empty()) {
            name = longName;
        } else {
            const bool ustar = std::memcmp(header + 257, "ustar", 5) == 0;
            const std::string prefix = ustar ? headerString(header + 345, 155) : std::string();
            const std::string base = headerString(header, 100);
            name = prefix.empty() ? base : prefix + "/" + base;
        }
        if (uint64_t(size) > maxBytes)
            return invalid(name + " is " + std::to_string(size) + " bytes, over the limit of " +
                           std::to_string(maxBytes));
        data.resize(size_t(size));
        auto r = read(data.data(), data.size());
        if (!r)
            return r.error();
        if (!*r && size > 0)
            return invalid("the archive ends in " + name + " (truncated file)");
        if (auto s = skip(dataPadded - uint64_t(size)); !s)
            return s.error();
        return true;
    }
}

} // namespace baton::engine
