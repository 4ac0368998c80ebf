#include "model/converted_weights.h"

#include "kernels/q4_blocks.h"
#include "util/files.h"
#include "util/hash.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace baton::engine {

namespace {

constexpr const char* kKind = "baton converted weights";
// Changes whenever a format's layout or rounding does: older files are then converted
// again (and removed).
constexpr const char* kLayout = "1";
constexpr const char* kExtension = ".safetensors";
constexpr const char* kTemporary = ".tmp-"; // files::AtomicWriter's temporary files
constexpr uint64_t kLeaveFree = uint64_t(1) << 30;

std::mutex g_mutex; // the folder and its cap
std::string g_folder;
uint64_t g_maxBytes = 0;
std::mutex g_writeMutex; // one write (and its removals) at a time in this process

std::string pathOf(const std::string& folder, const std::string& identity, WeightFormat format) {
    return files::join(folder, identity + "-" + weightFormatName(format) + kExtension);
}

// A tensor of the file: a matrix's weights, or its scales.
struct Part {
    std::string name;
    StDtype dtype;
    std::vector<int64_t> shape;
    size_t bytes;
    const void* data = nullptr; // when writing
};

// The tensors a matrix is kept as: its weights, then Int8's or Q4's scales.
std::vector<Part> partsOf(WeightFormat format, const std::string& name, int64_t rows,
                          int64_t cols) {
    const int64_t blocks = (cols + cpu::kInt8Block - 1) / cpu::kInt8Block;
    const size_t n = size_t(rows * cols), nb = size_t(rows * blocks);
    switch (format) {
    case WeightFormat::F16:
        return {{name, StDtype::F16, {rows, cols}, 2 * n}};
    case WeightFormat::BF16:
        return {{name, StDtype::BF16, {rows, cols}, 2 * n}};
    case WeightFormat::Int8:
        return {{name, StDtype::I8, {rows, cols}, n},
                {name + ".scales", StDtype::F32, {rows, blocks}, 4 * nb}};
    case WeightFormat::Q4:
        return {{name,
                 StDtype::U8,
                 {rows, int64_t(cpu::q4RowBytes(cols))},
                 size_t(rows) * cpu::q4RowBytes(cols)},
                {name + ".scales", StDtype::F16, {rows, blocks}, 2 * nb}};
    case WeightFormat::F32:
        break;
    }
    return {{name, StDtype::F32, {rows, cols}, 4 * n}};
}

// What a file's metadata must say (the model folder it came from is added on writing).
std::map<std::string, std::string> metadataOf(const std::string& identity, WeightFormat format) {
    return {{"baton", kKind},
            {"layout", kLayout},
            {"identity", identity},
            {"format", weightFormatName(format)}};
}

// Why `file` cannot serve `shapes` ("" when it can).
std::string mismatch(const SafetensorsFile& file, const std::string& identity, WeightFormat format,
                     const std::vector<ConvertedShape>& shapes) {
    for (const auto& [key, value] : metadataOf(identity, format)) {
        const auto it = file.metadata().find(key);
        if (it == file.metadata().end() || it->second != value)
            return "its " + key + " is not " + value;
    }
    for (const ConvertedShape& s : shapes)
        for (const Part& p : partsOf(format, s.name, s.rows, s.cols)) {
            const StTensor* t = file.find(p.name);
            if (t == nullptr || t->dtype != p.dtype || t->shape != p.shape)
                return p.name + " is missing or not " + stDtypeName(p.dtype) + " " +
                       std::to_string(p.shape[0]) + "x" + std::to_string(p.shape[1]);
            auto at = file.mapped(*t);
            if (!at)
                return at.error().message;
            if (reinterpret_cast<uintptr_t>(*at) % stDtypeSize(p.dtype) != 0)
                return p.name + " is not aligned";
        }
    return {};
}

struct Entry {
    std::string path;
    timespec used{};
    uint64_t bytes = 0;
};

// The folder's kept files, least recently used first; temporary files of processes that
// are gone are removed on the way.
std::vector<Entry> keptFiles(const std::string& folder) {
    std::vector<Entry> out;
    DIR* dir = ::opendir(folder.c_str());
    if (dir == nullptr)
        return out;
    while (const dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name, path = files::join(folder, name);
        const size_t tmp = name.rfind(kTemporary);
        if (tmp != std::string::npos && name.find(kExtension) != std::string::npos) {
            const long pid = std::strtol(name.c_str() + tmp + std::strlen(kTemporary), nullptr, 10);
            if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
                ::unlink(path.c_str());
            continue;
        }
        struct stat st {};
        if (name.size() > std::strlen(kExtension) &&
            name.compare(name.size() - std::strlen(kExtension), std::string::npos, kExtension) ==
                0 &&
            ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
            out.push_back({path, st.st_mtim, uint64_t(st.st_size)});
    }
    ::closedir(dir);
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
        return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec
                                              : a.used.tv_nsec < b.used.tv_nsec;
    });
    return out;
}

} // namespace

