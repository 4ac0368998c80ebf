// Library shards: the bytes as a tar archive (plain, or xz-compressed when they start
// with xz's magic) through readLibraryShard: ustar and pax headers, GNU long names,
// sizes, checksums, padding. Errors say what is wrong; every work it gives is UTF-8,
// named after the shard, and within the size limit.
#include "fuzz_support.h"

#include <baton/engine/books.h>
#include <baton/engine/text.h>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    const std::string path = fuzz::writeScratch("shard.tar", bytes);
    size_t works = 0;
    auto r = engine::readLibraryShard(path, [&](engine::Book&& work) {
        ++works;
        fuzz::check(work.title.rfind("shard.tar/", 0) == 0, "a work is named after its shard");
        fuzz::check(engine::firstInvalidUtf8(work.text) == std::string::npos, "UTF-8 text");
        fuzz::check(work.text.size() <= engine::kMostLibraryWorkBytes, "within the limit");
        fuzz::check(work.text.size() <= size, "no more text than bytes");
        return true;
    });
    if (!r)
        fuzz::check(!r.error().message.empty(), "an error says what is wrong");
    return 0;
}
