// The lock-free snapshot index: single-threaded behaviour against a model,
// slot lifetime across erase, a concurrent reader/writer stress (run it under
// ASan to prove there is no use after free) and a hidden read benchmark.
#include "podref/read_side/snapshot_index.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <time.h>

using podref::detail::epoch_domain;
using podref::detail::hash_key;
using podref::detail::snapshot_index;

namespace {

constexpr std::uint64_t alive = 0x600dcafe600dcafe;
constexpr std::uint64_t dead = 0xdeadbeefdeadbeef;

/// An immutable object snapshot; the canary turns dead on destruction.
struct payload {
  explicit payload(std::uint64_t version) : version(version) {
  }
  ~payload() {
    canary = dead;
  }
  std::uint64_t canary = alive;
  std::uint64_t version;
};

/// Tag for a slot whose hash is forced, to build collision chains.
struct forced_hash {
  std::size_t value;
};

/// A slot as the store would keep it: fixed key and hash, current snapshot.
struct slot {
  explicit slot(std::string k, std::uint64_t version = 0)
    : key_(std::move(k)), hash_(hash_key(key_)), current(new payload(version)) {
  }
  slot(std::string k, forced_hash h)
    : key_(std::move(k)), hash_(h.value), current(new payload(0)) {
  }
  ~slot() {
    canary = dead;
    delete current.load(std::memory_order_relaxed);
  }
  const std::string& key() const {
    return key_;
  }
  std::size_t hash() const {
    return hash_;
  }
  std::string key_;
  std::size_t hash_;
  std::uint64_t canary = alive;
  std::atomic<payload*> current;
};

using index_type = snapshot_index<slot>;

std::string key_of(int i) {
  return "ns-" + std::to_string(i % 10) + "/secret-" + std::to_string(i);
}

slot* find(const index_type& idx, const std::string& key) {
  return idx.find(key, hash_key(key));
}

} // namespace

TEST_CASE("hash_key is deterministic, length-sensitive and spreads low "
          "bits") {
  CHECK(hash_key("ns-1/secret-1") == hash_key(std::string("ns-1/secret-1")));
  std::set<std::size_t> hashes;
  std::string s;
  for (int n = 0; n < 24; ++n) {
    hashes.insert(hash_key(s));
    s.push_back('\0');
  }
  CHECK(hashes.size() == 24);
  std::set<std::size_t> low_bits;
  std::set<std::size_t> all;
  for (int i = 0; i < 1000; ++i) {
    auto h = hash_key(key_of(i));
    all.insert(h);
    low_bits.insert(h & 1023);
  }
  CHECK(all.size() == 1000);
  // 1000 random values in 1024 buckets fill about 632 of them.
  CHECK(low_bits.size() > 560);
}

TEST_CASE("hash_key of a namespace and a name equals hash_key of the joined "
          "key") {
  for (int i = 0; i < 200; ++i) {
    auto ns = "ns-" + std::string(static_cast<std::size_t>(i % 23), 'n');
    auto name = "secret-" + std::string(static_cast<std::size_t>(i), 'x');
    CHECK(hash_key(ns, name) == hash_key(ns + "/" + name));
  }
  CHECK(hash_key("", "") == hash_key("/"));
  CHECK(hash_key("ns", "") == hash_key("ns/"));
  // The split is at the first '/': a name may not hide a namespace.
  CHECK(hash_key("a", "b/c") == hash_key("a/b/c"));
  CHECK(hash_key("a/b", "c") != hash_key("a/b/c"));
  // Keys without '/' are their own family.
  CHECK(hash_key("a") != hash_key("a/"));
  CHECK(hash_key("a") != hash_key("a", ""));
  CHECK(hash_key("ab") != hash_key("a", "b"));
}

TEST_CASE("find_if finds a slot by its hash and a predicate") {
  epoch_domain d;
  index_type idx(d);
  for (int i = 0; i < 100; ++i)
    REQUIRE(idx.insert(std::make_shared<slot>(key_of(i))));
  auto g = d.pin();
  auto key = key_of(42);
  auto* s = idx.find_if(hash_key(key),
                        [&](const slot& x) { return x.key() == key; });
  REQUIRE(s != nullptr);
  CHECK(s->key() == key);
  // The predicate decides among slots with the hash.
  CHECK(idx.find_if(hash_key(key), [](const slot&) { return false; })
        == nullptr);
  CHECK(idx.find_if(hash_key(key_of(100)), [](const slot&) { return true; })
        == nullptr);
}

