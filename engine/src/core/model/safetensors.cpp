#include "model/safetensors.h"

#include "util/files.h"
#include "util/utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace baton::engine {

namespace {

struct DtypeName {
    const char* name;
    StDtype dtype;
    size_t size;
};

constexpr DtypeName kDtypes[] = {
    {"F64", StDtype::F64, 8},   {"F32", StDtype::F32, 4},        {"F16", StDtype::F16, 2},
    {"BF16", StDtype::BF16, 2}, {"I64", StDtype::I64, 8},        {"I32", StDtype::I32, 4},
    {"I16", StDtype::I16, 2},   {"I8", StDtype::I8, 1},          {"U8", StDtype::U8, 1},
    {"BOOL", StDtype::Bool, 1}, {"F8_E4M3", StDtype::F8E4M3, 1}, {"F8_E5M2", StDtype::F8E5M2, 1},
};

Error fail(ErrorCode code, const std::string& path, const std::string& what) {
    return makeError(code, path + ": " + what);
}

} // namespace

size_t stDtypeSize(StDtype dtype) {
    for (const auto& d : kDtypes)
        if (d.dtype == dtype)
            return d.size;
    return 0;
}

const char* stDtypeName(StDtype dtype) {
    for (const auto& d : kDtypes)
        if (d.dtype == dtype)
            return d.name;
    return "?";
}

int64_t StTensor::numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

SafetensorsFile::~SafetensorsFile() {
    if (m_fd >= 0)
        ::close(m_fd);
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept {
    *this = std::move(o);
}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& o) noexcept {
    if (this != &o) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_path = std::move(o.m_path);
        m_header = std::move(o.m_header);
        m_fd = o.m_fd;
        o.m_fd = -1;
        m_map = std::move(o.m_map);
        m_fileSize = o.m_fileSize;
        m_dataStart = o.m_dataStart;
        m_tensors = std::move(o.m_tensors);
        m_metadata = std::move(o.m_metadata);
    }
    return *this;
}

