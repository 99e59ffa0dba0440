#include "podref/messages/node_ttl.hpp"

#include <limits>
#include <utility>

namespace podref {

namespace {

/// `ttl` in nanoseconds, saturated to [none + 1, max].
std::int64_t clamp_ns(std::chrono::seconds ttl) noexcept {
  constexpr std::int64_t per_second = 1'000'000'000;
  constexpr auto hi = std::numeric_limits<std::int64_t>::max();
  constexpr auto lo = std::numeric_limits<std::int64_t>::min() + 1;
  auto s = ttl.count();
  if (s > hi / per_second)
    return hi;
  if (s < lo / per_second)
    return lo;
  return s * per_second;
}

} // namespace

std::optional<std::int64_t> parse_go_int(std::string_view text) noexcept {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty())
    return std::nullopt;
  // Accumulate as a negative number: its range covers INT64_MIN.
  constexpr auto lo = std::numeric_limits<std::int64_t>::min();
  std::int64_t acc = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    auto digit = static_cast<std::int64_t>(c - '0');
    if (acc < (lo + digit) / 10)
      return std::nullopt;
    acc = acc * 10 - digit;
  }
  if (negative)
    return acc;
  if (acc == lo)
    return std::nullopt; // +9223372036854775808 is out of range
  return -acc;
}

std::optional<std::chrono::seconds> ttl_from_node(const node* n) {
  if (n == nullptr)
    return std::nullopt;
  const auto& annotations = n->metadata.annotations;
  auto i = annotations.find(std::string{node_ttl_annotation});
  if (i == annotations.end())
    return std::nullopt;
  auto value = parse_go_int(i->second);
  if (!value)
    return std::nullopt;
  return std::chrono::seconds{*value};
}

void node_ttl_source::set_node(const node_ptr& n) noexcept {
  auto ttl = ttl_from_node(n.get());
  value_ns_.store(ttl ? clamp_ns(*ttl) : none, std::memory_order_release);
}

void node_ttl_source::set_ttl(
  std::optional<std::chrono::nanoseconds> ttl) noexcept {
  auto ns = ttl ? ttl->count() : none;
  if (ns == none)
    ns = ttl ? none + 1 : none;
  value_ns_.store(ns, std::memory_order_release);
}

void node_ttl_source::set_getter(getter fn) {
  std::lock_guard<std::mutex> guard{getter_mtx_};
  has_getter_.store(static_cast<bool>(fn), std::memory_order_release);
  getter_ = std::move(fn);
}

std::optional<std::chrono::nanoseconds> node_ttl_source::ttl() const {
  if (has_getter_.load(std::memory_order_acquire)) {
    getter fn;
    {
      std::lock_guard<std::mutex> guard{getter_mtx_};
      fn = getter_;
    }
    if (fn) {
      auto n = fn();
      if (auto ttl = ttl_from_node(n.get()))
        return std::chrono::nanoseconds{clamp_ns(*ttl)};
      return std::nullopt;
    }
  }
  auto ns = value_ns_.load(std::memory_order_acquire);
  if (ns == none)
    return std::nullopt;
  return std::chrono::nanoseconds{ns};
}

} // namespace podref
