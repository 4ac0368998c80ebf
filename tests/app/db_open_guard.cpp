// Preloaded into a process under test (LD_PRELOAD): records every open of a story
// database (or of its -wal, -shm or -journal) made by anything but SQLite itself.
//
// Closing any descriptor of a file drops every POSIX lock the process holds on it,
// the locks of its SQLite connections included; another process can then take the
// database for unused and delete the write-ahead log those connections still write to
// (SQLite's "How To Corrupt An SQLite Database File", section 2.2). So while a process
// may hold a connection, only SQLite may open the database's files: not fopen, not
// std::ifstream (which is fopen), not QFile (open), not our own code.
//
//   BATON_DB_GUARD=PATH      the database to watch
//   BATON_DB_GUARD_LOG=FILE  where each violation is appended, one line each:
//                            "<caller's library> opened <path>"
// The caller is the library or executable the open was called from
// (__builtin_return_address); calls from libsqlite3 are SQLite's own.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// The watched path made absolute with its folder resolved, as each opened path is.
std::string canonical(const char* path) {
    std::string p(path);
    const size_t slash = p.find_last_of('/');
    std::string folder = slash == std::string::npos ? "." : p.substr(0, slash);
    if (folder.empty())
        folder = "/";
    const std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
    char resolved[PATH_MAX];
    if (!::realpath(folder.c_str(), resolved))
        return {};
    return std::string(resolved) + "/" + name;
}

bool watched(const char* path) {
    static const std::string db = [] {
        const char* p = std::getenv("BATON_DB_GUARD");
        return p && *p ? canonical(p) : std::string();
    }();
    if (db.empty() || !path)
        return false;
    const std::string p = canonical(path);
    if (p.compare(0, db.size(), db) != 0)
        return false;
    const std::string tail = p.substr(db.size());
    return tail.empty() || tail == "-wal" || tail == "-shm" || tail == "-journal";
}

void check(const char* path, void* caller) {
    if (!watched(path))
        return;
    Dl_info info{};
    const char* library = ::dladdr(caller, &info) && info.dli_fname ? info.dli_fname : "?";
    if (std::strstr(library, "libsqlite3"))
        return; // SQLite's own connection
    const char* log = std::getenv("BATON_DB_GUARD_LOG");
    if (!log)
        return;
    static const auto realOpen =
        reinterpret_cast<int (*)(const char*, int, ...)>(::dlsym(RTLD_NEXT, "open"));
    const int fd = realOpen(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    const std::string line = std::string(library) + " opened " + path + "\n";
    [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
    ::close(fd);
}

template <typename F>
F next(const char* name) {
    return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

mode_t modeOf(int flags, va_list args) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(args, int) : 0;
}

} // namespace

#define BATON_GUARD_OPEN(name)                                                                     \
    extern "C" int name(const char* path, int flags, ...) {                                        \
        va_list args;                                                                              \
        va_start(args, flags);                                                                     \
        const mode_t mode = modeOf(flags, args);                                                   \
        va_end(args);                                                                              \
        check(path, __builtin_return_address(0));                                                  \
        static const auto real = next<int (*)(const char*, int, ...)>(#name);                      \
        return real(path, flags, mode);                                                            \
    }
#define BATON_GUARD_OPENAT(name)                                                                   \
    extern "C" int name(int dir, const char* path, int flags, ...) {                               \
        va_list args;                                                                              \
        va_start(args, flags);                                                                     \
        const mode_t mode = modeOf(flags, args);                                                   \
        va_end(args);                                                                              \
        check(path, __builtin_return_address(0));                                                  \
        static const auto real = next<int (*)(int, const char*, int, ...)>(#name);                 \
        return real(dir, path, flags, mode);                                                       \
    }
#define BATON_GUARD_FOPEN(name)                                                                    \
    extern "C" FILE* name(const char* path, const char* mode) {                                    \
        check(path, __builtin_return_address(0));                                                  \
        static const auto real = next<FILE* (*)(const char*, const char*)>(#name);                 \
        return real(path, mode);                                                                   \
    }

#define BATON_GUARD_OPEN_2(name)                                                                   \
    extern "C" int name(const char* path, int flags) {                                             \
        check(path, __builtin_return_address(0));                                                  \
        static const auto real = next<int (*)(const char*, int)>(#name);                           \
        return real(path, flags);                                                                  \
    }

BATON_GUARD_OPEN(open)
BATON_GUARD_OPEN(open64)
BATON_GUARD_OPEN_2(__open_2) // _FORTIFY_SOURCE's checked open (Debian's Qt is built so)
BATON_GUARD_OPEN_2(__open64_2)
BATON_GUARD_OPENAT(openat)
BATON_GUARD_OPENAT(openat64)
BATON_GUARD_FOPEN(fopen)
BATON_GUARD_FOPEN(fopen64)
