// Epoch-based reclamation: when retired objects are freed, how reader records
// follow threads and domains, and the reader counters.
#include "podref/read_side/epoch.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

using podref::detail::epoch_domain;

namespace {

/// Records its id in a shared log when destroyed.
struct tracked {
  tracked(int id, std::vector<int>& log) : id(id), log(&log) {
  }
  ~tracked() {
    log->push_back(id);
  }
  int id;
  std::vector<int>* log;
};

/// A one-shot flag a thread can wait on (spins; no sleeps).
class latch_flag {
public:
  void set() noexcept {
    flag_.store(true, std::memory_order_release);
  }
  void wait() const noexcept {
    while (!flag_.load(std::memory_order_acquire))
      std::this_thread::yield();
  }

private:
  std::atomic<bool> flag_{false};
};

} // namespace

TEST_CASE("a retired object is freed only after the readers pinned before "
          "its retire have unpinned") {
  std::vector<int> freed; // outlives the domain, whose destructor frees
  epoch_domain d;
  SECTION("a reader on the same thread") {
    auto g = d.pin();
    d.retire(new tracked(1, freed));
    for (int i = 0; i < 10; ++i)
      CHECK(d.reclaim() == 0);
    CHECK(freed.empty());
    CHECK(d.retired_count() == 1);
    g = epoch_domain::guard{};
    d.reclaim();
    d.reclaim();
    CHECK(freed == std::vector<int>{1});
    CHECK(d.retired_count() == 0);
  }
  SECTION("a reader on another thread") {
    latch_flag pinned;
    latch_flag go;
    std::thread reader([&] {
      auto g = d.pin();
      pinned.set();
      go.wait();
    });
    pinned.wait();
    d.retire(new tracked(2, freed));
    for (int i = 0; i < 10; ++i)
      d.reclaim();
    CHECK(freed.empty());
    go.set();
    reader.join();
    d.reclaim();
    d.reclaim();
    CHECK(freed == std::vector<int>{2});
  }
}

TEST_CASE("an object is freed by the second epoch advance after its retire") {
  std::vector<int> freed;
  epoch_domain d;
  auto e0 = d.current_epoch();
  d.retire(new tracked(1, freed));
  CHECK(d.reclaim() == 0);
  CHECK(d.current_epoch() == e0 + 1);
  CHECK(freed.empty());
  CHECK(d.reclaim() == 1);
  CHECK(d.current_epoch() == e0 + 2);
  CHECK(freed == std::vector<int>{1});
}

TEST_CASE("a pinned reader blocks freeing what was retired after its pin but "
          "not what was retired two epochs back") {
  std::vector<int> freed;
  epoch_domain d;
  auto e0 = d.current_epoch();
  d.retire(new tracked(1, freed)); // tagged e0
  d.reclaim();                     // epoch e0 + 1
  latch_flag pinned;
  latch_flag go;
  std::thread reader([&] {
    auto g = d.pin(); // announces e0 + 1
    pinned.set();
    go.wait();
  });
  pinned.wait();
  d.retire(new tracked(2, freed)); // tagged e0 + 1
  CHECK(d.reclaim() == 1);         // the reader saw e0 + 1: advance to e0 + 2
  CHECK(d.current_epoch() == e0 + 2);
  CHECK(freed == std::vector<int>{1});
  for (int i = 0; i < 10; ++i)
    CHECK(d.reclaim() == 0); // the reader lags: no advance
  CHECK(d.current_epoch() == e0 + 2);
  CHECK(d.retired_count() == 1);
  go.set();
  reader.join();
  CHECK(d.reclaim() == 1);
  CHECK(freed == std::vector<int>{1, 2});
}

TEST_CASE("nested pins keep a thread pinned until its outermost guard is "
          "gone") {
  std::vector<int> freed;
  epoch_domain d;
  auto outer = d.pin();
  {
    auto inner = d.pin();
    d.retire(new tracked(1, freed));
  }
  for (int i = 0; i < 5; ++i)
    d.reclaim();
  CHECK(freed.empty());
  auto moved = std::move(outer);
  CHECK_FALSE(outer);
  CHECK(moved);
  for (int i = 0; i < 5; ++i)
    d.reclaim();
  CHECK(freed.empty());
  moved = epoch_domain::guard{};
  d.reclaim();
  d.reclaim();
  CHECK(freed == std::vector<int>{1});
  CHECK(d.record_count() == 1);
}

