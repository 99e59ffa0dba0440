// The read side of one object (read_side/object_slot.hpp and
// reader_stripes.hpp): key matching by parts, the access time a read
// records, and the per-thread-stripe copies readers hand out.
#include "podref/read_side/object_slot.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/pod_builders.hpp"

using namespace podref;
using podref::detail::epoch_domain;
using podref::detail::hash_key;
using podref::detail::object_slot;
using podref::detail::object_snapshot;
using podref::detail::reader_stripes;
using podref::detail::same_text;
using podref::test::make_secret;

namespace {

/// Runs `f` on a thread of its own and waits for it.
template <class F>
void on_other_thread(F&& f) {
  std::thread t{std::forward<F>(f)};
  t.join();
}

} // namespace

TEST_CASE("same_text agrees with string equality at every length") {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string x(n, 'a');
    for (std::size_t i = 0; i < n; ++i)
      x[i] = static_cast<char>('a' + i % 26);
    CHECK(same_text(x, std::string{x}));
    CHECK_FALSE(same_text(x, x + "z"));
    for (std::size_t i = 0; i < n; ++i) {
      auto y = x;
      y[i] = '#';
      INFO("length " << n << ", difference at " << i);
      CHECK_FALSE(same_text(x, y));
    }
  }
}

TEST_CASE("a slot matches its namespace and name, compared by parts") {
  epoch_domain d;
  object_slot s{resource::secrets, "ns", "name", d};
  CHECK(s.key() == "ns/name");
  CHECK(s.hash() == hash_key("ns", "name"));
  CHECK(s.hash() == hash_key("ns/name"));
  CHECK(s.matches("ns", "name"));
  CHECK_FALSE(s.matches("ns", "nam"));
  CHECK_FALSE(s.matches("n", "s/name"));
  CHECK_FALSE(s.matches("ns/", "name"));
  CHECK_FALSE(s.matches("", "ns/name"));
  // Invalid names that join to the same key are different objects.
  object_slot odd{resource::secrets, "a/b", "c", d};
  CHECK(odd.matches("a/b", "c"));
  CHECK_FALSE(odd.matches("a", "b/c"));
  CHECK(odd.hash() == hash_key("a/b", "c"));
}

TEST_CASE("touch records a later stamp and never moves the access back") {
  epoch_domain d;
  object_slot s{resource::secrets, "ns", "name", d};
  CHECK(s.last_access_ns() == 0);
  s.touch(0); // an unpublished stamp records nothing
  CHECK(s.last_access_ns() == 0);
  s.touch(100);
  CHECK(s.last_access_ns() == 100);
  s.touch(100);
  s.touch(50);
  CHECK(s.last_access_ns() == 100);
  s.touch(200);
  CHECK(s.last_access_ns() == 200);
  // Reads through the actors know their exact time.
  s.set_last_access_ns(150);
  CHECK(s.last_access_ns() == 150);
}

TEST_CASE("threads alive at the same time get distinct stripes; an exited "
          "thread's stripe is reused") {
  std::set<std::size_t> held{reader_stripes::this_thread_stripe()};
  // Threads pick one after another (each holds its stripe until released),
  // so no two race for the same one.
  std::mutex mtx;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::thread> threads;
  std::vector<std::size_t> picked;
  for (std::size_t i = 1; i < reader_stripes::count; ++i) {
    std::size_t before;
    {
      std::lock_guard<std::mutex> guard{mtx};
      before = picked.size();
    }
    threads.emplace_back([&] {
      auto s = reader_stripes::this_thread_stripe();
      std::unique_lock<std::mutex> guard{mtx};
      picked.push_back(s);
      cv.notify_all();
      cv.wait(guard, [&] { return release; });
    });
    std::unique_lock<std::mutex> guard{mtx};
    cv.wait(guard, [&] { return picked.size() > before; });
  }
  held.insert(picked.begin(), picked.end());
  CHECK(held.size() == reader_stripes::count);
  {
    std::lock_guard<std::mutex> guard{mtx};
    release = true;
  }
  cv.notify_all();
  for (auto& t : threads)
    t.join();
  std::size_t next = reader_stripes::count;
  on_other_thread([&] { next = reader_stripes::this_thread_stripe(); });
  CHECK(next != reader_stripes::this_thread_stripe());
}

