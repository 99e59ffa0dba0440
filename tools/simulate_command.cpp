#include "simulate_command.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <caf/actor.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/strategy.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/http_server.hpp"
#include "simulation/simulation.hpp"

namespace podref::cli {

namespace {

namespace fs = std::filesystem;

/// Reads every manifest in `dir`: pods and pod templates become templates,
/// Secrets and ConfigMaps objects. Reports to `err` and returns nothing if
/// the directory is missing, a file has any error (each is reported) or no
/// pod is found.
std::optional<simulation_input> load_input(const std::string& dir,
                                           std::ostream& err) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fmt::print(err,
               "podref: simulate: no manifests directory '{}' (run from the "
               "repository root or pass --manifests DIR)\n",
               dir);
    return std::nullopt;
  }
  std::vector<std::string> files;
  for (fs::directory_iterator i{dir, ec}, end; !ec && i != end;
       i.increment(ec)) {
    auto ext = i->path().extension();
    if (i->is_regular_file(ec)
        && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
      files.push_back(i->path().string());
  }
  if (ec) {
    fmt::print(err, "podref: simulate: cannot read '{}': {}\n", dir,
               ec.message());
    return std::nullopt;
  }
  std::sort(files.begin(), files.end());
  simulation_input input;
  for (const auto& file : files) {
    auto decoded = load_manifest_file(file);
    if (!decoded.ok()) {
      // A simulation over part of a file would surprise: refuse it.
      for (const auto& error : decoded.errors)
        fmt::print(err, "podref: {}\n", error);
      return std::nullopt;
    }
    for (const auto& obj : decoded.objects) {
      if (auto p = std::get_if<pod_ptr>(&obj.object))
        input.templates.push_back(*p);
      else if (auto s = std::get_if<secret_ptr>(&obj.object))
        input.objects.emplace_back(*s);
      else if (auto c = std::get_if<config_map_ptr>(&obj.object))
        input.objects.emplace_back(*c);
    }
  }
  if (input.templates.empty()) {
    fmt::print(err, "podref: simulate: no pods or pod templates in '{}'\n",
               dir);
    return std::nullopt;
  }
  return input;
}

/// Milliseconds with microsecond precision, e.g. "1.234 ms".
std::string ms(std::int64_t us) {
  return fmt::format("{:.3f} ms", static_cast<double>(us) / 1000.0);
}

/// The counters of one manager in the summary: reads as the readers left
/// them, everything else after the drain.
nlohmann::ordered_json manager_json(const manager_stats& at_stop,
                                    const manager_stats& after) {
  nlohmann::ordered_json x;
  x["reflectors_started"] = after.reflectors_started;
  x["reflectors_stopped"] = after.reflectors_stopped;
  x["live_reflectors"] = after.live_reflectors;
  x["open_watches"] = after.open_watches;
  x["registered_pods"] = after.registered_pods;
  x["referenced_objects"] = after.referenced_objects;
  x["snapshot_reads"] = at_stop.snapshot_reads;
  x["waited_reads"] = at_stop.waited_reads;
  x["api_actions"] = {{"get", after.gets},
                      {"list", after.lists},
                      {"watch", after.watches}};
  return x;
}

nlohmann::ordered_json to_json(const simulation_summary& s) {
  const auto& c = s.config;
  nlohmann::ordered_json x;
  x["config"] = {{"duration_s", c.duration.count()},
                 {"pod_rate", c.pod_rate},
                 {"pod_lifetime_s", c.pod_lifetime.count()},
                 {"max_pods", c.max_pods},
                 {"update_rate", c.update_rate},
                 {"readers", c.readers},
                 {"read_rate", c.read_rate},
                 {"seed", c.seed},
                 {"strategy", to_string(c.strategy)},
                 {"fault_period_s", c.fault_period.count()}};
  x["elapsed_s"] = s.elapsed.count();
  x["templates"] = s.templates;
  x["objects"] = {{"loaded", s.objects_loaded},
                  {"referenced", s.objects_referenced}};
  x["pods"] = {{"arrived", s.pods_arrived},
               {"left", s.pods_left},
               {"refused", s.pods_refused},
               {"peak_live", s.peak_live_pods},
               {"live_at_end", s.live_at_end}};
  x["updates"] = {{"total", s.updates}, {"failed", s.update_errors}};
  x["faults"] = {{"injected", s.faults_injected},
                 {"explained_failures", s.fault_errors}};
  x["reads"] = {
    {"total", s.reads},
    {"failed", s.read_errors},
    {"benign_failures", s.benign_read_errors},
    {"snapshot",
     s.secrets_at_stop.snapshot_reads + s.configmaps_at_stop.snapshot_reads},
    {"waited",
     s.secrets_at_stop.waited_reads + s.configmaps_at_stop.waited_reads}};
  const auto& l = s.latency;
  x["latency_us"] = {{"samples", l.samples}, {"unobserved", l.unobserved},
                     {"p50", l.p50_us},      {"p99", l.p99_us},
                     {"p999", l.p999_us},    {"max", l.max_us}};
  auto rate = [](const rate_delivery& r) {
    return nlohmann::ordered_json{{"asked_per_s", r.asked},
                                  {"delivered_per_s", r.delivered}};
  };
  x["delivery"] = {{"pod_arrivals", rate(s.arrival_rate)},
                   {"updates", rate(s.update_rate)},
                   {"reads", rate(s.read_rate)},
                   {"shortfalls", s.shortfalls}};
  x["secrets"] = manager_json(s.secrets_at_stop, s.secrets_final);
  x["configmaps"] = manager_json(s.configmaps_at_stop, s.configmaps_final);
  x["invariants"] = {{"pass", s.passed()}, {"failures", s.failures}};
  return x;
}

void print_table(const simulation_summary& s, std::ostream& out) {
  const auto& c = s.config;
  fmt::print(out,
             "podref simulate: {} strategy, {:.1f} s busy, {:.1f} s in all "
             "(seed {})\n{} pod templates, {} objects\n\n",
             to_string(c.strategy), c.duration.count(), s.elapsed.count(),
             c.seed, s.templates,
             s.objects_loaded);
  fmt::print(out,
             "pods     {} arrived, {} left, {} refused (node full), "
             "peak {} live\n",
             s.pods_arrived, s.pods_left, s.pods_refused, s.peak_live_pods);
  fmt::print(out, "objects  {} referenced, {} updates ({} failed)\n",
             s.objects_referenced, s.updates, s.update_errors);
  if (c.fault_period.count() > 0)
    fmt::print(out,
               "faults   {} injected (one per {:.2f} s); {} updates and "
               "reads failed while the API server was down or lists "
               "failed\n",
               s.faults_injected, c.fault_period.count(), s.fault_errors);
  fmt::print(out,
             "reads    {} by {} reader{}, {} failed ({} when their pod "
             "left mid-read)\n",
             s.reads, c.readers, c.readers == 1 ? "" : "s", s.read_errors,
             s.benign_read_errors);
  const auto& l = s.latency;
  fmt::print(out,
             "latency  write to first read ({} versions read, {} replaced "
             "or ended unread):\n         p50 {}  p99 {}  p999 {}  max {}"
             "\n\n",
             l.samples, l.unobserved, ms(l.p50_us), ms(l.p99_us),
             ms(l.p999_us), ms(l.max_us));
  using row_fn = std::uint64_t (*)(const manager_stats&);
  const std::pair<const char*, row_fn> final_rows[] = {
    {"reflectors started", [](const manager_stats& m) {
       return m.reflectors_started;
     }},
    {"reflectors stopped", [](const manager_stats& m) {
       return m.reflectors_stopped;
     }},
    {"live reflectors", [](const manager_stats& m) {
       return static_cast<std::uint64_t>(m.live_reflectors);
     }},
    {"open watches", [](const manager_stats& m) {
       return static_cast<std::uint64_t>(m.open_watches);
     }},
    {"API gets", [](const manager_stats& m) { return m.gets; }},
    {"API lists", [](const manager_stats& m) { return m.lists; }},
    {"API watches", [](const manager_stats& m) { return m.watches; }},
  };
  fmt::print(out, "{:<20}{:>10}{:>12}\n", "", "secrets", "configmaps");
  fmt::print(out, "{:<20}{:>10}{:>12}\n", "snapshot reads",
             s.secrets_at_stop.snapshot_reads,
             s.configmaps_at_stop.snapshot_reads);
  fmt::print(out, "{:<20}{:>10}{:>12}\n", "waited reads",
             s.secrets_at_stop.waited_reads,
             s.configmaps_at_stop.waited_reads);
  for (const auto& [label, get] : final_rows)
    fmt::print(out, "{:<20}{:>10}{:>12}\n", label, get(s.secrets_final),
               get(s.configmaps_final));
  for (const auto& shortfall : s.shortfalls)
    fmt::print(out, "\nwarning: the run fell short of what was asked: {}",
               shortfall);
  fmt::print(out, "{}\ninvariants: {}\n", s.shortfalls.empty() ? "" : "\n",
             s.passed() ? "PASS" : "FAIL");
  for (const auto& failure : s.failures)
    fmt::print(out, "  - {}\n", failure);
}

} // namespace