void setConvertedWeightsFolder(const std::string& folder, uint64_t maxBytes) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_folder = folder;
    g_maxBytes = maxBytes;
}

std::string keptWeightsFolder() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_folder;
}

int64_t keptWeightsCap() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return int64_t(g_maxBytes);
}

std::vector<KeptWeights> keptWeights() {
    std::vector<KeptWeights> out;
    const std::string folder = keptWeightsFolder();
    if (folder.empty())
        return out;
    std::vector<Entry> kept;
    {
        std::lock_guard<std::mutex> lock(g_writeMutex);
        kept = keptFiles(folder);
    }
    for (auto e = kept.rbegin(); e != kept.rend(); ++e) {
        auto file = openSafetensors(e->path);
        if (!file)
            continue;
        const auto& meta = file->metadata();
        const auto get = [&](const char* key) {
            const auto it = meta.find(key);
            return it == meta.end() ? std::string() : it->second;
        };
        if (get("baton") != kKind)
            continue;
        out.push_back({e->path, get("model"), get("identity"), get("format"), int64_t(e->bytes),
                       int64_t(e->used.tv_sec)});
    }
    return out;
}

int64_t clearKeptWeights() {
    const std::string folder = keptWeightsFolder();
    if (folder.empty())
        return 0;
    std::lock_guard<std::mutex> lock(g_writeMutex);
    int64_t freed = 0;
    for (const Entry& e : keptFiles(folder))
        if (::unlink(e.path.c_str()) == 0)
            freed += int64_t(e.bytes);
    return freed;
}

uint64_t convertedBytes(WeightFormat format, const std::vector<ConvertedShape>& shapes) {
    uint64_t total = 0;
    for (const ConvertedShape& s : shapes)
        for (const Part& p : partsOf(format, s.name, s.rows, s.cols))
            total += p.bytes;
    return total;
}

std::optional<ConvertedWeights> ConvertedWeights::open(const std::string& identity,
                                                       WeightFormat format,
                                                       const std::vector<ConvertedShape>& shapes) {
    const std::string folder = keptWeightsFolder();
    if (folder.empty() || !isHashHex(identity) || format == WeightFormat::F32)
        return std::nullopt;
    const std::string path = pathOf(folder, identity, format);
    if (!files::exists(path))
        return std::nullopt;
    auto file = openSafetensors(path);
    const std::string why = file ? mismatch(*file, identity, format, shapes) : file.error().message;
    if (!why.empty()) {
        spdlog::warn("converted weights {} cannot be used ({}): removed, converting again", path,
                     why);
        ::unlink(path.c_str());
        return std::nullopt;
    }
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // just used
    ConvertedWeights out;
    out.m_file = std::move(*file);
    out.m_format = format;
    for (const ConvertedShape& s : shapes)
        out.m_cols[s.name] = s.cols;
    return out;
}

