// Tar archives written byte by byte for the tests (ustar headers, pax extended headers
// for long names), compressed with liblzma, so that a test can also write what no tar
// program would: a lying size, a broken checksum, a cut-off stream.
#pragma once

#include <lzma.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace baton::test::tar {

struct Member {
    std::string name;
    std::string data;
    char type = '0';   // '0' a file, '5' a folder
    int64_t size = -1; // the size the header claims; -1: the data's
};

inline void octal(char* field, size_t width, uint64_t value) {
    std::snprintf(field, width, "%0*llo", int(width - 1), static_cast<unsigned long long>(value));
}

inline std::string header(const std::string& name, char type, uint64_t size) {
    std::string h(512, '\0');
    std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
    octal(h.data() + 100, 8, 0644);
    octal(h.data() + 108, 8, 0);
    octal(h.data() + 116, 8, 0);
    octal(h.data() + 124, 12, size);
    octal(h.data() + 136, 12, 0);
    h[156] = type;
    std::memcpy(h.data() + 257,
                "ustar\0"
                "00",
                8);
    std::memset(h.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h)
        sum += c;
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    h[155] = ' ';
    return h;
}

inline void pad(std::string& out) {
    out.append((512 - out.size() % 512) % 512, '\0');
}

// A pax record "LENGTH key=value\n", its length counting its own digits.
inline std::string paxRecord(const std::string& key, const std::string& value) {
    const size_t body = key.size() + value.size() + 3; // ' ', '=', '\n'
    size_t length = body + 1;
    while (std::to_string(length).size() + body != length)
        ++length;
    return std::to_string(length) + " " + key + "=" + value + "\n";
}

// The archive, with the two zero blocks that end it unless `unterminated`. A name over
// 100 bytes goes in a pax extended header, or with `gnu` in a GNU long-name entry.
inline std::string archive(const std::vector<Member>& members, bool unterminated = false,
                           bool gnu = false) {
    std::string out;
    for (const auto& m : members) {
        if (m.name.size() > 100 && gnu) {
            out += header("././@LongLink", 'L', m.name.size() + 1);
            out += m.name;
            out += '\0';
            pad(out);
        } else if (m.name.size() > 100) {
            const std::string pax = paxRecord("path", m.name);
            out += header("PaxHeader", 'x', pax.size());
            out += pax;
            pad(out);
        }
        out += header(m.name, m.type, m.size >= 0 ? uint64_t(m.size) : uint64_t(m.data.size()));
        out += m.data;
        pad(out);
    }
    if (!unterminated)
        out.append(1024, '\0');
    return out;
}

inline std::string xz(const std::string& plain) {
    std::string out(plain.size() + plain.size() / 2 + 4096, '\0');
    size_t pos = 0;
    const lzma_ret r = lzma_easy_buffer_encode(
        6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(plain.data()), plain.size(),
        reinterpret_cast<uint8_t*>(out.data()), &pos, out.size());
    out.resize(r == LZMA_OK ? pos : 0);
    return out;
}

} // namespace baton::test::tar
