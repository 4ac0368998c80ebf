#include "model/identity_memo.h"

#include "util/files.h"
#include "util/hash.h"

#include <sys/stat.h>

#include <ctime>
#include <mutex>

namespace baton::engine {

namespace {

constexpr const char* kHeader = "baton model identity 1\n";
constexpr size_t kMaxMemoBytes = 16384; // a key names a few files

std::mutex g_mutex;
std::string g_folder;
int g_settleSeconds = 3;

std::string memoPath(const std::string& folder, const std::string& key) {
    return files::join(folder, hashHex(key) + ".id");
}

} // namespace

void setIdentityMemoFolder(const std::string& folder, int settleSeconds) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_folder = folder;
    g_settleSeconds = settleSeconds;
}

std::string identityMemoFolder() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_folder;
}

std::optional<std::string> identityMemoKey(const std::string& recipe,
                                           const std::vector<std::string>& paths) {
    int settle = 0;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_folder.empty())
            return std::nullopt;
        settle = g_settleSeconds;
    }
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    std::string key = recipe;
    for (const std::string& path : paths) {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            return std::nullopt;
        if (st.st_mtim.tv_sec > now.tv_sec - settle || st.st_ctim.tv_sec > now.tv_sec - settle)
            return std::nullopt;
        key += "\n" + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
               std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ctim.tv_sec) + "." +
               std::to_string(st.st_ctim.tv_nsec) + " " + path;
    }
    return key;
}

std::optional<std::string> recallIdentity(const std::string& key) {
    const std::string folder = identityMemoFolder();
    if (folder.empty())
        return std::nullopt;
    auto text = files::readAll(memoPath(folder, key), kMaxMemoBytes);
    if (!text)
        return std::nullopt;
    const std::string expected = kHeader + key + "\n";
    if (text->size() != expected.size() + 17 || text->compare(0, expected.size(), expected) != 0 ||
        text->back() != '\n')
        return std::nullopt;
    std::string digest = text->substr(expected.size(), 16);
    if (!isHashHex(digest))
        return std::nullopt;
    return digest;
}

void rememberIdentity(const std::string& key, const std::string& digest) {
    const std::string folder = identityMemoFolder();
    if (folder.empty() || !isHashHex(digest) || key.size() > kMaxMemoBytes / 2)
        return;
    if (files::makeDirectories(folder))
        (void)files::writeAtomically(memoPath(folder, key), kHeader + key + "\n" + digest + "\n");
}

} // namespace baton::engine
