// Downloading GPT-2 checkpoints from the Hugging Face Hub, by the hub's own conventions
// (as its client library, huggingface_hub, uses them: hub/README.md):
//   - the file list, with each LFS file's sha256, from
//     {endpoint}/api/models/{repo}/revision/{revision}?blobs=true;
//   - each file from {endpoint}/{repo}/resolve/{commit}/{file}, pinned to the commit the
//     list was read at, following the redirect to the CDN;
//   - HF_ENDPOINT for a mirror, HF_TOKEN for gated or private repositories (sent as a
//     Bearer token to the hub, never to another host), the proxy variables.
// Only what a GPT-2 folder needs is fetched (config, safetensors weights, single or
// sharded with their index, the tokenizer's files, the generation config), never a
// pickled checkpoint: a repository that has only those is refused with the reason.
// Every file is checked (sha256 for LFS files, the git blob hash for the others) before
// the folder is used. Files are written under a hidden partial folder beside the target
// and resumed from where they stopped (HTTP ranges); the folder gets its name only when
// every file is there and checked, so a partial download never looks like a model.
//
// Qt-free, for baton-cli and the app (which runs it off the GUI thread).
#pragma once

#include "baton/common/result.h"

#include <baton/engine/cancel.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace baton::hub {

enum class HubErrorCode {
    InvalidArgument, // a repository id or revision that cannot be one
    Network,         // no connection, a transfer cut off, a stalled transfer
    NotFound,        // no such repository, revision or file
    Unauthorized,    // gated or private: a token with access is needed
    NotGpt2,         // nothing Baton can load (no safetensors weights, no tokenizer, ...)
    Checksum,        // a file's bytes are not the ones the hub lists
    BadResponse,     // an answer that is not what the hub sends
    WriteFailed,     // the disk is full, the folder is not writable, ...
    AlreadyExists,   // the target folder exists and is not this download
    Busy,            // another process is downloading the same model there now
    Cancelled,
};
const char* hubErrorCodeName(HubErrorCode code);

struct HubError {
    HubErrorCode code = HubErrorCode::Network;
    std::string message; // a sentence for a person
    long httpStatus = 0; // the hub's answer, when there was one
};

template <typename T>
using Result = baton::Result<T, HubError>;

// "owner/name[@revision]" (or a bare legacy id such as "gpt2").
struct RepoRef {
    std::string repo;
    std::string revision = "main";
};
Result<RepoRef> parseRepoRef(const std::string& text);
// The folder name a repository is saved under: "owner--name" (a bare id as it is).
std::string folderName(const RepoRef& ref);

struct HubOptions {
    std::string endpoint = "https://huggingface.co";
    std::string token;     // "" : none
    std::string userAgent; // "baton/VERSION"
};
// HF_ENDPOINT and HF_TOKEN from the environment (then the defaults above).
HubOptions optionsFromEnvironment(const std::string& userAgent);

struct RemoteFile {
    std::string name;
    int64_t size = -1;   // -1: the hub did not say
    std::string sha256;  // LFS files
    std::string gitSha1; // the git blob id (every file)
};

struct RepoListing {
    std::string commit;
    std::vector<RemoteFile> files;
};
Result<RepoListing> listRepo(const HubOptions& options, const RepoRef& ref,
                             const engine::CancelToken& cancel = {});

// The files of a listing a GPT-2 folder needs, or NotGpt2 with what is missing (a
// repository with only pickled weights is refused, saying why).
Result<std::vector<RemoteFile>> gpt2Files(const RepoListing& listing);

struct PullProgress {
    std::string file;  // the file being fetched
    int64_t done = 0;  // bytes of the whole download that are there
    int64_t total = 0; // bytes of the whole download
    double bytesPerSecond = 0;
    double secondsLeft = -1; // -1: not known yet
};

struct PullResult {
    std::string folder; // the model folder
    std::string commit;
    int64_t bytes = 0;         // the folder's files
    int64_t downloaded = 0;    // bytes fetched this time (resumed ones not counted)
    bool alreadyThere = false; // the folder held this commit already: nothing fetched
};

// Downloads the repository's GPT-2 files into destination/folderName(ref). A download
// that stopped (cut off, cancelled, a full disk) resumes where it stopped when asked
// again. A folder of that name that is not an earlier pull of this repository is left
// alone (AlreadyExists). Two pulls of one model into one destination at once: the
// second is refused (Busy; a lock file, DEST/.NAME.lock, beside the folder).
Result<PullResult> pull(const HubOptions& options, const RepoRef& ref,
                        const std::string& destination,
                        const std::function<void(const PullProgress&)>& progress = {},
                        const engine::CancelToken& cancel = {});

} // namespace baton::hub
