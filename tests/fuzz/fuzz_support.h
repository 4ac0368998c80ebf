// Shared by the fuzz targets: a private scratch folder for inputs that Baton reads
// from files (created once per process, removed at exit), splitting one input into
// several files, and a check that aborts (libFuzzer reports a crash) when a property
// that must hold does not.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <ftw.h>
#include <unistd.h>

namespace baton::fuzz {

inline int removeEntry(const char* path, const struct stat*, int, struct FTW*) {
    return ::remove(path);
}

// A folder of this process's own under $TMPDIR (or /tmp).
inline const std::string& scratchDir() {
    static const std::string dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/baton-fuzz-XXXXXX";
        if (!::mkdtemp(pattern.data()))
            std::abort();
        std::atexit([] { ::nftw(scratchDir().c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS); });
        return pattern;
    }();
    return dir;
}

// Writes bytes to scratchDir()/name (replacing it) and returns the path.
inline std::string writeScratch(const std::string& name, std::string_view bytes) {
    const std::string path = scratchDir() + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        std::abort();
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
        std::abort();
    std::fclose(f);
    return path;
}

// Splits an input at every occurrence of a separator line ("\n--8<--\n"), so one
// input can hold several files; missing parts are empty.
inline std::vector<std::string_view> splitParts(std::string_view data, size_t parts) {
    static constexpr std::string_view kSep = "\n--8<--\n";
    std::vector<std::string_view> out;
    while (out.size() + 1 < parts) {
        const size_t at = data.find(kSep);
        if (at == std::string_view::npos)
            break;
        out.push_back(data.substr(0, at));
        data.remove_prefix(at + kSep.size());
    }
    out.push_back(data);
    out.resize(parts);
    return out;
}

// A property every input must keep: a violation is a bug, reported as a crash.
inline void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz property violated: %s\n", what);
        std::abort();
    }
}

inline std::string_view asText(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

} // namespace baton::fuzz