const StTensor* SafetensorsFile::find(const std::string& name) const {
    for (const auto& t : m_tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

Result<void> SafetensorsFile::read(const StTensor& t, void* dst) const {
    auto p = static_cast<char*>(dst);
    uint64_t done = 0;
    const uint64_t size = t.bytes();
    while (done < size) {
        const ssize_t n =
            ::pread(m_fd, p + done, size - done, static_cast<off_t>(m_dataStart + t.begin + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(n == 0 ? ErrorCode::TruncatedFile : ErrorCode::FileUnreadable, m_path,
                        "cannot read tensor " + t.name +
                            (n == 0 ? std::string(": the file ended early")
                                    : std::string(": ") + std::strerror(errno)));
        done += static_cast<uint64_t>(n);
    }
    return {};
}

Result<const unsigned char*> SafetensorsFile::mapped(const StTensor& t) const {
    if (m_map == nullptr) {
        // Private and writable: a write (a model trained in place) copies the page
        // and never reaches the file.
        void* p = ::mmap(nullptr, m_fileSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, m_fd, 0);
        if (p == MAP_FAILED)
            return fail(ErrorCode::FileUnreadable, m_path,
                        std::string("cannot map the file into memory: ") + std::strerror(errno));
        const uint64_t size = m_fileSize;
        m_map = std::shared_ptr<void>(p, [size](void* q) { ::munmap(q, size); });
    }
    return static_cast<const unsigned char*>(m_map.get()) + m_dataStart + t.begin;
}

void SafetensorsFile::dropPages(uint64_t begin, uint64_t end) const {
    if (m_map == nullptr)
        return;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t a = (m_dataStart + begin + page - 1) / page * page;
    const uint64_t b = (m_dataStart + end) / page * page;
    if (b > a) // an unwritten private file mapping: the pages come back from the file
        ::madvise(static_cast<char*>(m_map.get()) + a, b - a, MADV_DONTNEED);
}

Result<SafetensorsFile> openSafetensors(const std::string& path) {
    SafetensorsFile file;
    file.m_path = path;
    file.m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.m_fd < 0) {
        if (errno == ENOENT)
            return makeError(ErrorCode::FileNotFound, "file not found: " + path);
        return fail(ErrorCode::FileUnreadable, path, std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(file.m_fd, &st) != 0 || !S_ISREG(st.st_mode))
        return fail(ErrorCode::FileUnreadable, path, "not a regular file");
    file.m_fileSize = static_cast<uint64_t>(st.st_size);
    if (file.m_fileSize < 8)
        return fail(ErrorCode::TruncatedFile, path,
                    "truncated: " + std::to_string(file.m_fileSize) +
                        " bytes, too short to hold the 8-byte header length");
    unsigned char lenBytes[8];
    if (::pread(file.m_fd, lenBytes, 8, 0) != 8)
        return fail(ErrorCode::FileUnreadable, path, "cannot read the header length");
    uint64_t headerLen = 0;
    for (int i = 7; i >= 0; --i)
        headerLen = (headerLen << 8) | lenBytes[i];
    if (headerLen > kMaxSafetensorsHeader)
        return fail(ErrorCode::HeaderTooLarge, path,
                    "the header claims " + std::to_string(headerLen) +
                        " bytes; headers over 100 MB are refused");
    if (headerLen < 2)
        return fail(ErrorCode::BadHeader, path, "the header is empty");
    if (8 + headerLen > file.m_fileSize)
        return fail(ErrorCode::TruncatedFile, path,
                    "truncated: the header needs " + std::to_string(8 + headerLen) +
                        " bytes but the file has " + std::to_string(file.m_fileSize));
    file.m_header.resize(headerLen);
    if (::pread(file.m_fd, file.m_header.data(), headerLen, 8) != static_cast<ssize_t>(headerLen))
        return fail(ErrorCode::FileUnreadable, path, "cannot read the header");
    file.m_dataStart = 8 + headerLen;
    const uint64_t dataSize = file.m_fileSize - file.m_dataStart;

    if (const size_t bad = utf8::firstInvalid(file.m_header); bad != std::string::npos)
        return fail(ErrorCode::InvalidUtf8, path,
                    "the header is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    nlohmann::json header;
    std::set<std::string> keys;
    bool duplicate = false;
    std::string duplicateKey;
    try {
        header =
            nlohmann::json::parse(file.m_header, [&](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json& parsed) {
                if (depth == 1 && event == nlohmann::json::parse_event_t::key) {
                    const auto k = parsed.get<std::string>();
                    if (!keys.insert(k).second) {
                        duplicate = true;
                        duplicateKey = k;
                    }
                }
                return true;
            });
    } catch (const nlohmann::json::exception& e) {
        return fail(ErrorCode::InvalidJson, path,
                    std::string("the header is not JSON: ") + e.what());
    }
    if (!header.is_object())
        return fail(ErrorCode::BadHeader, path, "the header is not a JSON object");
    if (duplicate)
        return fail(ErrorCode::BadHeader, path, "the header names '" + duplicateKey + "' twice");

    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object())
                return fail(ErrorCode::BadHeader, path, "__metadata__ is not an object");
            for (const auto& [k, v] : entry.items()) {
                if (!v.is_string())
                    return fail(ErrorCode::BadHeader, path,
                                "__metadata__ value '" + k + "' is not a string");
                file.m_metadata[k] = v.get<std::string>();
            }
            continue;
        }
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
            !entry.contains("data_offsets") || !entry["dtype"].is_string() ||
            !entry["shape"].is_array() || !entry["data_offsets"].is_array())
            return fail(ErrorCode::BadHeader, path,
                        "tensor '" + name + "' needs dtype, shape and data_offsets");
        StTensor t;
        t.name = name;
        const auto dtype = entry["dtype"].get<std::string>();
        const auto known = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                        [&](const DtypeName& d) { return dtype == d.name; });
        if (known == std::end(kDtypes))
            return fail(ErrorCode::UnknownDtype, path,
                        "tensor '" + name + "' has unknown dtype '" + dtype + "'");
        t.dtype = known->dtype;
        uint64_t numel = 1;
        for (const auto& d : entry["shape"]) {
            if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t(1) << 40))
                return fail(ErrorCode::BadHeader, path,
                            "tensor '" + name + "' has an invalid shape " + entry["shape"].dump());
            t.shape.push_back(d.get<int64_t>());
            numel *= d.get<uint64_t>();
            if (numel > (uint64_t(1) << 40))
                return fail(ErrorCode::BadHeader, path,
                            "tensor '" + name + "' is impossibly large");
        }
        const auto& off = entry["data_offsets"];
        if (off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            return fail(ErrorCode::BadHeader, path,
                        "tensor '" + name + "' has invalid data_offsets " + off.dump());
        t.begin = off[0].get<uint64_t>();
        t.end = off[1].get<uint64_t>();
        if (t.end < t.begin)
            return fail(ErrorCode::BadOffsets, path,
                        "tensor '" + name + "' ends before it begins " + off.dump());
        if (t.end - t.begin != numel * known->size)
            return fail(ErrorCode::BadOffsets, path,
                        "tensor '" + name + "' spans " + std::to_string(t.end - t.begin) +
                            " bytes but its shape and dtype need " +
                            std::to_string(numel * known->size));
        file.m_tensors.push_back(std::move(t));
    }

    std::sort(file.m_tensors.begin(), file.m_tensors.end(),
              [](const StTensor& a, const StTensor& b) {
                  return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
              });
    uint64_t cursor = 0;
    bool contiguous = true;
    for (size_t i = 0; i < file.m_tensors.size(); ++i) {
        const auto& t = file.m_tensors[i];
        if (i > 0 && t.begin < file.m_tensors[i - 1].end)
            return fail(ErrorCode::OverlappingOffsets, path,
                        "tensors '" + file.m_tensors[i - 1].name + "' and '" + t.name +
                            "' overlap");
        if (t.begin != cursor)
            contiguous = false;
        cursor = t.end;
    }
    const uint64_t described = cursor;
    if (described > dataSize) {
        if (contiguous)
            return fail(ErrorCode::TruncatedFile, path,
                        "truncated: the header describes " + std::to_string(described) +
                            " bytes of tensor data but the file holds " + std::to_string(dataSize));
        return fail(ErrorCode::OffsetOutOfRange, path,
                    "a tensor's data_offsets point past the end of the file (" +
                        std::to_string(described) + " > " + std::to_string(dataSize) + ")");
    }
    if (!contiguous)
        return fail(ErrorCode::BadOffsets, path,
                    "the tensor data has holes: data_offsets must cover the data region exactly");
    if (described != dataSize)
        return fail(ErrorCode::BadOffsets, path,
                    std::to_string(dataSize - described) +
                        " unexplained bytes follow the last tensor");
    return file;
}