TEST_CASE("retire reclaims on its own so memory stays bounded without "
          "explicit reclaims") {
  std::vector<int> freed;
  epoch_domain d;
  for (int i = 0; i < 64 * 20; ++i)
    d.retire(new tracked(i, freed));
  CHECK(freed.size() >= 64 * 17);
  CHECK(d.retired_count() <= 3 * 64);
  CHECK(d.retired_count() + freed.size() == 64 * 20);
}

TEST_CASE("the domain's destructor frees everything still retired, "
          "including what deleters retire") {
  struct chain {
    epoch_domain* d;
    int depth;
    int* destroyed;
    ~chain() {
      ++*destroyed;
      if (depth > 0)
        d->retire(new chain{d, depth - 1, destroyed});
    }
  };
  int destroyed = 0;
  std::vector<int> freed;
  {
    epoch_domain d;
    auto g = d.pin();
    d.retire(new chain{&d, 5, &destroyed});
    d.retire(new tracked(7, freed));
    d.reclaim();
    g = epoch_domain::guard{};
  }
  CHECK(destroyed == 6);
  CHECK(freed == std::vector<int>{7});
}

TEST_CASE("a null pointer is not retired") {
  epoch_domain d;
  d.retire(static_cast<int*>(nullptr));
  CHECK(d.retired_count() == 0);
}

TEST_CASE("thread exit releases the thread's record for reuse") {
  epoch_domain d;
  for (int i = 0; i < 50; ++i) {
    std::thread t([&] {
      auto g = d.pin();
      auto h = d.pin();
    });
    t.join();
  }
  CHECK(d.record_count() == 1);
  // Four threads pinned at once need four records; later ones reuse them.
  for (int round = 0; round < 10; ++round) {
    std::atomic<int> arrived{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i)
      ts.emplace_back([&] {
        auto g = d.pin();
        arrived.fetch_add(1);
        while (arrived.load() < 4)
          std::this_thread::yield();
      });
    for (auto& t : ts)
      t.join();
  }
  CHECK(d.record_count() == 4);
}

TEST_CASE("the record of an exited thread blocks no reclamation") {
  std::vector<int> freed;
  epoch_domain d;
  std::thread t([&] { auto g = d.pin(); });
  t.join();
  d.retire(new tracked(1, freed));
  d.reclaim();
  d.reclaim();
  CHECK(freed == std::vector<int>{1});
}

TEST_CASE("a domain destroyed before a thread that used it exits leaves the "
          "thread and a new domain at the same address unharmed") {
  std::optional<epoch_domain> d;
  d.emplace();
  auto* address = &*d;
  auto first_id = d->id();
  latch_flag pinned_first;
  latch_flag first_gone;
  latch_flag pinned_second;
  latch_flag finish;
  std::thread t([&] {
    { auto g = d->pin(); }
    pinned_first.set();
    first_gone.wait();
    // Same address, new id: the thread's cached record must not match.
    { auto g = d->pin(); }
    pinned_second.set();
    finish.wait();
  });
  pinned_first.wait();
  d.reset();
  d.emplace();
  CHECK(&*d == address);
  CHECK(d->id() != first_id);
  first_gone.set();
  pinned_second.wait();
  CHECK(d->record_count() == 1);
  finish.set();
  t.join();
  // The exited thread released its record of the second domain.
  std::thread u([&] { auto g = d->pin(); });
  u.join();
  CHECK(d->record_count() == 1);
}

TEST_CASE("a thread may exit after the domain it pinned is destroyed") {
  auto d = std::make_unique<epoch_domain>();
  latch_flag pinned;
  latch_flag gone;
  std::thread t([&] {
    { auto g = d->pin(); }
    pinned.set();
    gone.wait();
  });
  pinned.wait();
  d.reset();
  gone.set();
  t.join();
  SUCCEED("no access to the destroyed domain (checked under ASan)");
}

