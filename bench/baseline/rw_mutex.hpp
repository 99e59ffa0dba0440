// rw_mutex: a reader-writer mutex with the fairness of Go's sync.RWMutex,
// for the baseline's RW-locked maps.
//
// std::shared_mutex on glibc prefers readers: with readers always inside
// (busy reader threads on every core), a writer never gets in. Go's
// RWMutex blocks new readers once a writer waits, so upstream's reflectors
// do get to store updates under read load. The baseline must behave the same
// or it would report updates that never propagate.
#pragma once

#include <pthread.h>

namespace podref::bench::baseline {

/// Meets the SharedMutex requirements (std::unique_lock, std::shared_lock).
class rw_mutex {
public:
  rw_mutex() noexcept {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }

  ~rw_mutex() {
    pthread_rwlock_destroy(&lock_);
  }

  rw_mutex(const rw_mutex&) = delete;
  rw_mutex& operator=(const rw_mutex&) = delete;

  void lock() noexcept {
    pthread_rwlock_wrlock(&lock_);
  }

  bool try_lock() noexcept {
    return pthread_rwlock_trywrlock(&lock_) == 0;
  }

  void unlock() noexcept {
    pthread_rwlock_unlock(&lock_);
  }

  void lock_shared() noexcept {
    pthread_rwlock_rdlock(&lock_);
  }

  bool try_lock_shared() noexcept {
    return pthread_rwlock_tryrdlock(&lock_) == 0;
  }

  void unlock_shared() noexcept {
    pthread_rwlock_unlock(&lock_);
  }

private:
  pthread_rwlock_t lock_;
};

} // namespace podref::bench::baseline
