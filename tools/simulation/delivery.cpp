#include "simulation/delivery.hpp"

#include <fmt/format.h>

namespace podref::cli::sim {

namespace {

/// Below this fraction of a rate the summary warns.
constexpr double enough = 0.9;

/// "pod arrivals: 70.0/s of the 1000.0/s asked (7%)".
std::string shortfall(const char* what, const rate_delivery& r) {
  return fmt::format("{}: {:.1f}/s of the {:.1f}/s asked ({:.0f}%)", what,
                     r.delivered, r.asked, 100 * r.fraction());
}

/// Why a paced thread fell short: `idle` ticks that found nothing to do,
/// or else `busy`, what each of its steps waits for.
std::string reason(std::uint64_t idle, const char* nothing, const char* busy) {
  if (idle > 0)
    return fmt::format("; {} ticks found {}", idle, nothing);
  return fmt::format("; {}", busy);
}

} // namespace

void measure_delivery(const delivery_counts& counts, simulation_summary& sum) {
  const auto& c = sum.config;
  auto seconds = c.duration.count();
  auto per_second = [seconds](std::uint64_t n) {
    return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
  };
  sum.arrival_rate = {c.pod_rate, per_second(counts.arrivals)};
  sum.update_rate = {c.update_rate, per_second(counts.updates)};
  sum.read_rate = {c.read_rate * static_cast<double>(c.readers),
                   per_second(counts.reads)};
  if (sum.arrival_rate.fraction() < enough)
    sum.shortfalls.push_back(
      shortfall("pod arrivals", sum.arrival_rate)
      + "; each arrival waits until both managers applied it");
  if (sum.update_rate.fraction() < enough)
    sum.shortfalls.push_back(
      shortfall("updates", sum.update_rate)
      + reason(counts.idle_update_ticks,
               "no mutable object that a live pod references",
               "each update waits for the API server's answer"));
  if (sum.read_rate.fraction() < enough)
    sum.shortfalls.push_back(
      shortfall("reads", sum.read_rate)
      + reason(counts.idle_read_ticks, "no live pod or one without references",
               "each reader reads one object at a time"));
}

} // namespace podref::cli::sim
