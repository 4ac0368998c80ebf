// The writer of the kill -9 harness (tst_storage_crash): streams chunks into one
// story, each chunk and its state in one transaction, and after each commit has
// returned writes the chunk's index to SIDE (then fsyncs it). It runs until killed
// or until COUNT chunks are written.
//   storage_crash_writer DB SIDE COUNT
#include "crash_chunk.h"

#include "titled_story.h"

#include <baton/storage/database.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace baton::storage;

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: storage_crash_writer DB SIDE COUNT\n");
        return 2;
    }
    const long long count = std::atoll(argv[3]);
    auto db = Database::open(argv[1]);
    if (!db) {
        std::fprintf(stderr, "%s\n", describe(db.error()).c_str());
        return 1;
    }
    auto& stories = (*db)->stories();
    int64_t story = 0;
    auto r = (*db)->transaction([&]() -> Result<void> {
        auto list = stories.list();
        if (!list)
            return list.error();
        if (!list->empty()) {
            story = list->front().id;
            return {};
        }
        auto created = stories.create(titled("crash"));
        if (!created)
            return created.error();
        story = *created;
        return {};
    });
    if (!r) {
        std::fprintf(stderr, "%s\n", describe(r.error()).c_str());
        return 1;
    }
    auto existing = stories.passageCount(story);
    if (!existing)
        return 1;
    const int fd = ::open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return 1;
    for (int64_t i = *existing; i < *existing + count; ++i) {
        const std::string chunk = baton::test::makeChunk(i);
        auto w = (*db)->transaction([&]() -> Result<void> {
            auto passage = stories.append(story, chunk, PassageAuthor::Model);
            if (!passage)
                return passage.error();
            StoredState s;
            s.passageId = *passage;
            s.windowIndex = i / 10;
            s.tokenOffset = i * 10;
            s.modelIdentity = "crash-model";
            s.window = 64;
            s.overlap = 8;
            s.formatVersion = 1;
            s.blob = baton::test::chunkStateBlob(i);
            auto saved = (*db)->states().save(s);
            if (!saved)
                return saved.error();
            return {};
        });
        if (!w) {
            std::fprintf(stderr, "chunk %lld: %s\n", static_cast<long long>(i),
                         describe(w.error()).c_str());
            return 1;
        }
        // Committed: only now is the chunk reported.
        const std::string line = std::to_string(i) + "\n";
        if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            return 1;
        ::fsync(fd);
    }
    ::close(fd);
    return 0;
}
