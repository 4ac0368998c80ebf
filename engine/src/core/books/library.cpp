#include "baton/engine/books.h"
#include "books/tar_stream.h"
#include "util/files.h"
#include "util/utf8.h"

namespace baton::engine {

bool isLibraryShard(std::string_view path) {
    for (const char* ext : {".tar", ".tar.xz", ".txz"})
        if (files::endsWithNoCase(path, ext))
            return true;
    return false;
}

Result<void> readLibraryShard(const std::string& path, const std::function<bool(Book&&)>& onWork,
                              const CancelToken& cancel,
                              const std::function<void(double)>& progress) {
    auto opened = TarStream::open(path);
    if (!opened)
        return opened.error();
    TarStream& tar = **opened;
    const std::string shard = path.substr(path.find_last_of('/') + 1);
    std::string member, bytes;
    for (;;) {
        if (cancel.cancelled())
            return makeError(ErrorCode::Cancelled, "cancelled");
        auto more = tar.next(member, bytes, kMostLibraryWorkBytes);
        if (!more)
            return more.error();
        if (!*more)
            break;
        if (!isBookFile(member) || isEpubFile(member))
            continue;
        const std::string title = shard + "/" + member;
        if (const size_t bad = utf8::firstInvalid(bytes); bad != std::string::npos)
            return makeError(ErrorCode::InvalidUtf8,
                             title + " is not valid UTF-8 (first bad byte at offset " +
                                 std::to_string(bad) + ")");
        Book book;
        book.title = title;
        book.text = std::move(bytes);
        book.chapters = 1;
        if (progress)
            progress(tar.fraction());
        if (!onWork(std::move(book)))
            return {};
    }
    if (progress)
        progress(1.0);
    return {};
}

} // namespace baton::engine
