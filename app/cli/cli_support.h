// Helpers shared by baton-cli's commands: errors, loading the model, reading text and book files.
#pragma once

#include "args.h"

#include <baton/app/paths.h>

#include <baton/engine/error.h>
#include <baton/engine/model.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton::cli {

// A runtime failure: printed as "error: ..." with exit status 1.
class CliError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws CliError with the engine's message (and its code name) when r failed.
template <typename R>
void check(const R& r) {
    if (!r.ok())
        throw CliError(r.error().message + " [" + engine::errorCodeName(r.error().code) + "]");
}

// The bundled model used when a command is given no --model (app/paths/include/baton/app/paths.h).
using app::bundledModelDir;
using app::kDefaultModel;

void addModelOptions(Args& args);
// --device DEV: cpu, or cuda / cuda:N (the model loader checks it).
Args& addDeviceOption(Args& args);
std::shared_ptr<engine::Model> loadModel(const Args& args);
// Another model folder with the same options (--weights, --device, --no-map); --adapter
// belongs to --model alone, so a model compared with it is loaded with `adapter` only.
std::shared_ptr<engine::Model> loadModelAt(const std::string& folder, const Args& args,
                                           const std::string& adapter = {});
std::string modelFolder(const Args& args);

// Reads a text file ("-" is standard input); refuses invalid UTF-8 with the offset.
std::string readText(const std::string& path);
// --unwrap for commands that score books: read them as `train` reads its corpus.
void addUnwrapOption(Args& args);
// The positional files, each read with readText, unwrapped when --unwrap was given.
std::vector<std::string> readTexts(const Args& args);

// A file itself, or the book files (.txt, .md, .epub) under a folder (recursively,
// sorted by path).
std::vector<std::string> listBookFiles(const std::string& path);
// A book file's text, read by the engine's book reader (engine/books.h): an EPUB's
// chapters, else UTF-8 text as it is.
std::string readBookText(const std::string& path);

// Escapes for a tab-separated column: \t \n \\ and control bytes.
std::string escapeTsv(const std::string& s);

} // namespace baton::cli
