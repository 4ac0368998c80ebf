#include "tokenizer/spm_library.h"

#include "util/files.h"

#include <cstdlib>
#include <dlfcn.h>
#include <limits.h>
#include <mutex>
#include <optional>
#include <unistd.h>
#include <vector>

namespace baton::engine {

namespace {
// RTLD_DEEPBIND keeps the module's protobuf apart from LibTorch's. The sanitizer and
// fuzzing builds have no LibTorch, and their runtime refuses RTLD_DEEPBIND.
#ifdef BATON_NO_DEEPBIND
constexpr int kDeepBind = 0;
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif

std::string executableDir() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0)
        return {};
    std::string path(buf, static_cast<size_t>(n));
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::vector<std::string> candidates() {
    std::vector<std::string> out;
    if (const char* env = std::getenv("BATON_SPM_MODULE"); env && *env)
        out.emplace_back(env);
    const std::string exe = executableDir();
    if (!exe.empty()) {
        out.push_back(exe + "/../lib/baton/baton_spm.so");
        out.push_back(exe + "/../" BATON_LIBDIR "/baton/baton_spm.so");
        out.push_back(exe + "/baton_spm.so");
    }
    out.emplace_back(BATON_SPM_BUILD_PATH);
    return out;
}

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(::dlsym(handle, name));
    return fn != nullptr;
}

Result<const SpmLibrary*> loadOnce() {
    static SpmLibrary lib;
    std::string tried;
    for (const std::string& path : candidates()) {
        if (!files::exists(path))
            continue;
        void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | kDeepBind);
        if (handle == nullptr) {
            tried += std::string(" ") + path + " (" + ::dlerror() + ")";
            continue;
        }
        BatonSpmAbiVersionFn version = nullptr;
        if (!resolve(handle, "baton_spm_abi_version", version) ||
            version() != BATON_SPM_ABI_VERSION) {
            tried += " " + path + " (wrong ABI version)";
            ::dlclose(handle);
            continue;
        }
        const bool all = resolve(handle, "baton_spm_load", lib.load) &&
                         resolve(handle, "baton_spm_free", lib.free) &&
                         resolve(handle, "baton_spm_vocab_size", lib.vocabSize) &&
                         resolve(handle, "baton_spm_encode", lib.encode) &&
                         resolve(handle, "baton_spm_piece", lib.piece) &&
                         resolve(handle, "baton_spm_piece_kind", lib.pieceKind) &&
                         resolve(handle, "baton_spm_special_id", lib.specialId) &&
                         resolve(handle, "baton_spm_decode", lib.decode) &&
                         resolve(handle, "baton_spm_train", lib.train);
        if (!all) {
            tried += " " + path + " (missing symbols)";
            ::dlclose(handle);
            continue;
        }
        lib.path = path;
        return &lib; // the module stays loaded for the life of the process
    }
    return makeError(ErrorCode::Unsupported,
                     "the SentencePiece module baton_spm.so was not found or could not be "
                     "loaded; set BATON_SPM_MODULE to its path." +
                         (tried.empty() ? std::string() : " Tried:" + tried));
}

} // namespace

Result<const SpmLibrary*> spmLibrary() {
    static std::once_flag once;
    static std::optional<Result<const SpmLibrary*>> result;
    std::call_once(once, [] { result.emplace(loadOnce()); });
    return *result;
}

} // namespace baton::engine
