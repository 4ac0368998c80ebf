// A SQLite VFS for tests that fails the Nth write, sync or read, the way SQLite's own
// test suite injects I/O errors. It wraps the default VFS and becomes the default
// while installed, so Database::open uses it unchanged. Counting starts at arm().
#pragma once

#include <cstdint>

namespace baton::test {

enum class Fault {
    DiskFull,   // the write returns SQLITE_FULL, nothing written
    WriteError, // the write returns SQLITE_IOERR_WRITE, nothing written
    ShortWrite, // half the buffer is written, then SQLITE_IOERR_WRITE (a torn write)
    SyncError,  // the Nth sync returns SQLITE_IOERR_FSYNC
    ReadError,  // the Nth read returns SQLITE_IOERR_READ
};

class FaultVfs {
public:
    FaultVfs();  // registers the VFS as the default
    ~FaultVfs(); // restores the previous default
    FaultVfs(const FaultVfs&) = delete;
    FaultVfs& operator=(const FaultVfs&) = delete;

    // Fails the nth operation of the fault's kind (1-based) from now on, and only it
    // (later ones succeed, as after a transient error), or every one from the nth on
    // when `persistent` (a disk that stays full).
    void arm(Fault fault, int64_t nth, bool persistent = false);
    void disarm();
    // Operations of the armed kind counted since arm() (the dry run's measure of how
    // many there are), and whether the fault fired.
    int64_t count() const;
    bool fired() const;
};

} // namespace baton::test
