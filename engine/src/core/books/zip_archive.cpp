#include "books/zip_archive.h"

#include <zip.h>

namespace baton::engine::books {

Result<std::unique_ptr<ZipArchive>> ZipArchive::open(const std::string& path) {
    int code = 0;
    zip* archive = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (!archive) {
        zip_error_t error;
        zip_error_init_with_code(&error, code);
        std::string why = zip_error_strerror(&error);
        zip_error_fini(&error);
        return makeError(ErrorCode::BookInvalid,
                         path + " is not a readable EPUB (zip) file: " + why);
    }
    return std::unique_ptr<ZipArchive>(new ZipArchive(archive));
}

ZipArchive::~ZipArchive() {
    zip_discard(m_zip);
}

bool ZipArchive::has(const std::string& name) const {
    return zip_name_locate(m_zip, name.c_str(), 0) >= 0;
}

Result<std::string> ZipArchive::read(const std::string& name) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(m_zip, name.c_str(), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        return makeError(ErrorCode::BookInvalid, "the EPUB has no file " + name);
    if (st.size > kMaxEntryBytes || m_readBytes + st.size > kMaxTotalBytes)
        return makeError(ErrorCode::BookInvalid, "the EPUB's " + name +
                                                     " is larger than Baton reads (" +
                                                     std::to_string(st.size) + " bytes)");
    zip_file_t* file = zip_fopen(m_zip, name.c_str(), 0);
    if (!file)
        return makeError(ErrorCode::BookInvalid,
                         "the EPUB's " + name + " cannot be read: " + zip_strerror(m_zip));
    std::string bytes(size_t(st.size), '\0');
    const zip_int64_t got = bytes.empty() ? 0 : zip_fread(file, bytes.data(), st.size);
    // One byte more must not come: the size in the directory is what the data holds.
    char extra = 0;
    const zip_int64_t more = zip_fread(file, &extra, 1);
    const bool damaged = got != zip_int64_t(st.size) || more != 0;
    zip_fclose(file);
    if (damaged)
        return makeError(ErrorCode::BookInvalid, "the EPUB's " + name + " is damaged");
    m_readBytes += st.size;
    return bytes;
}

} // namespace baton::engine::books
