// File helpers shared by the engine core.
#pragma once

#include "baton/engine/error.h"

#include <string>
#include <string_view>

namespace baton::engine::files {

bool exists(const std::string& path);
bool isDirectory(const std::string& path);

// Reads a whole file; FileNotFound / FileUnreadable on failure. Refuses files over
// `maxBytes` with InvalidArgument.
Result<std::string> readAll(const std::string& path, size_t maxBytes = size_t(1) << 32);

// Writes `data` to `path` atomically: a temporary file in the same folder, fsync,
// rename over the target, fsync of the folder. Never leaves a half-written file.
Result<void> writeAtomically(const std::string& path, std::string_view data);

std::string join(const std::string& folder, const std::string& name);
// Whether `s` ends with `lowerSuffix` (given in lower case), ignoring ASCII case:
// a file name's extension.
bool endsWithNoCase(std::string_view s, std::string_view lowerSuffix);

// mkdir -p; true if the folder exists afterwards.
bool makeDirectories(const std::string& path);
// rm -r (no error if absent).
void removeTree(const std::string& path);
// Moves the complete folder `from` to `to`, replacing an existing `to`: the old one
// is renamed aside first and removed last, so `to` is never half-written.
Result<void> replaceDirectory(const std::string& from, const std::string& to);
// Syncs a folder's entries to disk.
void syncDirectory(const std::string& path);

// Streams a file into place atomically: writes go to a temporary file beside the
// target; commit() syncs and renames it over the target. Destroying an uncommitted
// writer removes the temporary file, so a crash never leaves a half-written target.
class AtomicWriter {
public:
    AtomicWriter() = default;
    ~AtomicWriter();
    AtomicWriter(const AtomicWriter&) = delete;
    AtomicWriter& operator=(const AtomicWriter&) = delete;

    Result<void> open(const std::string& path);
    Result<void> write(const void* data, size_t size);
    Result<void> commit();

private:
    std::string m_path;
    std::string m_tmp;
    int m_fd = -1;
};

} // namespace baton::engine::files
