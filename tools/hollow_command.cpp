// `podref hollow` (hollow_command.hpp; docs/hollow.md).
#include "hollow_command.hpp"

#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "bench/process_stats.hpp"
#include "hollow/bundled_manifests.hpp"
#include "hollow/convergence.hpp"
#include "hollow/fleet.hpp"
#include "hollow/propagation.hpp"
#include "hollow/report.hpp"
#include "hollow/updater.hpp"
#include "hollow/workload.hpp"
#include "podref/messages/strategy.hpp"
#include "podref/messages/validation.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/kubeconfig.hpp"

namespace podref::cli {

namespace {

using namespace hollow;
using steady = std::chrono::steady_clock;

/// Every watch is a socket over HTTP/1.1 and one client a node opens its
/// own connections: lift the soft limit of open files to the hard one (as
/// Go programs do at start).
void raise_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

/// The manifests of `dir` (*.yaml, *.yml, *.json), or the bundled ones.
result<std::vector<std::pair<std::string, std::string>>>
manifests_of(const std::string& dir) {
  if (dir.empty())
    return bundled_manifests();
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> out;
  for (fs::directory_iterator i{dir, ec}, end; !ec && i != end; i.increment(ec)) {
    auto ext = i->path().extension();
    if (!i->is_regular_file(ec)
        || (ext != ".yaml" && ext != ".yml" && ext != ".json"))
      continue;
    std::ifstream in{i->path(), std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    out.emplace_back(i->path().string(), text.str());
  }
  if (ec)
    return error_info{errc::invalid_argument,
                      "--manifests: cannot read " + dir + ": " + ec.message()};
  std::sort(out.begin(), out.end());
  return out;
}

double since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
}

} // namespace

CLI::App* add_hollow_command(CLI::App& app, hollow_options& options) {
  auto* cmd = app.add_subcommand(
    "hollow",
    "Run --nodes node agents in one process (each its own pod watch and\n"
    "managers, as that many kubelets would have) against a cluster, to\n"
    "load-test what their watches do to the API server. With --create-pods\n"
    "it also creates the pods (from the bundled example manifests, with\n"
    "their Secrets and ConfigMaps) and updates the objects at --update-rate.\n"
    "At the end (--duration or a signal) it checks that every node converged\n"
    "and prints sync time, propagation, API requests, memory and CPU.");
  cmd->add_option("--kubeconfig", options.kubeconfig,
                  "the kubeconfig (default: $KUBECONFIG, ~/.kube/config, "
                  "else in a pod its service account)");
  cmd->add_option("--context", options.context, "the kubeconfig context");
  cmd->add_option("--nodes", options.nodes, "hollow nodes")
    ->required()
    ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  cmd->add_option("--pods-per-node", options.pods_per_node,
                  "pods created per node (--create-pods)")
    ->capture_default_str()
    ->check(CLI::Range(std::size_t{0}, std::size_t{1000}));
  cmd->add_option("--strategy", options.strategy,
                  "Watch, Cache or Get (the kubelet's "
                  "configMapAndSecretChangeDetectionStrategy)")
    ->capture_default_str();
  cmd->add_option("--node-prefix", options.node_prefix,
                  "node names are PREFIX0, PREFIX1, ...")
    ->capture_default_str();
  cmd->add_flag("--share-connections", options.share_connections,
                "one HTTP client (and its connections) for every node, "
                "instead of one per node as kubelets have");
  auto* create = cmd->add_flag("--create-pods", options.create_pods,
                               "create the pods and their objects, update "
                               "the objects, delete the pods at the end");
  cmd->add_option("--update-rate", options.update_rate,
                  "object updates per second (--create-pods)")
    ->capture_default_str()
    ->check(CLI::Range(0.0, 100000.0))
    ->needs(create);
  cmd->add_option("--duration", options.duration_seconds,
                  "stop after this many seconds (0: only on a signal)")
    ->capture_default_str()
    ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--json", options.json, "the summary as one JSON object");
  cmd->add_option("--plot", options.plot,
                  "draw propagation and open watches over time into this PNG "
                  "(gnuplot)");
  cmd->add_flag("--register-node", options.register_node,
                "create the Nodes at start (always with --create-pods)");
  cmd->add_flag("--h2c", options.h2c,
                "HTTP/2 with prior knowledge for an http:// server (as over "
                "TLS: a client's watches share its connection)");
  cmd->add_option("--threads", options.threads,
                  "threads running the agents' work (reads, checks, replies)")
    ->capture_default_str()
    ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  cmd->add_option("--settle", options.settle_seconds,
                  "seconds the final check may wait for every node to converge")
    ->capture_default_str()
    ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--recheck", options.recheck_seconds,
                  "seconds between rereads of the pods' objects")
    ->capture_default_str()
    ->check(CLI::Range(0.01, 86400.0));
  cmd->add_option("--manifests", options.manifests,
                  "draw pods and objects from this directory instead of the "
                  "bundled examples")
    ->needs(create);
  cmd->add_flag("--keep-pods", options.keep_pods,
                "leave the created pods on the server")
    ->needs(create);
  return cmd;
}

