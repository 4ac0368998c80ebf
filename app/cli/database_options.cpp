#include "database_options.h"

#include "commands.h"

#include <baton/app/paths.h>

#include <cstdio>

namespace baton::cli {

namespace {

std::string g_globalDatabase;

} // namespace

void setDatabasePath(const std::string& path) {
    g_globalDatabase = path;
}

std::string defaultDatabasePath() {
    const std::string path = app::defaultDatabasePath();
    if (path.empty())
        throw CliError("cannot find the data folder: set HOME or XDG_DATA_HOME, or give --db PATH");
    return path;
}

// mkdir -p for the database's folder.
static void makeFolders(const std::string& file) {
    if (const std::string error = app::makeParentFolders(file); !error.empty())
        throw CliError(error);
}

void addDbOption(Args& args) {
    args.option("db", "PATH",
                "The story database (default: the global --db, else "
                "$XDG_DATA_HOME/baton/baton.db or ~/.local/share/baton/baton.db)");
}

std::unique_ptr<storage::Database> openDatabase(const Args& args) {
    std::string path = args.has("db") ? args.get("db") : g_globalDatabase;
    if (path.empty()) {
        path = defaultDatabasePath();
        makeFolders(path);
    }
    // An older database is indexed for recall as it opens: say so when it takes a while.
    storage::OpenOptions options;
    options.indexProgress = [](int64_t done, int64_t total) {
        if (total >= 2000)
            std::fprintf(stderr, "\rindexing the stories for recall: %lld of %lld passages%s",
                         static_cast<long long>(done), static_cast<long long>(total),
                         done >= total ? "\n" : "");
        return true;
    };
    auto db = storage::Database::open(path, options);
    checkStorage(db);
    return std::move(*db);
}

} // namespace baton::cli
