// The safetensors format, read and written by Baton's own code (no pickle, ever).
//
// Layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the
// data region. openSafetensors() validates the whole header against the file
// before anything is allocated: every problem has its own ErrorCode.
#pragma once

#include "baton/engine/error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace baton::engine {

enum class StDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool, F8E4M3, F8E5M2 };

size_t stDtypeSize(StDtype dtype);
const char* stDtypeName(StDtype dtype);

struct StTensor {
    std::string name;
    StDtype dtype = StDtype::F32;
    std::vector<int64_t> shape;
    uint64_t begin = 0; // offsets in the data region
    uint64_t end = 0;

    int64_t numel() const;
    uint64_t bytes() const { return end - begin; }
};

constexpr uint64_t kMaxSafetensorsHeader = 100ull << 20; // 100 MB

class SafetensorsFile {
public:
    SafetensorsFile() = default;
    ~SafetensorsFile();
    SafetensorsFile(SafetensorsFile&& other) noexcept;
    SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::string& path() const { return m_path; }
    const std::vector<StTensor>& tensors() const { return m_tensors; }
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }
    const StTensor* find(const std::string& name) const;
    uint64_t fileSize() const { return m_fileSize; }
    // The raw header JSON (for identities).
    const std::string& headerJson() const { return m_header; }

    // Reads a tensor's bytes into dst (which holds t.bytes() bytes).
    Result<void> read(const StTensor& t, void* dst) const;

    // The tensor's bytes in a private memory map of the file (the whole file is
    // mapped on first use; no copy). Valid while this object or a holder of mapping()
    // lives. The file must not be truncated in place meanwhile (Baton replaces files
    // by renaming, never so).
    Result<const unsigned char*> mapped(const StTensor& t) const;
    // Keeps the map alive (after mapped()) for memory that outlives this object.
    std::shared_ptr<const void> mapping() const { return m_map; }
    // Takes the mapped pages that lie wholly inside [begin, end) of the data region
    // out of this process's resident memory; the kernel's page cache keeps them. A
    // loader calls it for the tensors it has consumed, so that loading a large
    // checkpoint into a smaller format never holds the whole file.
    void dropPages(uint64_t begin, uint64_t end) const;

    friend Result<SafetensorsFile> openSafetensors(const std::string& path);

private:
    std::string m_path;
    std::string m_header;
    int m_fd = -1;
    mutable std::shared_ptr<void> m_map; // the whole file, once mapped()
    uint64_t m_fileSize = 0;
    uint64_t m_dataStart = 0;
    std::vector<StTensor> m_tensors; // sorted by begin offset
    std::map<std::string, std::string> m_metadata;
};

Result<SafetensorsFile> openSafetensors(const std::string& path);

// A tensor to write: raw little-endian bytes.
struct StWriteTensor {
    std::string name;
    StDtype dtype = StDtype::F32;
    std::vector<int64_t> shape;
    const void* data = nullptr;
    size_t bytes = 0;
};

// Writes a safetensors file atomically (temp file + rename), the tensors in the order
// given. `progress`, when given, is called with the fraction written (0..1) every 64 MB
// or so; returning false stops the write (Cancelled) and leaves nothing behind.
Result<void> writeSafetensors(const std::string& path, const std::vector<StWriteTensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {},
                              const std::function<bool(double)>& progress = {});

} // namespace baton::engine