TEST_CASE("stripe copies point at the object, leave its count alone and "
          "outlive the snapshot") {
  auto obj = make_secret("ns", "name", {{"k", "v"}});
  auto original = obj.as_secret();
  auto base = original.use_count();
  std::optional<object_snapshot> snap{object_snapshot{true, true, obj}};
  base = original.use_count(); // with the snapshot's reference
  const auto mine = reader_stripes::this_thread_stripe();
  std::vector<api_object> copies;
  on_other_thread([&] {
    REQUIRE(reader_stripes::this_thread_stripe() != mine);
    for (int i = 0; i < 3; ++i)
      copies.push_back(snap->stripes.copy(snap->object));
  });
  for (const auto& c : copies) {
    CHECK(c == obj);
    CHECK(c.as_secret().get() == original.get());
    CHECK(c.meta().name == "name");
  }
  // One reference for the stripe, however many copies it handed out.
  CHECK(original.use_count() == base + 1);
  snap.reset();
  CHECK(original.use_count() == base);
  // The stripe's reference lives on with the copies.
  CHECK(copies.front().as_secret()->data.at("k") == "v");
  copies.clear();
  CHECK(original.use_count() == base - 1);
}

TEST_CASE("a copied snapshot starts without stripe copies") {
  auto obj = make_secret("ns", "name");
  auto original = obj.as_secret();
  object_snapshot snap{true, true, obj};
  const auto mine = reader_stripes::this_thread_stripe();
  on_other_thread([&] {
    REQUIRE(reader_stripes::this_thread_stripe() != mine);
    auto c = snap.stripes.copy(snap.object);
    CHECK(c == obj);
  });
  auto with_stripe = original.use_count();
  {
    object_snapshot copy = snap;
    CHECK(original.use_count() == with_stripe + 1); // copy.object only
    on_other_thread([&] { (void)copy.stripes.copy(copy.object); });
    CHECK(original.use_count() == with_stripe + 2); // and its own stripe
  }
  CHECK(original.use_count() == with_stripe);
  // On the snapshot's own stripe, a copy is the object itself.
  CHECK(snap.stripes.copy(snap.object) == obj);
}

TEST_CASE("readers on many stripes copy while the owner keeps publishing") {
  // Run under ASan: a copy must never outlive what it points into, and
  // every block must be freed (leak check) once the slot is gone.
  epoch_domain d;
  auto slot = std::make_shared<object_slot>(resource::secrets, "ns", "name",
                                            d);
  constexpr int readers = 4;
  constexpr int versions = 2000;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t)
    threads.emplace_back([&] {
      std::vector<api_object> kept;
      while (!done.load(std::memory_order_acquire)) {
        auto guard = d.pin();
        const auto* snap = slot->load();
        if (!snap->object)
          continue;
        auto x = snap->stripes.copy(snap->object);
        if (!x || x.meta().name != "name")
          bad.fetch_add(1);
        // Keep a few copies past later publications.
        if (kept.size() < 64)
          kept.push_back(std::move(x));
      }
      for (const auto& x : kept)
        if (x.as_secret()->data.at("k").empty())
          bad.fetch_add(1);
    });
  for (int v = 0; v < versions; ++v)
    slot->publish(
      object_snapshot{true, true,
                      make_secret("ns", "name",
                                  {{"k", "v" + std::to_string(v)}})});
  done.store(true, std::memory_order_release);
  for (auto& t : threads)
    t.join();
  CHECK(bad.load() == 0);
  slot.reset();
  d.reclaim();
  d.reclaim();
  CHECK(d.retired_count() == 0);
}
