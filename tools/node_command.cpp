// `podref node` (node_command.hpp).
#include "node_command.hpp"

#include <csignal>
#include <ctime>
#include <iostream>
#include <mutex>
#include <sstream>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>

#include "node_endpoint.hpp"
#include "podref/messages/strategy.hpp"
#include "podref/messages/validation.hpp"
#include "podref/node/node_agent.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/kubeconfig.hpp"
#include "podref/wire/metric_family.hpp"

namespace podref::cli {

namespace {

const char* event_name(node_agent_event::kind k) {
  switch (k) {
    case node_agent_event::kind::registered:
      return "registered";
    case node_agent_event::kind::unregistered:
      return "unregistered";
    case node_agent_event::kind::rejected:
      return "rejected";
    case node_agent_event::kind::checked:
      return "checked";
    case node_agent_event::kind::source_failed:
      return "source_failed";
    case node_agent_event::kind::synced:
      return "synced";
    case node_agent_event::kind::node_ttl:
      return "node_ttl";
    case node_agent_event::kind::deletion_confirmed:
      return "deletion_confirmed";
    case node_agent_event::kind::node_registered:
      return "node_registered";
  }
  return "unknown";
}

std::string metrics_text(const node_agent_stats& st, const cluster_stats& cs,
                         const std::string& host) {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  auto gauge = [&](const std::string& name, const std::string& help,
                   double v) {
    out.push_back(wire::metric_family(name, help, MetricType::Gauge));
    wire::add_sample(out.back(), v);
  };
  auto counter = [&](const std::string& name, const std::string& help,
                     double v) {
    out.push_back(wire::metric_family(name, help, MetricType::Counter));
    wire::add_sample(out.back(), v);
  };
  gauge("kubelet_running_pods",
        "Pods registered with the secret and configmap managers.",
        static_cast<double>(st.registered_pods));
  gauge("podref_node_pods_with_problems",
        "Registered pods whose last read found an object or key missing.",
        static_cast<double>(st.pods_with_problems));
  gauge("podref_node_referenced_objects",
        "Secrets and ConfigMaps the registered pods reference.",
        static_cast<double>(st.referenced_objects));
  gauge("podref_node_open_watches",
        "Object watches the managers hold open.",
        static_cast<double>(st.open_watches));
  gauge("podref_node_pods_synced",
        "1 while the node's pod list is synced.", st.synced ? 1 : 0);
  counter("podref_node_object_reads_total",
          "Object reads of pod checks.", static_cast<double>(st.reads));
  counter("podref_node_object_read_failures_total",
          "Object reads of pod checks that failed.",
          static_cast<double>(st.reads_failed));
  counter("podref_node_rejected_pods_total",
          "Pods refused by the decoder or the managers.",
          static_cast<double>(st.rejected_pods));
  counter("podref_node_confirmed_deletes_total",
          "Grace-0 DELETEs sent for pods being deleted.",
          static_cast<double>(st.deletes_sent));
  counter("podref_node_pod_source_failures_total",
          "Failed lists and watches of the node's pods.",
          static_cast<double>(st.source_failures));
  // client-go's request counter, as the kubelet exposes it.
  out.push_back(wire::metric_family("rest_client_requests_total",
                       "Number of HTTP requests, partitioned by status code, "
                       "method, and host.",
                       MetricType::Counter));
  for (const auto& [key, n] : cs.requests) {
    auto sp = key.find(' ');
    auto code = key.substr(sp + 1);
    wire::add_sample(out.back(), static_cast<double>(n),
              {{"code", code == "0" ? "<error>" : code},
               {"host", host},
               {"method", key.substr(0, sp)}});
  }
  gauge("podref_node_open_streams", "Watch streams open at the client.",
        static_cast<double>(cs.open_streams));
  return prometheus::TextSerializer{}.Serialize(out);
}

/// The host:port of a server URL, for rest_client_requests_total.
std::string host_of(const std::string& url) {
  auto start = url.find("://");
  auto rest = start == std::string::npos ? url : url.substr(start + 3);
  return rest.substr(0, rest.find('/'));
}

} // namespace

CLI::App* add_node_command(CLI::App& app, node_options& options) {
  auto* cmd = app.add_subcommand(
    "node",
    "Run as one node's Secret/ConfigMap agent against a cluster: watch the\n"
    "pods bound to --node-name as the kubelet does, register them with the\n"
    "managers, read every object they reference and report what is missing\n"
    "with the kubelet's wording, until SIGINT or SIGTERM.");
  cmd->add_option("--kubeconfig", options.kubeconfig,
                  "the kubeconfig (default: $KUBECONFIG, ~/.kube/config, "
                  "else in a pod its service account)");
  cmd->add_option("--context", options.context, "the kubeconfig context");
  cmd->add_option("--node-name", options.node_name, "the node's name")
    ->required();
  cmd->add_option("--strategy", options.strategy,
                  "Watch, Cache or Get (the kubelet's "
                  "configMapAndSecretChangeDetectionStrategy)")
    ->capture_default_str();
  cmd->add_flag("--json", options.json,
                "one JSON object a line per event instead of the status line");
  cmd->add_flag("--confirm-deletes", options.confirm_deletes,
                "delete pods with a deletionTimestamp with grace period 0, "
                "as the kubelet confirms a deletion");
  cmd->add_flag("--register-node", options.register_node,
                "create the Node object at start");
  cmd->add_option("--metrics", options.metrics,
                  "serve /metrics, /healthz and /readyz on this loopback "
                  "ADDRESS:PORT (port 0 picks one)");
  cmd->add_option("--recheck", options.recheck_seconds,
                  "seconds between rereads of the pods' objects")
    ->capture_default_str()
    ->check(CLI::Range(0.01, 86400.0));
  cmd->add_option("--duration", options.duration_seconds,
                  "stop after this many seconds (0: only on a signal)")
    ->capture_default_str()
    ->check(CLI::Range(0.0, 1e9));
  return cmd;
}

int run_node_command(const node_options& options, std::ostream& out,
                     std::ostream& err) {
  if (auto bad = object_name_problem(options.node_name)) {
    err << "podref node: --node-name: " << *bad << '\n';
    return 1;
  }
  auto strat = parse_strategy(options.strategy);
  if (!strat) {
    err << "podref node: --strategy: " << strat.error().message << '\n';
    return 1;
  }
  auto config = wire::resolve_client_config(
    wire::selection_from_environment(options.kubeconfig, options.context),
    wire::in_cluster_from_environment());
  if (!config) {
    err << "podref node: " << config.error().message << '\n';
    return 1;
  }
  // Block the signals before any thread starts, so that sigtimedwait gets
  // them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  runtime rt;
  auto c = cluster::connect(rt, *config);
  if (!c) {
    err << "podref node: " << c.error().message << '\n';
    return 1;
  }
  std::mutex out_mtx;
  bool status_line = !options.json && isatty(STDOUT_FILENO) == 1;
  node_agent_options opts;
  opts.node_name = options.node_name;
  opts.managers.strategy = *strat;
  opts.confirm_deletes = options.confirm_deletes;
  opts.register_node = options.register_node;
  opts.recheck = std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::duration<double>(options.recheck_seconds));
  auto listener = [&](const node_agent_event& ev) {
    std::lock_guard<std::mutex> guard{out_mtx};
    if (options.json) {
      nlohmann::json j;
      j["event"] = event_name(ev.what);
      j["time"] = std::time(nullptr);
      if (!ev.ns.empty())
        j["namespace"] = ev.ns;
      if (!ev.name.empty())
        j["name"] = ev.name;
      if (!ev.problems.empty() || ev.what == node_agent_event::kind::checked)
        j["problems"] = ev.problems;
      out << j.dump() << '\n' << std::flush;
      return;
    }
    // Problems go to the terminal as they come; the rest is counted.
    if (ev.problems.empty() || ev.what == node_agent_event::kind::node_ttl)
      return;
    if (status_line)
      out << "\r\033[K";
    for (const auto& p : ev.problems)
      out << event_name(ev.what) << ' '
          << (ev.ns.empty() ? "" : ev.ns + "/") << ev.name << ": " << p
          << '\n';
    out << std::flush;
  };
  auto agent = std::make_unique<node_agent>(rt, **c, opts, listener);
  std::unique_ptr<node_endpoint> endpoint;
  if (!options.metrics.empty()) {
    auto host = host_of(config->server);
    auto* a = agent.get();
    auto* cl = c->get();
    node_endpoint::handlers h;
    h.metrics = [a, cl, host] { return metrics_text(a->stats(), cl->stats(), host); };
    h.ready = [a] { return a->stats().synced; };
    auto ep = node_endpoint::start(options.metrics, std::move(h));
    if (!ep) {
      err << "podref node: " << ep.error().message << '\n';
      return 1;
    }
    endpoint = std::move(ep).value();
    std::lock_guard<std::mutex> guard{out_mtx};
    if (options.json)
      out << nlohmann::json{{"event", "serving"}, {"url", endpoint->url()}}.dump()
          << '\n';
    else
      out << "metrics on " << endpoint->url() << '\n';
    out << std::flush;
  }
  auto started = std::chrono::steady_clock::now();
  int sig = 0;
  for (;;) {
    timespec tick{0, 250 * 1000 * 1000};
    sig = sigtimedwait(&set, nullptr, &tick);
    if (sig > 0)
      break;
    auto elapsed = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - started)
                     .count();
    if (options.duration_seconds > 0 && elapsed >= options.duration_seconds) {
      sig = 0;
      break;
    }
    if (!status_line)
      continue;
    auto st = agent->stats();
    auto cs = c->get()->stats();
    std::ostringstream line;
    line << "\r\033[K" << options.node_name << ": " << st.registered_pods
         << " pods (" << st.pods_with_problems << " with problems), "
         << st.referenced_objects << " objects, " << cs.open_streams
         << " watches, " << st.reads_failed << " reads failed"
         << (st.synced ? "" : ", pods not synced");
    if (st.last_change.time_since_epoch().count() != 0) {
      auto ago = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now() - st.last_change);
      line << ", last change " << ago.count() << "s ago";
    }
    std::lock_guard<std::mutex> guard{out_mtx};
    out << line.str() << std::flush;
  }
  endpoint.reset();
  auto st = agent->stats();
  agent.reset();
  std::lock_guard<std::mutex> guard{out_mtx};
  if (status_line)
    out << "\r\033[K";
  if (options.json)
    out << nlohmann::json{{"event", "stopped"},
                          {"signal", sig},
                          {"registered_pods", st.registered_pods},
                          {"pods_with_problems", st.pods_with_problems}}
             .dump()
        << '\n';
  else
    out << "stopped" << (sig > 0 ? " on signal " + std::to_string(sig) : "")
        << ": " << st.registered_pods << " pods, " << st.pods_with_problems
        << " with problems\n";
  return 0;
}

} // namespace podref::cli