cpu::PackedMatrix ConvertedWeights::matrix(const std::string& name) const {
    const StTensor* weights = m_file.find(name);
    const StTensor* scales = m_file.find(name + ".scales");
    cpu::MatrixView view;
    view.format = m_format;
    view.rows = weights->shape[0];
    view.cols = m_cols.at(name);
    view.data = *m_file.mapped(*weights);
    if (m_format == WeightFormat::Int8)
        view.scales = reinterpret_cast<const float*>(*m_file.mapped(*scales));
    if (m_format == WeightFormat::Q4)
        view.q4Scales = reinterpret_cast<const uint16_t*>(*m_file.mapped(*scales));
    return cpu::PackedMatrix::borrow(view, m_file.mapping());
}

Result<void>
keepConvertedWeights(const std::string& identity, const std::string& model, WeightFormat format,
                     const std::vector<std::pair<std::string, const cpu::PackedMatrix*>>& matrices,
                     const std::function<bool(double)>& progress) {
    std::string folder;
    uint64_t maxBytes = 0;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        folder = g_folder;
        maxBytes = g_maxBytes;
    }
    if (folder.empty())
        return makeError(ErrorCode::InvalidArgument, "no folder is set for converted weights");
    if (!isHashHex(identity) || format == WeightFormat::F32)
        return makeError(ErrorCode::InvalidArgument, "not a model identity and converted format");

    // Every matrix's parts, the 4-byte ones first, then the 2-byte, then the bytes: each
    // then lies aligned for its dtype (the data region starts on 8 bytes).
    std::vector<Part> parts;
    for (const auto& [name, matrix] : matrices) {
        const cpu::MatrixView v = matrix->view();
        if (v.format != format || v.transposed)
            return makeError(ErrorCode::InvalidArgument, name + " is not a converted matrix");
        auto mine = partsOf(format, name, v.rows, v.cols);
        mine[0].data = v.data;
        if (mine.size() > 1)
            mine[1].data = format == WeightFormat::Int8 ? static_cast<const void*>(v.scales)
                                                        : static_cast<const void*>(v.q4Scales);
        parts.insert(parts.end(), mine.begin(), mine.end());
    }
    std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
        return stDtypeSize(a.dtype) > stDtypeSize(b.dtype);
    });
    uint64_t bytes = 0;
    std::vector<StWriteTensor> tensors;
    for (const Part& p : parts) {
        tensors.push_back({p.name, p.dtype, p.shape, p.data, p.bytes});
        bytes += p.bytes;
    }
    if (bytes > maxBytes)
        return makeError(ErrorCode::InvalidArgument, "the converted weights (" +
                                                         std::to_string(bytes >> 20) +
                                                         " MiB) are over the folder's cap (" +
                                                         std::to_string(maxBytes >> 20) + " MiB)");

    std::lock_guard<std::mutex> lock(g_writeMutex);
    if (!files::makeDirectories(folder))
        return makeError(ErrorCode::FileWriteFailed, "cannot create " + folder);
    const std::string path = pathOf(folder, identity, format);
    ::unlink(path.c_str()); // a file that did not qualify, or one from another process
    std::vector<Entry> kept = keptFiles(folder);
    uint64_t keptBytes = 0;
    for (const Entry& e : kept)
        keptBytes += e.bytes;
    for (const Entry& e : kept) {
        if (keptBytes + bytes <= maxBytes)
            break;
        if (::unlink(e.path.c_str()) == 0)
            keptBytes -= e.bytes;
    }
    struct statvfs fs {};
    if (::statvfs(folder.c_str(), &fs) == 0 &&
        uint64_t(fs.f_bavail) * fs.f_frsize < bytes + kLeaveFree)
        return makeError(ErrorCode::FileWriteFailed,
                         "less than " + std::to_string((bytes + kLeaveFree) >> 20) +
                             " MiB are free in " + folder);
    auto metadata = metadataOf(identity, format);
    metadata["model"] = model;
    return writeSafetensors(path, tensors, metadata, progress);
}

} // namespace baton::engine