Result<void> writeSafetensors(const std::string& path, const std::vector<StWriteTensor>& tensors,
                              const std::map<std::string, std::string>& metadata,
                              const std::function<bool(double)>& progress) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty())
        header["__metadata__"] = metadata;
    uint64_t offset = 0;
    for (const auto& t : tensors) {
        header[t.name] = {{"dtype", stDtypeName(t.dtype)},
                          {"shape", t.shape},
                          {"data_offsets", {offset, offset + t.bytes}}};
        offset += t.bytes;
    }
    std::string json = header.dump();
    while ((8 + json.size()) % 8 != 0)
        json.push_back(' ');
    unsigned char len[8];
    uint64_t n = json.size();
    for (int i = 0; i < 8; ++i) {
        len[i] = static_cast<unsigned char>(n & 0xFF);
        n >>= 8;
    }
    files::AtomicWriter w;
    if (auto r = w.open(path); !r)
        return r;
    if (auto r = w.write(len, 8); !r)
        return r;
    if (auto r = w.write(json.data(), json.size()); !r)
        return r;
    constexpr size_t kStep = size_t(64) << 20; // bytes written between progress reports
    uint64_t written = 0;
    for (const auto& t : tensors)
        for (size_t done = 0; done < t.bytes;) {
            const size_t n = std::min(kStep, t.bytes - done);
            if (auto r = w.write(static_cast<const char*>(t.data) + done, n); !r)
                return r;
            done += n;
            written += n;
            if (progress && !progress(double(written) / double(std::max<uint64_t>(offset, 1))))
                return makeError(ErrorCode::Cancelled, "writing " + path + " was cancelled");
        }
    return w.commit();
}

} // namespace baton::engine