TEST_CASE("an index finds what was inserted and nothing else") {
  epoch_domain d;
  index_type idx(d);
  for (int i = 0; i < 1000; ++i)
    REQUIRE(idx.insert(std::make_shared<slot>(key_of(i))));
  CHECK(idx.size() == 1000);
  auto g = d.pin();
  for (int i = 0; i < 1000; ++i) {
    auto* s = find(idx, key_of(i));
    REQUIRE(s != nullptr);
    CHECK(s->key() == key_of(i));
  }
  CHECK(find(idx, key_of(1000)) == nullptr);
  CHECK(find(idx, "") == nullptr);
  CHECK_FALSE(idx.insert(std::make_shared<slot>(key_of(7))));
  CHECK(idx.size() == 1000);
}

TEST_CASE("an index grows past its initial capacity and keeps every key") {
  epoch_domain d;
  index_type idx(d, 4);
  CHECK(idx.capacity() == 8);
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(idx.insert(std::make_shared<slot>(key_of(i))));
    REQUIRE(idx.size() * 2 <= idx.capacity());
  }
  CHECK(idx.capacity() >= 10000);
  auto g = d.pin();
  for (int i = 0; i < 5000; ++i)
    REQUIRE(find(idx, key_of(i)) != nullptr);
  g = epoch_domain::guard{};
  // Old tables were retired, not leaked (ASan's leak check would tell).
  d.reclaim();
  d.reclaim();
  CHECK(d.retired_count() == 0);
}

TEST_CASE("erase returns the slot and the index's reference lives until "
          "readers unpin") {
  epoch_domain d;
  index_type idx(d);
  REQUIRE(idx.insert(std::make_shared<slot>("a")));
  REQUIRE(idx.insert(std::make_shared<slot>("b")));
  auto g = d.pin();
  slot* found = find(idx, "a");
  REQUIRE(found != nullptr);
  std::weak_ptr<slot> weak;
  {
    auto erased = idx.erase("a", hash_key("a"));
    REQUIRE(erased.get() == found);
    weak = erased;
  }
  CHECK(idx.size() == 1);
  CHECK(idx.erase("a", hash_key("a")) == nullptr);
  for (int i = 0; i < 5; ++i)
    d.reclaim();
  CHECK_FALSE(weak.expired());
  CHECK(found->canary == alive);
  CHECK(find(idx, "a") == nullptr);
  CHECK(find(idx, "b") != nullptr);
  g = epoch_domain::guard{};
  d.reclaim();
  d.reclaim();
  CHECK(weak.expired());
}

TEST_CASE("erased cells become tombstones that probes pass and inserts "
          "reuse") {
  epoch_domain d;
  index_type idx(d, 8);
  auto cap = idx.capacity();
  // Same hash: one probe chain a, b, c.
  REQUIRE(idx.insert(std::make_shared<slot>("a", forced_hash{3})));
  REQUIRE(idx.insert(std::make_shared<slot>("b", forced_hash{3})));
  REQUIRE(idx.insert(std::make_shared<slot>("c", forced_hash{3})));
  REQUIRE(idx.erase("b", 3) != nullptr);
  {
    auto g = d.pin();
    CHECK(idx.find("a", 3) != nullptr);
    CHECK(idx.find("b", 3) == nullptr);
    CHECK(idx.find("c", 3) != nullptr); // past the tombstone
  }
  // A duplicate behind the tombstone is still detected.
  CHECK_FALSE(idx.insert(std::make_shared<slot>("c", forced_hash{3})));
  // Erase and reinsert many times at a fixed size: tombstones are reused or
  // swept by a same-size rebuild, so the table never grows.
  for (int i = 0; i < 10000; ++i) {
    REQUIRE(idx.erase("c", 3) != nullptr);
    REQUIRE(idx.insert(std::make_shared<slot>("c", forced_hash{3})));
    auto k = "x" + std::to_string(i);
    REQUIRE(idx.insert(std::make_shared<slot>(k)));
    REQUIRE(idx.erase(k, hash_key(k)) != nullptr);
  }
  CHECK(idx.capacity() == cap);
  CHECK(idx.size() == 2);
  auto g = d.pin();
  CHECK(idx.find("a", 3) != nullptr);
  CHECK(idx.find("c", 3) != nullptr);
}