CLI::App* add_simulate_command(CLI::App& app, simulate_options& options) {
  auto* cmd = app.add_subcommand(
    "simulate", "Simulate a node: pods come and go, objects change, "
                "readers read");
  cmd->footer(
    "Loads every *.yaml, *.yml and *.json file of --manifests into the\n"
    "embedded API server (Secrets, ConfigMaps) and uses its pods and pod\n"
    "templates as the pods that arrive. At the end every referenced object\n"
    "must read as the API server's latest version, live reflectors must\n"
    "match the referenced objects, and none may be left once the last pod\n"
    "left. Exit status: 0 if so, 1 if not or if the manifests fail.");
  cmd->add_option("--manifests", options.manifests, "Directory of manifests")
    ->type_name("DIR")
    ->capture_default_str();
  cmd->add_option("--duration", options.duration,
                  "Seconds of arrivals, updates and reads")
    ->check(CLI::Range(0.1, 3600.0))
    ->capture_default_str();
  cmd->add_option("--pod-rate", options.pod_rate, "Pod arrivals per second")
    ->check(CLI::Range(0.01, 10000.0))
    ->capture_default_str();
  cmd->add_option("--pod-lifetime", options.pod_lifetime,
                  "Mean seconds a pod stays (each: 0.5x to 1.5x)")
    ->check(CLI::Range(0.01, 3600.0))
    ->capture_default_str();
  cmd->add_option("--max-pods", options.max_pods, "Most pods alive at once")
    ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
    ->capture_default_str();
  cmd->add_option("--update-rate", options.update_rate,
                  "Object updates per second (0: none)")
    ->check(CLI::Range(0.0, 100000.0))
    ->capture_default_str();
  cmd->add_option("--readers", options.readers, "Reader threads")
    ->check(CLI::Range(std::size_t{0}, std::size_t{64}))
    ->capture_default_str();
  cmd->add_option("--read-rate", options.read_rate,
                  "Reads per second per reader")
    ->check(CLI::Range(0.01, 1000000.0))
    ->capture_default_str();
  cmd->add_option("--seed", options.seed, "Seed of the random choices")
    ->capture_default_str();
  cmd->add_option("--strategy", options.strategy,
                  "How the managers keep objects: Watch, Cache or Get")
    ->check(CLI::IsMember({"Watch", "Cache", "Get"}))
    ->capture_default_str();
  cmd->add_option("--fault-period", options.fault_period,
                  "Seconds between injected API server faults: failing "
                  "lists and watches, closed watches, expired history, "
                  "restarts (0: none)")
    ->check(CLI::Range(0.0, 3600.0))
    ->capture_default_str();
  cmd->add_flag("--json", options.json,
                "Print the summary as one JSON object");
  cmd->add_option("--serve", options.front.listen,
                  "Serve the simulation's API server over the Kubernetes "
                  "REST API on ADDRESS:PORT while it runs (as `podref "
                  "apiserver`: a loopback address without TLS; port 0 "
                  "picks one)")
    ->type_name("ADDRESS:PORT");
  add_front_flags(*cmd, options.front);
  return cmd;
}