int run_hollow_command(const hollow_options& options, std::ostream& out,
                       std::ostream& err) {
  auto last_name = options.node_prefix + std::to_string(options.nodes - 1);
  if (auto bad = object_name_problem(last_name)) {
    err << "podref hollow: --node-prefix: " << last_name << ": " << *bad
        << '\n';
    return 1;
  }
  auto strat = parse_strategy(options.strategy);
  if (!strat) {
    err << "podref hollow: --strategy: " << strat.error().message << '\n';
    return 1;
  }
  // kubectl's choice: the kubeconfig when there is one, else in a pod its
  // service account (deploy/: hollow nodes as pods, no kubeconfig).
  auto config = wire::resolve_client_config(
    wire::selection_from_environment(options.kubeconfig, options.context),
    wire::in_cluster_from_environment());
  if (!config) {
    err << "podref hollow: " << config.error().message << '\n';
    return 1;
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < options.nodes; ++i)
    names.push_back(options.node_prefix + std::to_string(i));
  std::optional<workload> plan;
  if (options.create_pods) {
    auto texts = manifests_of(options.manifests);
    if (!texts) {
      err << "podref hollow: " << texts.error().message << '\n';
      return 1;
    }
    auto planned = plan_workload(*texts, names, options.pods_per_node);
    if (!planned) {
      err << "podref hollow: " << planned.error().message << '\n';
      return 1;
    }
    plan = std::move(planned).value();
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  raise_file_limit();

  run_summary s;
  s.nodes = options.nodes;
  s.strategy = to_string(*strat);
  s.share_connections = options.share_connections;
  s.threads = options.threads;
  s.update_rate = options.update_rate;
  auto t0 = steady::now();
  propagation_tracker tracker{t0};
  if (plan)
    for (const auto& [key, nodes] : plan->watchers)
      tracker.set_watchers(key, nodes);
  runtime rt;
  auto loop = wire::io_loop::start();
  if (!loop) {
    err << "podref hollow: " << loop.error().message << '\n';
    return 1;
  }
  // The command's own client (create, update, check) speaks HTTP/1.1 on a
  // plain-http server even with --h2c: idle between the creation and the
  // final check, its h2c connection gets the server's idle GOAWAY, and
  // libcurl 7.88 then stalls the next request until the server's 10 s
  // request timeout (docs/client.md, "Not yet").
  wire::http_client_options admin_opts;
  admin_opts.loop = *loop;
  auto admin = wire::http_client::start(*config, admin_opts);
  if (!admin) {
    err << "podref hollow: " << admin.error().message << '\n';
    return 1;
  }
  if (plan) {
    s.created = create_workload(**admin, *plan);
    if (!options.json)
      fmt::print(out, "created {} namespaces, objects and pods ({} existed, "
                      "{} failed) in {:.1f} s\n",
                 s.created->created, s.created->existed, s.created->failed,
                 since(t0));
  }
  fleet_options fo;
  fo.config = *config;
  fo.prefix = options.node_prefix;
  fo.nodes = options.nodes;
  fo.strategy = *strat;
  fo.share_connections = options.share_connections;
  fo.h2c = options.h2c;
  fo.register_node = options.register_node || options.create_pods;
  fo.threads = options.threads;
  fo.loop = *loop;
  fo.recheck = std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::duration<double>(options.recheck_seconds));
  bench::trim_heap();
  s.rss_before = bench::rss_bytes();
  s.heap_before = bench::heap_bytes();
  auto cpu0 = bench::process_cpu_seconds();
  auto start = steady::now();
  auto observer = [&tracker](std::uint32_t node, resource res,
                             const object_change& c) {
    tracker.seen(node, object_key(res, c.ns, c.name), c.resource_version,
                 steady::now());
  };
  auto started = fleet::start(rt, fo, observer,
                              plan ? plan->pods_of_node
                                   : std::vector<std::size_t>{});
  if (!started) {
    err << "podref hollow: " << started.error().message << '\n';
    return 1;
  }
  auto f = std::move(started).value();
  if (!options.json)
    fmt::print(out, "started {} hollow nodes in {:.1f} s\n", f->size(),
               since(start));
  out << std::flush;
  std::vector<bool> node_synced(f->size(), false);
  std::size_t synced_count = 0;
  std::unique_ptr<updater> writes;
  double cpu_at_sync = 0;
  steady::time_point sync_at{};
  auto next_sample = start;
  int sig = 0;
  for (;;) {
    timespec tick{0, 100 * 1000 * 1000};
    sig = sigtimedwait(&set, nullptr, &tick);
    if (sig > 0)
      break;
    auto now = steady::now();
    if (synced_count < f->size())
      for (std::size_t i = 0; i < f->size(); ++i)
        if (!node_synced[i] && f->synced(i)) {
          node_synced[i] = true;
          ++synced_count;
          s.node_synced_s.push_back(since(start));
        }
    if (synced_count == f->size() && !s.all_synced_s) {
      s.all_synced_s = since(start);
      cpu_at_sync = bench::process_cpu_seconds();
      // What the nodes keep, not what syncing used on the way (lists).
      bench::trim_heap();
      s.rss_synced = bench::rss_bytes();
      s.heap_synced = bench::heap_bytes();
      s.cpu_sync_s = cpu_at_sync - cpu0;
      sync_at = now;
      if (!options.json)
        fmt::print(out, "all {} nodes synced in {:.2f} s\n", f->size(),
                   *s.all_synced_s);
      out << std::flush;
      if (plan && options.update_rate > 0)
        writes = std::make_unique<updater>(**admin, *plan, tracker,
                                           options.update_rate);
    }
    if (now >= next_sample) {
      next_sample += std::chrono::milliseconds(500);
      auto c = f->counts();
      s.series.push_back({since(start), f->clients().open_streams,
                          synced_count, c.registered_pods});
    }
    if (options.duration_seconds > 0
        && since(start) >= options.duration_seconds)
      break;
  }
  if (writes)
    writes->stop();
  s.duration_s = since(start);
  if (!s.all_synced_s) {
    s.cpu_sync_s = bench::process_cpu_seconds() - cpu0;
    bench::trim_heap();
    s.rss_synced = bench::rss_bytes();
    s.heap_synced = bench::heap_bytes();
  } else {
    s.cpu_steady_s = bench::process_cpu_seconds() - cpu_at_sync;
    s.steady_s = std::chrono::duration<double>(steady::now() - sync_at).count();
  }
  if (plan)
    s.propagation = tracker.result();
  s.convergence = check_convergence(
    *f, **admin,
    std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options.settle_seconds)));
  s.counts = f->counts();
  s.clients = f->clients();
  s.rss_end = bench::rss_bytes();
  f.reset();
  if (plan && !options.keep_pods)
    s.deleted = delete_pods(**admin, *plan);
  if (options.json)
    out << to_json(s).dump() << '\n';
  else
    print_summary(s, out);
  if (!options.plot.empty())
    if (auto failure = write_plot(s, options.plot); !failure.empty())
      err << "podref hollow: --plot: " << failure << '\n';
  out << std::flush;
  return s.ok() ? 0 : 1;
}

} // namespace podref::cli