TEST_CASE("for_each visits every entry exactly once") {
  epoch_domain d;
  index_type idx(d, 2);
  for (int i = 0; i < 300; ++i)
    REQUIRE(idx.insert(std::make_shared<slot>(key_of(i))));
  for (int i = 0; i < 300; i += 3)
    REQUIRE(idx.erase(key_of(i), hash_key(key_of(i))) != nullptr);
  std::multiset<std::string> seen;
  idx.for_each([&](slot& s) { seen.insert(s.key()); });
  CHECK(seen.size() == 200);
  for (int i = 0; i < 300; ++i)
    CHECK(seen.count(key_of(i)) == (i % 3 == 0 ? 0u : 1u));
}

TEST_CASE("random inserts and erases agree with a std::map model") {
  epoch_domain d;
  index_type idx(d, 1);
  std::map<std::string, slot*> model;
  std::uint64_t x = 0x12345678;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int op = 0; op < 30000; ++op) {
    auto key = key_of(static_cast<int>(next() % 500));
    auto h = hash_key(key);
    if (next() % 3 != 0) {
      auto s = std::make_shared<slot>(key);
      auto* raw = s.get();
      bool inserted = idx.insert(std::move(s));
      REQUIRE(inserted == (model.count(key) == 0));
      if (inserted)
        model[key] = raw;
    } else {
      auto erased = idx.erase(key, h);
      auto it = model.find(key);
      REQUIRE((erased != nullptr) == (it != model.end()));
      if (erased) {
        REQUIRE(erased.get() == it->second);
        model.erase(it);
      }
    }
    REQUIRE(idx.size() == model.size());
    if (op % 1000 == 0) {
      auto g = d.pin();
      for (int i = 0; i < 500; ++i) {
        auto k = key_of(i);
        auto it = model.find(k);
        REQUIRE(find(idx, k) == (it == model.end() ? nullptr : it->second));
      }
    }
  }
}

TEST_CASE("destroying the index releases its references to the slots") {
  std::weak_ptr<slot> kept;
  std::weak_ptr<slot> erased;
  auto held = std::make_shared<slot>("held");
  {
    epoch_domain d;
    {
      index_type idx(d);
      auto s = std::make_shared<slot>("kept");
      kept = s;
      REQUIRE(idx.insert(std::move(s)));
      auto e = std::make_shared<slot>("erased");
      erased = e;
      REQUIRE(idx.insert(std::move(e)));
      REQUIRE(idx.insert(held));
      REQUIRE(idx.erase("erased", hash_key("erased")) != nullptr);
      CHECK(held.use_count() == 2);
    }
    CHECK(kept.expired());
    CHECK(held.use_count() == 1);
    // The erased slot's reference is still parked in the domain.
    CHECK_FALSE(erased.expired());
  }
  CHECK(erased.expired());
}

TEST_CASE("concurrent readers only ever see live slots and payloads while "
          "the writer inserts, erases and replaces") {
  epoch_domain d;
  index_type idx(d, 8);
  constexpr int key_space = 256;
  std::vector<std::string> keys;
  std::vector<std::size_t> hashes;
  for (int i = 0; i < key_space; ++i) {
    keys.push_back(key_of(i));
    hashes.push_back(hash_key(keys.back()));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> started{0};
  std::atomic<std::uint64_t> bad{0};
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> reads{0};
  auto read = [&](std::uint64_t seed) {
    started.fetch_add(1);
    std::uint64_t n = 0;
    std::uint64_t found = 0;
    std::uint64_t x = seed;
    while (!stop.load(std::memory_order_relaxed)) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      auto i = static_cast<std::size_t>(x % key_space);
      auto g = d.pin();
      if (auto* s = idx.find(keys[i], hashes[i])) {
        auto* p = s->current.load(std::memory_order_acquire);
        if (s->canary != alive || s->key() != keys[i] || p->canary != alive)
          bad.fetch_add(1);
        g.count_snapshot_read();
        ++found;
      }
      ++n;
    }
    reads.fetch_add(n);
    hits.fetch_add(found);
  };
  std::thread r1(read, 0x9e3779b97f4a7c15u);
  std::thread r2(read, 0xc2b2ae3d27d4eb4fu);
  while (started.load() < 2)
    std::this_thread::yield();
  // The writer: the test thread, bounded by operations and by time.
  std::uint64_t x = 0x2545f4914f6cdd1d;
  std::uint64_t version = 1;
  std::uint64_t ops = 0;
  auto deadline = std::chrono::steady_clock::now()
                  + std::chrono::milliseconds(500);
  for (; ops < 400000; ++ops) {
    if (ops % 1024 == 0 && std::chrono::steady_clock::now() > deadline)
      break;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    auto i = static_cast<std::size_t>(x % key_space);
    switch ((x >> 32) % 4) {
      case 0: // insert (fails if present)
        idx.insert(std::make_shared<slot>(keys[i], version++));
        break;
      case 1: // erase
        idx.erase(keys[i], hashes[i]);
        break;
      case 2: { // replace the snapshot in place
        auto g = d.pin(); // the writer may read too
        if (auto* s = idx.find(keys[i], hashes[i])) {
          auto* old = s->current.exchange(new payload(version++),
                                          std::memory_order_acq_rel);
          d.retire(old);
        }
        break;
      }
      default: // replace the slot
        idx.erase(keys[i], hashes[i]);
        idx.insert(std::make_shared<slot>(keys[i], version++));
        break;
    }
  }
  stop.store(true);
  r1.join();
  r2.join();
  CHECK(bad.load() == 0);
  CHECK(ops > 1000);
  CHECK(reads.load() > 0);
  CHECK(hits.load() > 0);
  CHECK(d.sum_counters().snapshot_reads == hits.load());
  CHECK(idx.size() <= key_space);
}

