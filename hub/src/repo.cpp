// The hub's side of a pull: repository ids, the file list at a revision, and which of
// its files a GPT-2 folder needs.
#include "baton/hub/hub.h"

#include "hub_answers.h"

#include <baton/common/json.h>

#include <cstdlib>
#include <map>
#include <regex>

namespace baton::hub {

const char* hubErrorCodeName(HubErrorCode code) {
    switch (code) {
    case HubErrorCode::InvalidArgument:
        return "invalid-argument";
    case HubErrorCode::Network:
        return "network";
    case HubErrorCode::NotFound:
        return "not-found";
    case HubErrorCode::Unauthorized:
        return "unauthorized";
    case HubErrorCode::NotGpt2:
        return "not-gpt2";
    case HubErrorCode::Checksum:
        return "checksum";
    case HubErrorCode::BadResponse:
        return "bad-response";
    case HubErrorCode::WriteFailed:
        return "write-failed";
    case HubErrorCode::AlreadyExists:
        return "already-exists";
    case HubErrorCode::Busy:
        return "busy";
    case HubErrorCode::Cancelled:
        return "cancelled";
    }
    return "unknown";
}

namespace {

bool repoNamePart(const std::string& s) {
    static const std::regex part("[A-Za-z0-9][A-Za-z0-9._-]{0,95}");
    return std::regex_match(s, part) && s.find("--") == std::string::npos &&
           s.find("..") == std::string::npos && s.back() != '.' && s.back() != '-';
}

} // namespace

Result<RepoRef> parseRepoRef(const std::string& text) {
    RepoRef ref;
    const size_t at = text.find('@');
    ref.repo = text.substr(0, at);
    if (at != std::string::npos)
        ref.revision = text.substr(at + 1);
    const size_t slash = ref.repo.find('/');
    const bool ok = slash == std::string::npos ? repoNamePart(ref.repo)
                                               : repoNamePart(ref.repo.substr(0, slash)) &&
                                                     repoNamePart(ref.repo.substr(slash + 1));
    if (!ok)
        return fail(HubErrorCode::InvalidArgument,
                    "'" + text +
                        "' is not a repository id (owner/name, as on the hub, with "
                        "@REVISION for a branch, tag or commit)");
    static const std::regex revision("[A-Za-z0-9._/-]{1,200}");
    if (!std::regex_match(ref.revision, revision) || ref.revision.find("..") != std::string::npos)
        return fail(HubErrorCode::InvalidArgument,
                    "'" + ref.revision + "' is not a revision (a branch, tag or commit)");
    return ref;
}

std::string folderName(const RepoRef& ref) {
    std::string name = ref.repo;
    if (const size_t slash = name.find('/'); slash != std::string::npos)
        name.replace(slash, 1, "--");
    return name;
}

HubOptions optionsFromEnvironment(const std::string& userAgent) {
    HubOptions o;
    if (const char* e = std::getenv("HF_ENDPOINT"); e && *e) {
        o.endpoint = e;
        while (!o.endpoint.empty() && o.endpoint.back() == '/')
            o.endpoint.pop_back();
    }
    if (const char* t = std::getenv("HF_TOKEN"); t && *t)
        o.token = t;
    o.userAgent = userAgent;
    return o;
}

Result<RepoListing> listRepo(const HubOptions& options, const RepoRef& ref,
                             const engine::CancelToken& cancel) {
    HttpGet get;
    get.url = options.endpoint + "/api/models/" + ref.repo + "/revision/" +
              encode(ref.revision, false) + "?blobs=true";
    get.headers = headersFor(options);
    get.userAgent = options.userAgent;
    const HttpResponse r = httpGet(get, cancel);
    const std::string what = "listing " + ref.repo + "@" + ref.revision;
    if (!r.error.empty() || r.cancelled || r.status != 200)
        return answerError(r, what);
    std::string why;
    const auto body = json::parse(r.body, &why);
    if (!body || !body->is_object())
        return fail(HubErrorCode::BadResponse, what + ": not the hub's JSON (" + why + ")");
    RepoListing listing;
    listing.commit = json::stringOrEmpty(*body, "sha");
    if (!isHex(listing.commit, 40))
        return fail(HubErrorCode::BadResponse, what + ": the answer names no commit");
    const auto siblings = body->find("siblings");
    if (siblings == body->end() || !siblings->is_array())
        return fail(HubErrorCode::BadResponse, what + ": the answer lists no files");
    for (const auto& s : *siblings) {
        RemoteFile f;
        f.name = json::stringOrEmpty(s, "rfilename");
        f.gitSha1 = json::stringOrEmpty(s, "blobId");
        if (s.is_object() && s.contains("size") && s["size"].is_number_integer())
            f.size = s["size"].get<int64_t>();
        if (s.is_object() && s.contains("lfs") && s["lfs"].is_object()) {
            f.sha256 = json::stringOrEmpty(s["lfs"], "sha256");
            if (s["lfs"].contains("size") && s["lfs"]["size"].is_number_integer())
                f.size = s["lfs"]["size"].get<int64_t>();
        }
        if (!f.name.empty())
            listing.files.push_back(std::move(f));
    }
    return listing;
}

Result<std::vector<RemoteFile>> gpt2Files(const RepoListing& listing) {
    std::map<std::string, const RemoteFile*> byName;
    for (const RemoteFile& f : listing.files)
        byName[f.name] = &f;
    std::vector<RemoteFile> out;
    auto take = [&](const std::string& name) {
        const auto it = byName.find(name);
        if (it == byName.end())
            return false;
        out.push_back(*it->second);
        return true;
    };
    if (!take("config.json"))
        return fail(HubErrorCode::NotGpt2, "the repository has no config.json: not a model Baton "
                                           "can load");
    static const std::regex shard("model-[0-9]{5}-of-[0-9]{5}\\.safetensors");
    if (!take("model.safetensors")) {
        std::vector<std::string> shards;
        for (const auto& [name, f] : byName)
            if (std::regex_match(name, shard))
                shards.push_back(name);
        if (shards.empty() || !byName.count("model.safetensors.index.json")) {
            auto endsWith = [](const std::string& name, const std::string& end) {
                return name.size() > end.size() &&
                       name.compare(name.size() - end.size(), end.size(), end) == 0;
            };
            bool pickles = false;
            for (const auto& [name, f] : byName)
                for (const char* end : {".bin", ".pt", ".pth", ".ckpt"})
                    pickles = pickles || endsWith(name, end);
            return fail(HubErrorCode::NotGpt2,
                        pickles ? "the repository has only pickled PyTorch weights "
                                  "(pytorch_model.bin or .pt): Baton never loads those, since "
                                  "opening one can run any code it holds; choose a repository "
                                  "with model.safetensors (or convert it with the safetensors "
                                  "tools and load the folder)"
                                : "the repository has no safetensors weights "
                                  "(model.safetensors)");
        }
        take("model.safetensors.index.json");
        for (const std::string& s : shards)
            take(s);
    }
    const bool bpe = byName.count("vocab.json") && byName.count("merges.txt");
    if (bpe) {
        take("vocab.json");
        take("merges.txt");
    }
    const bool json = take("tokenizer.json");
    const bool spm = take("tokenizer.model");
    if (!bpe && !json && !spm)
        return fail(HubErrorCode::NotGpt2, "the repository has no tokenizer (vocab.json and "
                                           "merges.txt, tokenizer.json or tokenizer.model)");
    for (const char* optional :
         {"generation_config.json", "tokenizer_config.json", "special_tokens_map.json"})
        take(optional);
    for (const RemoteFile& f : out) {
        if (f.sha256.empty() ? !isHex(f.gitSha1, 40) : !isHex(f.sha256, 64))
            return fail(HubErrorCode::BadResponse,
                        "the hub gives no checksum for " + f.name + ": it cannot be checked");
        // No size, or one no file has (a petabyte): not the hub's answer.
        if (f.size < 0 || f.size > (int64_t(1) << 50))
            return fail(HubErrorCode::BadResponse, "the hub gives no usable size for " + f.name);
    }
    return out;
}

} // namespace baton::hub
