#include "cli_support.h"

#include <baton/engine/books.h>
#include <baton/engine/text.h>
#include <baton/engine/tokenizer.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include <iostream>
#include <iterator>
#include <sstream>

namespace baton::cli {

void addModelOptions(Args& args) {
    args.option("model", "DIR",
                "Model folder (Hugging Face GPT-2 layout, safetensors only; default: the "
                "bundled baton-mini)")
        .option("weights", "f32|f16|bf16|int8|q4",
                "How the weights are held in memory: 16-bit floats, 8-bit or 4-bit blocks "
                "halve, quarter or divide by seven the memory read per token (CPU only for "
                "int8 and q4)",
                "f32")
        .flag("no-map",
              "Copy the weights into memory instead of using the mapped file's pages (the "
              "default where the file holds them in the --weights format, except bf16 on a "
              "CPU with native bf16 products, which is copied; the file may then be "
              "overwritten in place while loaded)")
        .option("adapter", "DIR",
                "A recurrence adapter (train --adapter) to load onto --model, the baseline "
                "model it was trained on (a model it is compared with is loaded without it)",
                "")
        .option("threads", "N",
                "Compute threads (default: all cores); decoding uses fewer while other programs "
                "keep cores busy",
                "0");
    addDeviceOption(args);
}

Args& addDeviceOption(Args& args) {
    return args.option("device", "DEV", "cpu, or cuda / cuda:N with a CUDA build of LibTorch",
                       "cpu");
}

std::string modelFolder(const Args& args) {
    if (args.has("model"))
        return args.get("model");
    const std::string bundled = bundledModelDir(kDefaultModel);
    if (bundled.empty())
        throw UsageError(std::string("--model DIR is required: the bundled default model (") +
                         kDefaultModel + ") is not installed");
    return bundled;
}

std::shared_ptr<engine::Model> loadModel(const Args& args) {
    engine::initializeRuntime(static_cast<int>(args.getInt("threads", 0, 1024)));
    return loadModelAt(modelFolder(args), args, args.get("adapter"));
}

std::shared_ptr<engine::Model> loadModelAt(const std::string& folder, const Args& args,
                                           const std::string& adapter) {
    engine::LoadOptions options;
    const auto weights = engine::parseWeightFormat(args.get("weights"));
    if (!weights)
        throw UsageError("--weights must be f32, f16, bf16, int8 or q4, not '" +
                         args.get("weights") + "'");
    options.weights = *weights;
    options.device = args.get("device");
    options.mapWeights = !args.has("no-map");
    options.adapter = adapter;
    auto model = engine::Model::load(folder, options);
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

void addUnwrapOption(Args& args) {
    args.flag("unwrap", "Read the files as `train` reads its corpus: hard-wrapped lines joined, "
                        "verse numbers dropped (for models trained that way, the default)");
}

std::vector<std::string> readTexts(const Args& args) {
    std::vector<std::string> texts;
    for (const auto& f : args.positional()) {
        texts.push_back(readText(f));
        if (args.has("unwrap"))
            texts.back() = engine::unwrapText(texts.back());
    }
    return texts;
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

std::vector<std::string> listBookFiles(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        if (!fs::exists(path, ec))
            throw CliError("not found: " + path);
        return {path};
    }
    std::vector<std::string> out;
    for (fs::recursive_directory_iterator
             it(path, fs::directory_options::follow_directory_symlink, ec),
         end;
         !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && engine::isBookFile(it->path().string()))
            out.push_back(it->path().string());
    }
    if (ec)
        throw CliError("cannot list " + path + ": " + ec.message());
    std::sort(out.begin(), out.end());
    if (out.empty())
        throw CliError("no .txt, .md or .epub files in " + path);
    return out;
}

std::string readBookText(const std::string& path) {
    auto book = engine::readBook(path, /*unwrap=*/false);
    check(book);
    return book->text;
}

} // namespace baton::cli
