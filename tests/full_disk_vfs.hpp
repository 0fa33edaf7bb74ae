// A test seam for a full disk under SQLite: a VFS that wraps the default one and, once
// armed, answers SQLITE_FULL to every write of a file whose path starts with a prefix
// (the test's temporary directory), the way a filesystem without free space does.
// limit_wal_bytes() makes a smaller disk: only the write-ahead log's writes past an
// offset fail, so large transactions are refused and small ones commit.
// Reads, syncs, locks and shared memory pass through, so a connection keeps working for
// reads and recovers by itself once disarmed (space returned).
//
// full_disk_vfs_scope installs it as the default VFS for its lifetime (every
// sqlite3_open_v2 with no VFS name uses it) and puts the previous default back after.
// Connections opened through it may outlive the scope: the VFS and its state are
// static. One scope at a time; arm/disarm from any thread (atomics). Test-only.
#pragma once

#include <atomic>
#include <cassert>
#include <cstring>
#include <mutex>
#include <string>

#include <sqlite3.h>

namespace mneme::testing {

class full_disk_vfs {
 public:
  // Writes to the files opened under the installed prefix fail with SQLITE_FULL from
  // now on.
  static void arm() { state().armed.store(true); }
  static void disarm() { state().armed.store(false); }
  // A disk with room for `bytes` of write-ahead log (< 0: no limit, the default): a
  // write to a watched "-wal" file that would reach past that offset fails with
  // SQLITE_FULL, so a transaction whose log is longer is refused and shorter ones
  // (after the log restarts from its start) go through. Independent of arm().
  static void limit_wal_bytes(long bytes) { state().wal_limit.store(bytes); }
  // Writes refused since the process started.
  static long refused_writes() { return state().refused.load(); }

  // Makes the shim the default VFS (registered once per process); files opened from
  // now on under `path_prefix` are the ones arm() makes fail.
  static void install(const std::string& path_prefix) {
    auto& s = state();
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.prefix = path_prefix;
    }
    std::call_once(s.registered, [&s] {
      s.real = sqlite3_vfs_find(nullptr);
      assert(s.real);
      s.vfs = *s.real;
      s.vfs.zName = "mneme_full_disk";
      s.vfs.szOsFile = static_cast<int>(sizeof(shim_file)) + s.real->szOsFile;
      s.vfs.pAppData = nullptr;
      s.vfs.pNext = nullptr;
      s.vfs.xOpen = &open;
    });
    sqlite3_vfs_register(&s.vfs, 1);
  }
  // Puts the real VFS back as the default; the shim stays registered for the
  // connections still open through it.
  static void restore_default() {
    disarm();
    limit_wal_bytes(-1);
    sqlite3_vfs_register(state().real, 1);
  }

 private:
  struct shim_file {
    sqlite3_file base;
    sqlite3_file* real;  // lives right after this struct in the same allocation
    bool watched;        // the path starts with the prefix
    bool wal;            // watched, and a write-ahead log ("-wal")
  };
  struct shared_state {
    std::once_flag registered;
    sqlite3_vfs* real = nullptr;
    sqlite3_vfs vfs{};
    sqlite3_io_methods methods{};
    std::atomic<bool> armed{false};
    std::atomic<long> refused{0};
    std::atomic<long> wal_limit{-1};
    std::mutex mutex;
    std::string prefix;
  };
  static shared_state& state() {
    static shared_state s;
    return s;
  }
  static sqlite3_file* real_of(sqlite3_file* f) { return reinterpret_cast<shim_file*>(f)->real; }

