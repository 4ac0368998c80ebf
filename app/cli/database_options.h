// The story database for the commands that use one: the global --db (set by main),
// a command's own --db, or the user's data folder.
#pragma once

#include "args.h"
#include "cli_support.h"

#include <baton/storage/database.h>
#include <baton/storage/error.h>

#include <memory>
#include <string>

namespace baton::cli {

// Throws CliError with storage's description when r failed.
template <typename R>
void checkStorage(const R& r) {
    if (!r.ok())
        throw CliError(storage::describe(r.error()));
}

// $XDG_DATA_HOME/baton/baton.db, else ~/.local/share/baton/baton.db.
std::string defaultDatabasePath();
void addDbOption(Args& args);
// Opens (creating the folders and the file when needed) the database args name.
std::unique_ptr<storage::Database> openDatabase(const Args& args);

} // namespace baton::cli
