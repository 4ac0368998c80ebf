// A model's content hash remembered by the identities of the files it was computed
// from, so that opening the same files again does not read every byte to name them
// (GPT-2 XL stored in F16: 3.1 GB, most of its load when its weights are mapped, since
// nothing else reads them before they are used).
//
// A file's identity is its device, inode, size, and modification and status-change
// times to the nanosecond: every write sets the status-change time, which no program
// can set back, and a file replaced by another is another inode. Files changed in the
// last few seconds are never remembered (a second write within the clock tick of the
// first would leave the times as they were), nor files that changed while they were
// hashed. A memo is only a shortcut: one that cannot be read, or does not read exactly
// as written, counts as absent, and failing to write one is not an error.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace baton::engine {

// Where memos are kept; empty (the default) keeps none. Files changed in the last
// settleSeconds are not remembered (tests, whose files are all new, pass 0).
void setIdentityMemoFolder(const std::string& folder, int settleSeconds = 3);
std::string identityMemoFolder();

// The key of the hash made by `recipe` (a name that must change whenever the way the
// hash is computed does) over these files, or nullopt when memos are off, a file
// cannot be examined, or one changed too recently.
std::optional<std::string> identityMemoKey(const std::string& recipe,
                                           const std::vector<std::string>& paths);

// The digest remembered under key (16 hexadecimal digits), if any.
std::optional<std::string> recallIdentity(const std::string& key);
// Remembers digest under key: written whole to a temporary file, then renamed.
void rememberIdentity(const std::string& key, const std::string& digest);

} // namespace baton::engine