  static int write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
    auto* shim = reinterpret_cast<shim_file*>(f);
    auto wal_limit = state().wal_limit.load();
    if (shim->watched
        && (state().armed.load() || (shim->wal && wal_limit >= 0 && offset + amount > wal_limit))) {
      state().refused.fetch_add(1);
      return SQLITE_FULL;
    }
    return shim->real->pMethods->xWrite(shim->real, data, amount, offset);
  }
  static int close(sqlite3_file* f) { return real_of(f)->pMethods->xClose(real_of(f)); }
  static int read(sqlite3_file* f, void* d, int n, sqlite3_int64 o) {
    return real_of(f)->pMethods->xRead(real_of(f), d, n, o);
  }
  static int truncate(sqlite3_file* f, sqlite3_int64 size) {
    return real_of(f)->pMethods->xTruncate(real_of(f), size);
  }
  static int sync(sqlite3_file* f, int flags) {
    return real_of(f)->pMethods->xSync(real_of(f), flags);
  }
  static int file_size(sqlite3_file* f, sqlite3_int64* size) {
    return real_of(f)->pMethods->xFileSize(real_of(f), size);
  }
  static int lock(sqlite3_file* f, int l) { return real_of(f)->pMethods->xLock(real_of(f), l); }
  static int unlock(sqlite3_file* f, int l) { return real_of(f)->pMethods->xUnlock(real_of(f), l); }
  static int check_reserved(sqlite3_file* f, int* out) {
    return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
  }
  static int file_control(sqlite3_file* f, int op, void* arg) {
    return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
  }
  static int sector_size(sqlite3_file* f) { return real_of(f)->pMethods->xSectorSize(real_of(f)); }
  static int device_characteristics(sqlite3_file* f) {
    return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
  }
  static int shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
    return real_of(f)->pMethods->xShmMap(real_of(f), page, size, extend, out);
  }
  static int shm_lock(sqlite3_file* f, int offset, int n, int flags) {
    return real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
  }
  static void shm_barrier(sqlite3_file* f) { real_of(f)->pMethods->xShmBarrier(real_of(f)); }
  static int shm_unmap(sqlite3_file* f, int del) {
    return real_of(f)->pMethods->xShmUnmap(real_of(f), del);
  }
  static int fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** out) {
    return real_of(f)->pMethods->xFetch(real_of(f), o, n, out);
  }
  static int unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) {
    return real_of(f)->pMethods->xUnfetch(real_of(f), o, p);
  }

  static const sqlite3_io_methods* methods_like(const sqlite3_io_methods* real) {
    static sqlite3_io_methods m{};
    static std::once_flag once;
    std::call_once(once, [real] {
      m.iVersion = real->iVersion < 3 ? real->iVersion : 3;
      m.xClose = &close;
      m.xRead = &read;
      m.xWrite = &write;
      m.xTruncate = &truncate;
      m.xSync = &sync;
      m.xFileSize = &file_size;
      m.xLock = &lock;
      m.xUnlock = &unlock;
      m.xCheckReservedLock = &check_reserved;
      m.xFileControl = &file_control;
      m.xSectorSize = &sector_size;
      m.xDeviceCharacteristics = &device_characteristics;
      m.xShmMap = &shm_map;
      m.xShmLock = &shm_lock;
      m.xShmBarrier = &shm_barrier;
      m.xShmUnmap = &shm_unmap;
      m.xFetch = &fetch;
      m.xUnfetch = &unfetch;
    });
    return &m;
  }

  static int open(sqlite3_vfs*, sqlite3_filename path, sqlite3_file* f, int flags, int* out_flags) {
    auto& s = state();
    auto* shim = reinterpret_cast<shim_file*>(f);
    std::memset(shim, 0, sizeof(shim_file));
    shim->real = reinterpret_cast<sqlite3_file*>(shim + 1);
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      shim->watched = path && !s.prefix.empty()
                      && std::strncmp(path, s.prefix.c_str(), s.prefix.size()) == 0;
      auto n = shim->watched ? std::strlen(path) : 0;
      shim->wal = n > 4 && std::strcmp(path + n - 4, "-wal") == 0;
    }
    int rc = s.real->xOpen(s.real, path, shim->real, flags, out_flags);
    if (shim->real->pMethods)
      shim->base.pMethods = methods_like(shim->real->pMethods);
    return rc;
  }
};

// Installs the shim as the default VFS for the scope's lifetime; writes under `prefix`
// fail while armed.
struct full_disk_vfs_scope {
  explicit full_disk_vfs_scope(std::string prefix) : prefix(std::move(prefix)) {
    full_disk_vfs::install(this->prefix);
  }
  ~full_disk_vfs_scope() { full_disk_vfs::restore_default(); }
  full_disk_vfs_scope(const full_disk_vfs_scope&) = delete;
  full_disk_vfs_scope& operator=(const full_disk_vfs_scope&) = delete;
  void arm() { full_disk_vfs::arm(); }
  void disarm() { full_disk_vfs::disarm(); }
  void limit_wal_bytes(long bytes) { full_disk_vfs::limit_wal_bytes(bytes); }
  std::string prefix;
};

} // namespace mneme::testing
