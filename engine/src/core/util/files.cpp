#include "util/files.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace baton::engine::files {

namespace {

std::string errnoText(int err) {
    return std::strerror(err);
}

std::string parentOf(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    if (slash == 0)
        return "/";
    return path.substr(0, slash);
}

} // namespace

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

bool isDirectory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool endsWithNoCase(std::string_view s, std::string_view lowerSuffix) {
    if (s.size() < lowerSuffix.size())
        return false;
    for (size_t i = 0; i < lowerSuffix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[s.size() - lowerSuffix.size() + i])) !=
            lowerSuffix[i])
            return false;
    return true;
}

std::string join(const std::string& folder, const std::string& name) {
    if (folder.empty())
        return name;
    if (folder.back() == '/')
        return folder + name;
    return folder + "/" + name;
}

Result<std::string> readAll(const std::string& path, size_t maxBytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOENT)
            return makeError(ErrorCode::FileNotFound, "file not found: " + path);
        return makeError(ErrorCode::FileUnreadable, "cannot open " + path + ": " + errnoText(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        ::close(fd);
        return makeError(ErrorCode::FileUnreadable, path + " is not a readable file");
    }
    if (static_cast<size_t>(st.st_size) > maxBytes) {
        ::close(fd);
        return makeError(ErrorCode::InvalidArgument,
                         path + " is too large (" + std::to_string(st.st_size) + " bytes, limit " +
                             std::to_string(maxBytes) + ")");
    }
    std::string data;
    data.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            return makeError(ErrorCode::FileUnreadable,
                             "cannot read " + path + ": " +
                                 (n == 0 ? std::string("unexpected end of file") : errnoText(err)));
        }
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    return data;
}

bool makeDirectories(const std::string& path) {
    if (path.empty() || isDirectory(path))
        return true;
    const auto slash = path.find_last_of('/');
    if (slash != std::string::npos && slash > 0)
        makeDirectories(path.substr(0, slash));
    ::mkdir(path.c_str(), 0755);
    return isDirectory(path);
}

void removeTree(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        if (DIR* dir = ::opendir(path.c_str())) {
            while (dirent* e = ::readdir(dir)) {
                const std::string n = e->d_name;
                if (n != "." && n != "..")
                    removeTree(join(path, n));
            }
            ::closedir(dir);
        }
        ::rmdir(path.c_str());
    } else {
        ::unlink(path.c_str());
    }
}

void syncDirectory(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

Result<void> replaceDirectory(const std::string& from, const std::string& to) {
    syncDirectory(from);
    const std::string old = to + ".old";
    removeTree(old);
    const bool hadOld = isDirectory(to);
    if (hadOld && ::rename(to.c_str(), old.c_str()) != 0)
        return makeError(ErrorCode::FileWriteFailed,
                         "cannot move " + to + " aside: " + errnoText(errno));
    if (::rename(from.c_str(), to.c_str()) != 0) {
        const int err = errno;
        if (hadOld)
            ::rename(old.c_str(), to.c_str());
        return makeError(ErrorCode::FileWriteFailed,
                         "cannot rename " + from + " to " + to + ": " + errnoText(err));
    }
    syncDirectory(parentOf(to));
    removeTree(old);
    return {};
}

AtomicWriter::~AtomicWriter() {
    if (m_fd >= 0) {
        ::close(m_fd);
        ::unlink(m_tmp.c_str());
    }
}

Result<void> AtomicWriter::open(const std::string& path) {
    m_path = path;
    m_tmp = path + ".tmp-" + std::to_string(::getpid());
    m_fd = ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m_fd < 0)
        return makeError(ErrorCode::FileWriteFailed,
                         "cannot create " + m_tmp + ": " + errnoText(errno));
    return {};
}

Result<void> AtomicWriter::write(const void* data, size_t size) {
    auto p = static_cast<const char*>(data);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::write(m_fd, p + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return makeError(ErrorCode::FileWriteFailed,
                             "cannot write " + m_tmp + ": " + errnoText(errno));
        done += static_cast<size_t>(n);
    }
    return {};
}

Result<void> AtomicWriter::commit() {
    if (::fsync(m_fd) != 0)
        return makeError(ErrorCode::FileWriteFailed,
                         "cannot sync " + m_tmp + ": " + errnoText(errno));
    ::close(m_fd);
    m_fd = -1;
    if (::rename(m_tmp.c_str(), m_path.c_str()) != 0) {
        const int err = errno;
        ::unlink(m_tmp.c_str());
        return makeError(ErrorCode::FileWriteFailed,
                         "cannot rename " + m_tmp + " to " + m_path + ": " + errnoText(err));
    }
    const int dfd = ::open(parentOf(m_path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return {};
}

Result<void> writeAtomically(const std::string& path, std::string_view data) {
    AtomicWriter w;
    if (auto r = w.open(path); !r)
        return r;
    if (auto r = w.write(data.data(), data.size()); !r)
        return r;
    return w.commit();
}

} // namespace baton::engine::files
