#include "hollow/updater.hpp"

#include <chrono>
#include <map>
#include <thread>

#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/http_client.hpp"

namespace podref::cli::hollow {

updater::updater(wire::http_client& client, const workload& w,
                 propagation_tracker& tracker, double rate)
  : client_(client), w_(w), tracker_(tracker), rate_(rate) {
  thread_ = std::thread{[this] { run(); }};
}

updater::~updater() {
  stop();
}

void updater::stop() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stopping_ && !thread_.joinable())
      return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  // The client's request timeout bounds every write; this bounds the wait.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (in_flight_->load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void updater::run() {
  if (w_.updatable.empty() || rate_ <= 0)
    return;
  std::map<std::string, const planned_object*> by_key;
  for (const auto& o : w_.objects)
    by_key[o.key()] = &o;
  auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
    std::chrono::duration<double>(1.0 / rate_));
  auto next = std::chrono::steady_clock::now();
  std::size_t turn = 0;
  std::uint64_t serial = 0;
  std::unique_lock<std::mutex> guard{mtx_};
  for (;;) {
    next += interval;
    auto now = std::chrono::steady_clock::now();
    if (next + std::chrono::milliseconds(100) < now)
      next = now; // fell behind: skip the missed ticks, no burst
    if (cv_.wait_until(guard, next, [this] { return stopping_; }))
      return;
    const auto& key = w_.updatable[turn++ % w_.updatable.size()];
    auto o = by_key.find(key);
    if (o == by_key.end())
      continue;
    if (!tracker_.begin_write(key, std::chrono::steady_clock::now())) {
      ++skipped_;
      continue;
    }
    auto [path, body] = update_request(*o->second, ++serial);
    ++*in_flight_;
    ++sent_;
    wire::http_client::handlers h;
    h.on_done = [tracker = &tracker_, key, n = in_flight_](wire::http_response r) {
      std::optional<std::uint64_t> rv;
      if (r.error.empty() && r.status == 200)
        if (auto v = resource_version_of(r.body); v != 0)
          rv = v;
      auto why = rv ? std::string{}
                    : wire::detail::error_of(r, "update " + key).message;
      tracker->end_write(key, rv, r.error.empty() && r.status == 409, why);
      --*n;
    };
    client_.send("PATCH", path, std::move(body), std::move(h),
                 "application/merge-patch+json");
  }
}

} // namespace podref::cli::hollow
