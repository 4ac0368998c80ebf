#include "database_options.h"

#include "commands.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace baton::cli {

namespace {

std::string g_globalDatabase;

} // namespace

void setDatabasePath(const std::string& path) {
    g_globalDatabase = path;
}

std::string defaultDatabasePath() {
    std::string base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/')
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = std::string(home) + "/.local/share";
    else
        throw CliError("cannot find the data folder: set HOME or XDG_DATA_HOME, or give --db PATH");
    return base + "/baton/baton.db";
}

// mkdir -p for the database's folder.
static void makeFolders(const std::string& file) {
    for (size_t pos = 1; (pos = file.find('/', pos)) != std::string::npos; ++pos) {
        const std::string dir = file.substr(0, pos);
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
            throw CliError("cannot create the folder " + dir + ": " + std::strerror(errno));
    }
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
    auto db = storage::Database::open(path);
    checkStorage(db);
    return std::move(*db);
}

} // namespace baton::cli