namespace {

/// Pins in its destructor, which runs after the thread's epoch registry is
/// gone when this object was constructed first.
struct late_pinner {
  epoch_domain* d = nullptr;
  bool* pinned_late = nullptr;
  ~late_pinner() {
    if (d != nullptr) {
      auto outer = d->pin();
      auto inner = d->pin();
      *pinned_late = static_cast<bool>(outer) && static_cast<bool>(inner);
    }
  }
};

thread_local late_pinner late;

} // namespace

TEST_CASE("pins after the thread's registry is gone borrow records and give "
          "them back") {
  std::vector<int> freed;
  epoch_domain d;
  for (int i = 0; i < 5; ++i) {
    bool pinned_late = false;
    std::thread t([&] {
      late.d = &d; // constructs `late` before the registry
      auto g = d.pin();
      late.pinned_late = &pinned_late;
    });
    t.join();
    CHECK(pinned_late);
  }
  // Registry record plus two borrowed for the nested late pins.
  CHECK(d.record_count() <= 3);
  d.retire(new tracked(1, freed));
  d.reclaim();
  d.reclaim();
  CHECK(freed == std::vector<int>{1});
}

TEST_CASE("reader counters sum over all threads, including exited ones") {
  epoch_domain d;
  std::vector<std::thread> ts;
  for (int i = 1; i <= 3; ++i)
    ts.emplace_back([&d, i] {
      for (int j = 0; j < 1000 * i; ++j) {
        auto g = d.pin();
        g.count_snapshot_read();
        if (j % 10 == 0)
          g.count_waited_read();
      }
    });
  for (auto& t : ts)
    t.join();
  {
    auto g = d.pin();
    g.count_waited_read();
  }
  auto sum = d.sum_counters();
  CHECK(sum.snapshot_reads == 6000);
  CHECK(sum.waited_reads == 100 + 200 + 300 + 1);
}

TEST_CASE("pins in two domains on one thread are independent") {
  std::vector<int> freed;
  epoch_domain a;
  epoch_domain b;
  auto ga = a.pin();
  {
    auto gb = b.pin();
    auto ga2 = a.pin();
  }
  b.retire(new tracked(1, freed));
  a.retire(new tracked(2, freed));
  for (int i = 0; i < 3; ++i) {
    a.reclaim();
    b.reclaim();
  }
  CHECK(freed == std::vector<int>{1});
  ga = epoch_domain::guard{};
  a.reclaim();
  a.reclaim();
  CHECK(freed == std::vector<int>{1, 2});
}

TEST_CASE("concurrent readers never see an object freed by concurrent "
          "retirers") {
  constexpr std::uint64_t alive = 0x600dcafe600dcafe;
  constexpr std::uint64_t dead = 0xdeadbeefdeadbeef;
  struct object {
    std::uint64_t canary = alive;
    ~object() {
      canary = dead;
    }
  };
  epoch_domain d;
  std::atomic<object*> current{new object};
  std::atomic<bool> stop{false};
  std::atomic<int> started{0};
  std::atomic<std::uint64_t> bad{0};
  std::atomic<std::uint64_t> reads{0};
  std::thread reader([&] {
    started.fetch_add(1);
    std::uint64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      auto g = d.pin();
      auto* o = current.load(std::memory_order_acquire);
      if (o->canary != alive)
        bad.fetch_add(1);
      ++n;
    }
    reads.store(n);
  });
  constexpr int per_writer = 20000;
  auto write = [&] {
    started.fetch_add(1);
    while (started.load() < 3)
      std::this_thread::yield();
    for (int i = 0; i < per_writer; ++i) {
      auto* old = current.exchange(new object, std::memory_order_acq_rel);
      d.retire(old);
      if (i % 97 == 0)
        d.reclaim();
    }
  };
  std::thread writer(write);
  write();
  writer.join();
  stop.store(true);
  reader.join();
  delete current.load();
  CHECK(bad.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(d.retired_count() <= 2 * per_writer);
}
