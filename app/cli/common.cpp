#include "common.h"

#include <baton/engine/text.h>
#include <baton/engine/tokenizer.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <iostream>
#include <iterator>
#include <sstream>

namespace baton::cli {

void addModelOptions(Args& args) {
    args.option("model", "DIR", "Model folder (Hugging Face GPT-2 layout, safetensors only)")
        .option("dtype", "f32|bf16", "Compute dtype; bf16 needs a CPU with AVX512-BF16", "f32")
        .option("device", "DEV", "cpu, or cuda / cuda:N with a CUDA build of LibTorch", "cpu")
        .option("threads", "N", "Compute threads (default: all cores)", "0");
}

std::string modelFolder(const Args& args) {
    if (!args.has("model"))
        throw UsageError("--model DIR is required");
    return args.get("model");
}

std::shared_ptr<engine::Model> loadModel(const Args& args) {
    engine::initializeRuntime(static_cast<int>(args.getInt("threads", 0, 1024)));
    engine::LoadOptions options;
    const std::string dtype = args.get("dtype");
    if (dtype == "f32")
        options.dtype = engine::ComputeDtype::Float32;
    else if (dtype == "bf16")
        options.dtype = engine::ComputeDtype::BFloat16;
    else
        throw UsageError("--dtype must be f32 or bf16, not '" + dtype + "'");
    options.device = args.get("device");
    auto model = engine::Model::load(modelFolder(args), options);
    check(model);
    return *model;
}

std::string readText(const std::string& path) {
    std::string data;
    if (path == "-") {
        data.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f)
            throw CliError("cannot open " + path + ": " + std::strerror(errno));
        char buf[1 << 16];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
            data.append(buf, n);
        const bool failed = std::ferror(f);
        std::fclose(f);
        if (failed)
            throw CliError("cannot read " + path);
    }
    if (const size_t bad = engine::firstInvalidUtf8(data); bad != std::string::npos)
        throw CliError(path + " is not valid UTF-8 (first bad byte at offset " +
                       std::to_string(bad) + "); convert it to UTF-8 first");
    return data;
}

std::string escapeTsv(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '\t':
            out += "\\t";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\\':
            out += "\\\\";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char hex[8];
                std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
                out += hex;
            } else {
                out += c;
            }
        }
    }
    return out;
}

} // namespace baton::cli
