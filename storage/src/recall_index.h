// The recall index's writes, for the stores that write passages (recall_store.h).
#pragma once

#include <cstdint>

namespace baton::storage {

class Connection;

// Replaces the passage's chunks with those of its current text and takes it off the
// waiting list, in the caller's transaction. Throws SqliteException.
void indexPassage(Connection& db, int64_t passageId);

} // namespace baton::storage
