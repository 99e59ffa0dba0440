// `podref bench` end to end (the built binary as a child process), with
// tiny workloads: the JSON lines carry every documented field, both
// implementations run, and the scale workload leaves no reflector behind.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_process.hpp"

using podref::test::run_process;
using podref::test::split_lines;

namespace {

std::vector<nlohmann::json> run_bench(const std::vector<std::string>& args) {
  std::vector<std::string> argv{PODREF_CLI_PATH, "bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto res = run_process(argv);
  INFO(res.err);
  REQUIRE(res.status == 0);
  std::vector<nlohmann::json> rows;
  for (const auto& line : split_lines(res.out))
    if (!line.empty())
      rows.push_back(nlohmann::json::parse(line));
  return rows;
}

void check_fields(const nlohmann::json& row, const std::string& workload) {
  INFO(row.dump());
  for (const char* key :
       {"workload", "impl", "strategy", "threads", "ops", "seconds",
        "ops_per_sec", "p50_ns", "p99_ns", "p999_ns", "peak_rss_bytes",
        "live_reflectors_after"})
    CHECK(row.contains(key));
  CHECK(row["workload"] == workload);
  CHECK(row["strategy"] == "watch");
  CHECK(row["threads"] == 1);
  CHECK(row["ops"].get<std::uint64_t>() > 0);
  CHECK(row["ops_per_sec"].get<double>() > 0);
  CHECK(row["p50_ns"].get<std::uint64_t>()
        <= row["p99_ns"].get<std::uint64_t>());
  CHECK(row["p99_ns"].get<std::uint64_t>()
        <= row["p999_ns"].get<std::uint64_t>());
  CHECK(row["peak_rss_bytes"].get<std::uint64_t>() > 0);
}

void check_both_impls(const std::vector<nlohmann::json>& rows,
                      const std::string& workload) {
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["impl"] == "podref");
  CHECK(rows[1]["impl"] == "baseline");
  for (const auto& row : rows)
    check_fields(row, workload);
  CHECK(rows[1].contains("ratio_to_baseline"));
}

} // namespace

TEST_CASE("podref bench get --json") {
  auto rows = run_bench({"--workload", "get", "--threads", "1", "--seconds",
                         "0.2", "--pool", "100", "--json"});
  check_both_impls(rows, "get");
  for (const auto& row : rows)
    CHECK(row["errors"] == 0);
}

TEST_CASE("podref bench register --json with a small op count") {
  auto rows = run_bench({"--workload", "register", "--threads", "1", "--ops",
                         "2000", "--pool", "100", "--json"});
  check_both_impls(rows, "register");
  for (const auto& row : rows)
    CHECK(row["ops"] == 2000);
}

TEST_CASE("podref bench scale leaves no live reflector") {
  auto rows = run_bench({"--workload", "scale", "--threads", "1", "--scale",
                         "200", "--pool", "100", "--json"});
  check_both_impls(rows, "scale");
  for (const auto& row : rows) {
    CHECK(row["ops"] == 200);
    CHECK(row["live_reflectors_after"] == 0);
    CHECK(row["live_reflectors_peak"] == 200);
  }
}

TEST_CASE("podref bench --coalesce-us sets podref's coalescing delay") {
  auto rows = run_bench({"--workload", "churn-warm", "--threads", "1",
                         "--seconds", "0.1", "--pool", "100", "--impl",
                         "podref", "--coalesce-us", "0", "--json"});
  REQUIRE(rows.size() == 1);
  check_fields(rows[0], "churn-warm");
  auto res = run_process({PODREF_CLI_PATH, "bench", "--coalesce-us", "-1"});
  CHECK(res.status == 2);
  CHECK(res.err.find("--coalesce-us") != std::string::npos);
}

TEST_CASE("podref bench rejects an unknown workload") {
  auto res = run_process({PODREF_CLI_PATH, "bench", "--workload", "nope",
                          "--threads", "1"});
  CHECK(res.status == 1);
  CHECK(res.err.find("unknown workload: nope") != std::string::npos);
}

TEST_CASE("bench -w soak runs the node simulation with API server faults") {
  auto rows = run_bench({"-w", "soak", "--seconds", "1.5", "--json",
                         "--manifests",
                         std::string{PODREF_SOURCE_DIR} + "/examples/manifests"});
  REQUIRE(rows.size() == 1);
  const auto& s = rows[0];
  INFO(s.dump());
  CHECK(s["invariants"]["pass"] == true);
  CHECK(s["config"]["fault_period_s"] == 0.5);
  CHECK(s["faults"]["injected"].get<int>() >= 2);
  CHECK(s["reads"]["total"].get<int>() > 0);
}

TEST_CASE("podref bench -w wire-* measures the wire client on tiny sets") {
  // The API server runs in a forked child (wire-sync, wire-propagate);
  // wire-replay has none. Counts are exact, times are only positive.
  auto rows = run_bench({"-w", "wire-replay,wire-sync,wire-propagate",
                         "--objects", "20", "--events", "2", "--samples",
                         "20", "--transport", "h2c", "--json"});
  REQUIRE(rows.size() == 3);
  check_fields(rows[0], "wire-replay");
  CHECK(rows[0]["ops"] == 40);
  CHECK(rows[0]["cpu_us_per_event"].get<double>() > 0);
  CHECK(rows[0]["decode_us_per_event"].get<double>() > 0);
  check_fields(rows[1], "wire-sync");
  CHECK(rows[1]["requests"] == 40); // a list and a watch each
  CHECK(rows[1]["connections"].get<double>() >= 1);
  CHECK(rows[1]["connections"].get<double>() < 20); // never one per request
  CHECK(rows[1]["watching_s"].get<double>()
        >= rows[1]["synced_s"].get<double>());
  check_fields(rows[2], "wire-propagate");
  CHECK(rows[2]["ops"] == 20);
  CHECK(rows[2]["latency"] == "propagation");
  CHECK(rows[2]["cpu_us_per_event"].get<double>() > 0);
}

TEST_CASE("bench -w apiserver holds its watches, fans events out and times "
          "requests over HTTP/2") {
  auto rows = run_bench({"-w", "apiserver", "--watches", "300", "--watchers",
                         "20", "--connections", "2", "--seconds", "0.1",
                         "--json"});
  REQUIRE(rows.size() == 1);
  const auto& r = rows[0];
  INFO(r.dump());
  CHECK(r["watches"] == 300);
  CHECK(r["heap_bytes_per_watch"].get<double>() > 0);
  CHECK(r["fanout_events"] == 200 * 20);
  for (const char* op : {"get", "list", "create"}) {
    CHECK(r["latency"][op]["n"].get<int>() > 0);
    CHECK(r["latency"][op]["failed"] == 0);
  }
}
