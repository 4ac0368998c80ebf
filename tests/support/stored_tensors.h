// A safetensors file's tensors copied into memory and written back, for tests that
// make damaged, converted or sharded checkpoints out of a good one. Torch-free.
#pragma once

#include "model/safetensors.h"

#include <string>
#include <vector>

namespace baton::test {

struct StoredTensor {
    std::string name;
    engine::StDtype dtype;
    std::vector<int64_t> shape;
    std::vector<char> bytes;
};

// Every tensor of the file in file order; empty when it cannot be read.
inline std::vector<StoredTensor> readTensors(const std::string& path) {
    std::vector<StoredTensor> out;
    auto f = engine::openSafetensors(path);
    if (!f.ok())
        return out;
    for (const auto& t : f->tensors()) {
        StoredTensor x{t.name, t.dtype, t.shape, std::vector<char>(t.bytes())};
        if (!f->read(t, x.bytes.data()).ok())
            return {};
        out.push_back(std::move(x));
    }
    return out;
}

inline bool writeTensors(const std::string& path, const std::vector<StoredTensor>& tensors) {
    std::vector<engine::StWriteTensor> w;
    for (const auto& t : tensors)
        w.push_back({t.name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()});
    return engine::writeSafetensors(path, w).ok();
}

} // namespace baton::test