int run_simulate_command(const simulate_options& options, std::ostream& out,
                         std::ostream& err) {
  auto input = load_input(options.manifests, err);
  if (!input)
    return 1;
  simulation_config config;
  config.duration = std::chrono::duration<double>(options.duration);
  config.pod_rate = options.pod_rate;
  config.pod_lifetime = std::chrono::duration<double>(options.pod_lifetime);
  config.max_pods = options.max_pods;
  config.update_rate = options.update_rate;
  config.readers = options.readers;
  config.read_rate = options.read_rate;
  config.seed = options.seed;
  config.fault_period = std::chrono::duration<double>(options.fault_period);
  auto strategy = parse_strategy(options.strategy);
  if (!strategy) {
    err << "podref: simulate: " << strategy.error().message << '\n';
    return 2;
  }
  config.strategy = *strategy;
  progress_callback progress;
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  if (tty)
    progress = [&err](const simulation_progress& p) {
      fmt::print(err,
                 "\r{:5.1f}/{:.1f} s  pods {} live, {} arrived, {} left  "
                 "reads {}  updates {}\x1b[K",
                 p.elapsed.count(), p.duration.count(), p.live_pods,
                 p.pods_arrived, p.pods_left, p.reads, p.updates);
      err.flush();
    };
  serve_hook serve;
  if (!options.front.listen.empty()) {
    // The URL goes where the summary does not (a --json summary is one
    // JSON object on standard output).
    std::ostream& notes = options.json ? err : out;
    serve = [&](runtime& rt, api_server& api)
      -> result<std::shared_ptr<void>> {
      auto front = start_front(rt.system(), api.current_actor(),
                               options.front, false, notes);
      if (!front)
        return error_info{front.error().code,
                          "cannot serve: " + front.error().message};
      return std::shared_ptr<void>{std::move(front).value()};
    };
  } else if ((!options.front.kubeconfig.empty()
                 || !options.front.tls_dir.empty()
                 || !options.front.tls_cert.empty())) {
    err << "podref: simulate: --write-kubeconfig and the TLS flags need "
           "--serve\n";
    return 2;
  }
  auto summary = run_simulation(config, *input, progress, serve);
  if (!summary.aborted.empty()) {
    if (tty)
      err << "\r\x1b[K";
    err << "podref: simulate: " << summary.aborted << '\n';
    return 1;
  }
  if (tty) {
    // Clears the progress line.
    err << "\r\x1b[K";
    err.flush();
  }
  if (options.json)
    out << to_json(summary).dump(
             -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
        << '\n';
  else
    print_table(summary, out);
  out.flush();
  if (!out) {
    err << "podref: cannot write the output\n";
    return 1;
  }
  return summary.passed() ? 0 : 1;
}

} // namespace podref::cli
