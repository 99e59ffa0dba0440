// Micro-benchmarks (Google Benchmark) of the steps of a write through the
// HTTP front, to show what tracking managedFields costs next to decoding
// and validating the body: decoding a Secret body (every create and
// update), a tracked update (managedFields of an update: both versions to
// JSON, their field sets, the entries), a merge patch of the stored
// object (patch, decode, validation) and a server-side apply (merge and
// ownership). The Secret is a typical one: three keys, two labels, its
// managedFields from a create.
#include <string>

#include <benchmark/benchmark.h>

#include "podref/wire/codec.hpp"
#include "podref/wire/managed_object.hpp"
#include "podref/wire/patch_request.hpp"

namespace {

using namespace podref;
using namespace podref::wire;

const std::string now = "2026-12-06T12:00:00Z";

std::string secret_body(const std::string& n) {
  return R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1",)"
         R"("namespace":"ns1","labels":{"app":"web","tier":"front"}},)"
         R"("data":{"user":"YWRtaW4=","password":"c2VjcmV0LXBhc3N3b3Jk",)"
         R"("n":")"
         + n + R"("}})";
}

api_object decoded(const std::string& n) {
  return decode_request_body(resource::secrets, "application/json",
                             secret_body(n), "ns1", "")
    .object;
}

/// The stored Secret: created by "kubectl-create", with its managedFields.
const api_object& stored() {
  static const api_object x
    = tracked_write(api_object{}, decoded("1000"), "kubectl-create", now)
        .object;
  return x;
}

void decode_secret_body(benchmark::State& state) {
  auto body = secret_body("1001");
  for (auto _ : state)
    benchmark::DoNotOptimize(decode_request_body(
      resource::secrets, "application/json", body, "ns1", "s1"));
}
BENCHMARK(decode_secret_body);

void tracked_update(benchmark::State& state) {
  auto next = decoded("1001");
  for (auto _ : state)
    benchmark::DoNotOptimize(tracked_write(stored(), next, "bench", now));
}
BENCHMARK(tracked_update);

void merge_patch_of_stored(benchmark::State& state) {
  const std::string patch = R"({"data":{"n":"1001"}})";
  for (auto _ : state)
    benchmark::DoNotOptimize(
      apply_patch(stored(), patch_type::merge, patch, "ns1", "s1"));
}
BENCHMARK(merge_patch_of_stored);

void server_side_apply(benchmark::State& state) {
  auto config = parse_apply_config(resource::secrets, secret_body("1001"));
  for (auto _ : state)
    benchmark::DoNotOptimize(applied_object(resource::secrets, stored(),
                                            config.doc, "bench", true, now,
                                            "ns1", "s1"));
}
BENCHMARK(server_side_apply);

} // namespace

BENCHMARK_MAIN();
