#include "fault_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace baton::test {

namespace {

struct State {
    sqlite3_vfs* real = nullptr;
    std::atomic<bool> armed{false};
    Fault fault = Fault::DiskFull;
    int64_t nth = 0;
    bool persistent = false;
    std::atomic<int64_t> count{0};
    std::atomic<bool> fired{false};
};
State g_state;

// A file of ours: our methods first, the real VFS's file after it.
struct File {
    sqlite3_file base;
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
File* cast(sqlite3_file* f) {
    return reinterpret_cast<File*>(f);
}

// Whether the armed fault is one of these kinds.
bool armedFor(std::initializer_list<Fault> kinds) {
    if (!g_state.armed.load())
        return false;
    for (Fault k : kinds)
        if (k == g_state.fault)
            return true;
    return false;
}

// Whether this operation (of the armed kind) fails.
bool strike() {
    const int64_t n = ++g_state.count;
    if (n == g_state.nth || (g_state.persistent && n > g_state.nth)) {
        g_state.fired = true;
        return true;
    }
    return false;
}

int xClose(sqlite3_file* f) {
    sqlite3_file* r = cast(f)->real();
    const int rc = r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
    return rc;
}
int xRead(sqlite3_file* f, void* buf, int amount, sqlite3_int64 offset) {
    if (armedFor({Fault::ReadError}) && strike())
        return SQLITE_IOERR_READ;
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xRead(r, buf, amount, offset);
}
int xWrite(sqlite3_file* f, const void* buf, int amount, sqlite3_int64 offset) {
    sqlite3_file* r = cast(f)->real();
    if (armedFor({Fault::DiskFull, Fault::WriteError, Fault::ShortWrite}) && strike()) {
        switch (g_state.fault) {
        case Fault::DiskFull:
            return SQLITE_FULL;
        case Fault::ShortWrite:
            r->pMethods->xWrite(r, buf, amount / 2, offset);
            return SQLITE_IOERR_WRITE;
        default:
            return SQLITE_IOERR_WRITE;
        }
    }
    return r->pMethods->xWrite(r, buf, amount, offset);
}
int xTruncate(sqlite3_file* f, sqlite3_int64 size) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xTruncate(r, size);
}
int xSync(sqlite3_file* f, int flags) {
    if (armedFor({Fault::SyncError}) && strike())
        return SQLITE_IOERR_FSYNC;
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xSync(r, flags);
}
int xFileSize(sqlite3_file* f, sqlite3_int64* size) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xFileSize(r, size);
}
int xLock(sqlite3_file* f, int level) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xLock(r, level);
}
int xUnlock(sqlite3_file* f, int level) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xUnlock(r, level);
}
int xCheckReservedLock(sqlite3_file* f, int* out) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xCheckReservedLock(r, out);
}
int xFileControl(sqlite3_file* f, int op, void* arg) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xFileControl(r, op, arg);
}
int xSectorSize(sqlite3_file* f) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xSectorSize(r);
}
int xDeviceCharacteristics(sqlite3_file* f) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xDeviceCharacteristics(r);
}
int xShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xShmMap(r, page, size, extend, out);
}
int xShmLock(sqlite3_file* f, int offset, int n, int flags) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xShmLock(r, offset, n, flags);
}
void xShmBarrier(sqlite3_file* f) {
    sqlite3_file* r = cast(f)->real();
    r->pMethods->xShmBarrier(r);
}
int xShmUnmap(sqlite3_file* f, int deleteFlag) {
    sqlite3_file* r = cast(f)->real();
    return r->pMethods->xShmUnmap(r, deleteFlag);
}
// No memory-mapped reads: every read goes through xRead, where faults are injected.
int xFetch(sqlite3_file*, sqlite3_int64, int, void** out) {
    *out = nullptr;
    return SQLITE_OK;
}
int xUnfetch(sqlite3_file*, sqlite3_int64, void*) {
    return SQLITE_OK;
}

const sqlite3_io_methods kMethods = {3,
                                     xClose,
                                     xRead,
                                     xWrite,
                                     xTruncate,
                                     xSync,
                                     xFileSize,
                                     xLock,
                                     xUnlock,
                                     xCheckReservedLock,
                                     xFileControl,
                                     xSectorSize,
                                     xDeviceCharacteristics,
                                     xShmMap,
                                     xShmLock,
                                     xShmBarrier,
                                     xShmUnmap,
                                     xFetch,
                                     xUnfetch};

int vfsOpen(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* outFlags) {
    File* f = cast(file);
    std::memset(f, 0, sizeof(File));
    sqlite3_file* r = f->real();
    const int rc = g_state.real->xOpen(g_state.real, name, r, flags, outFlags);
    // SQLite calls xClose even when xOpen fails, provided pMethods is set.
    f->base.pMethods = r->pMethods ? &kMethods : nullptr;
    return rc;
}

sqlite3_vfs g_vfs;

} // namespace

FaultVfs::FaultVfs() {
    g_state.real = sqlite3_vfs_find(nullptr);
    if (!g_state.real || std::strcmp(g_state.real->zName, "baton-fault") == 0)
        std::abort(); // one at a time
    g_vfs = *g_state.real;
    g_vfs.zName = "baton-fault";
    g_vfs.szOsFile = int(sizeof(File)) + g_state.real->szOsFile;
    g_vfs.xOpen = vfsOpen;
    g_vfs.pNext = nullptr;
    disarm();
    sqlite3_vfs_register(&g_vfs, 1);
}

FaultVfs::~FaultVfs() {
    disarm();
    sqlite3_vfs_unregister(&g_vfs);
    sqlite3_vfs_register(g_state.real, 1);
}

void FaultVfs::arm(Fault fault, int64_t nth, bool persistent) {
    g_state.armed = false;
    g_state.fault = fault;
    g_state.nth = nth;
    g_state.persistent = persistent;
    g_state.count = 0;
    g_state.fired = false;
    g_state.armed = true;
}

void FaultVfs::disarm() {
    g_state.armed = false;
}

int64_t FaultVfs::count() const {
    return g_state.count;
}

bool FaultVfs::fired() const {
    return g_state.fired;
}

} // namespace baton::test
