// A safetensors file's header and layout (openSafetensors), then every tensor read
// through both paths (read() into a buffer and the memory map): whatever the bytes,
// either a clear error or tensors that lie inside the file, never a crash or a read
// outside it.
#include "fuzz_support.h"

#include "model/safetensors.h"

#include <cstring>

using namespace baton;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = fuzz::writeScratch("model.safetensors", fuzz::asText(data, size));
    auto file = engine::openSafetensors(path);
    if (!file) {
        fuzz::check(!file.error().message.empty(), "an error says what is wrong");
        return 0;
    }
    uint64_t total = 0;
    for (const auto& t : file->tensors()) {
        fuzz::check(t.begin <= t.end && t.end <= file->fileSize(), "tensor inside the file");
        fuzz::check(t.bytes() == uint64_t(t.numel()) * engine::stDtypeSize(t.dtype),
                    "bytes match shape and dtype");
        fuzz::check(file->find(t.name) == &t, "names are unique and found");
        total += t.bytes();
        if (t.bytes() > (uint64_t(64) << 20))
            continue;
        std::vector<unsigned char> buffer(t.bytes());
        if (auto r = file->read(t, buffer.data()); !r)
            continue;
        auto mapped = file->mapped(t);
        fuzz::check(bool(mapped), "a tensor read() can read is mapped too");
        fuzz::check(t.bytes() == 0 || std::memcmp(*mapped, buffer.data(), t.bytes()) == 0,
                    "read() and the map agree");
    }
    fuzz::check(total <= file->fileSize(), "tensors do not overlap");
    return 0;
}