namespace {

/// CPU time consumed by the calling thread, in seconds.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec)
         + static_cast<double>(ts.tv_nsec) / 1e9;
}

} // namespace

// Prints wall-clock throughput and, because the build machines are shared,
// the throughput per CPU-second each thread actually got, summed.
TEST_CASE("find throughput with 1000 keys on one and two threads",
          "[.bench]") {
  epoch_domain d;
  index_type idx(d);
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) {
    keys.push_back(key_of(i));
    REQUIRE(idx.insert(std::make_shared<slot>(keys.back())));
  }
  std::vector<std::size_t> hashes;
  std::vector<std::pair<std::string, std::string>> parts;
  for (auto& k : keys) {
    hashes.push_back(hash_key(k));
    auto sep = k.find('/');
    parts.emplace_back(k.substr(0, sep), k.substr(sep + 1));
  }
  constexpr std::uint64_t per_thread = 20'000'000;
  // mode 0: pin, hash the key from its namespace and name (as the facade
  // does), find, load the snapshot, per read.
  // mode 1: the same with a precomputed hash.
  auto run = [&](int threads, int mode) {
    std::atomic<int> ready{0};
    std::atomic<std::uint64_t> sink{0};
    std::vector<double> cpu(static_cast<std::size_t>(threads));
    auto body = [&](int t) {
      ready.fetch_add(1);
      while (ready.load() < threads)
        std::this_thread::yield();
      auto cpu_start = thread_cpu_seconds();
      std::uint64_t x = 0x9e3779b97f4a7c15u * (static_cast<unsigned>(t) + 1);
      std::uint64_t acc = 0;
      for (std::uint64_t n = 0; n < per_thread; ++n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        auto i = static_cast<std::size_t>(x % 1000);
        auto g = d.pin();
        auto h = mode == 0 ? hash_key(parts[i].first, parts[i].second)
                           : hashes[i];
        if (auto* s = idx.find(keys[i], h))
          acc += s->current.load(std::memory_order_acquire)->version + 1;
      }
      cpu[static_cast<std::size_t>(t)] = thread_cpu_seconds() - cpu_start;
      sink.fetch_add(acc);
    };
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back(body, t);
    for (auto& t : ts)
      t.join();
    std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    double wall = static_cast<double>(per_thread) * threads / s.count() / 1e6;
    double per_cpu = 0;
    for (auto c : cpu)
      per_cpu += static_cast<double>(per_thread) / c / 1e6;
    std::cout << "find, " << (mode == 0 ? "hashing" : "precomputed hash")
              << ", " << threads << " thread(s): " << wall
              << " M reads/s wall, " << per_cpu
              << " M reads/s summed over thread CPU time\n";
    CHECK(sink.load() == per_thread * threads);
  };
  for (int mode = 0; mode < 2; ++mode)
    for (int threads = 1; threads <= 2; ++threads)
      run(threads, mode);
}
