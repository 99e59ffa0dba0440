// podref_mux_bench: adaptive watch multiplexing over the wire
// (docs/multiplexing.md). A Watch manager over a cluster (h2c, no
// client-side rate limit) syncs --namespaces x --per-namespace referenced
// Secrets (one pod per namespace), each namespace holding --unreferenced
// more, from `podref apiserver`'s front in a child process (forked at
// start, so that this process's memory is the client's alone); once per
// threshold of --k (0: off, the kubelet's way).
//
// Per threshold it prints: the API watches held once synced, the requests
// made to sync (lists, pages and watches), the time until every Secret
// reads as synced and until every watch is open, the client's RSS per
// referenced object, and, after one write to each unreferenced object
// through the front, the events the client received for unreferenced
// objects (the namespace lists' items included) and the bytes that cost.
// Timings from a loaded machine are not figures; run it on a quiet one.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/h2c_cluster.hpp"
#include "bench/process_stats.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/http_server.hpp"

namespace {

using namespace podref;
using clock_type = std::chrono::steady_clock;

struct options {
  std::size_t namespaces = 100;
  std::size_t per_namespace = 100;
  std::size_t unreferenced = 10;
  std::size_t bytes = 1024;
  /// The unreferenced Secrets' size (0: --bytes).
  std::size_t unreferenced_bytes = 0;
  std::vector<std::size_t> ks{0, 1, 16};
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string arg = argv[i];
    std::string v = argv[i + 1];
    char* end = nullptr;
    if (arg == "--k") {
      o.ks.clear();
      for (std::size_t at = 0; at <= v.size();) {
        auto comma = v.find(',', at);
        if (comma == std::string::npos)
          comma = v.size();
        auto part = v.substr(at, comma - at);
        o.ks.push_back(std::strtoull(part.c_str(), &end, 10));
        if (part.empty() || *end != '\0')
          return false;
        at = comma + 1;
      }
      continue;
    }
    auto x = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0')
      return false;
    if (arg == "--namespaces")
      o.namespaces = x;
    else if (arg == "--per-namespace")
      o.per_namespace = x;
    else if (arg == "--unreferenced")
      o.unreferenced = x;
    else if (arg == "--bytes")
      o.bytes = x;
    else if (arg == "--unreferenced-bytes")
      o.unreferenced_bytes = x;
    else
      return false;
  }
  return argc % 2 == 1 && o.namespaces > 0 && o.per_namespace > 0;
}

std::string ns_of(std::size_t n) {
  return "ns" + std::to_string(n);
}

std::string referenced_name(std::size_t i) {
  return "s" + std::to_string(i);
}

std::string unreferenced_name(std::size_t i) {
  return "u" + std::to_string(i);
}

api_object secret_of(const std::string& ns, const std::string& name,
                     const std::string& value) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = ns;
  x->metadata.name = name;
  x->type = "Opaque";
  x->data["k"] = value;
  return api_object{secret_ptr{std::move(x)}};
}

// -- the server, in a child process ---------------------------------------------

/// A child serving the Secrets; it reads one byte (go), answers its port
/// as text, then serves until its stdin pipe closes.
struct server_child {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;

  /// Forks before this process has any thread; the child closes the
  /// parent's ends of the `earlier` children's pipes (else they would not
  /// see their pipe close).
  bool fork_now(const options& o, const std::vector<server_child>& earlier) {
    int down[2];
    int up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0)
      return false;
    pid = ::fork();
    if (pid < 0)
      return false;
    if (pid == 0) {
      ::close(down[1]);
      ::close(up[0]);
      for (const auto& x : earlier) {
        ::close(x.to_child);
        ::close(x.from_child);
      }
      std::_Exit(serve(o, down[0], up[1]));
    }
    ::close(down[0]);
    ::close(up[1]);
    to_child = down[1];
    from_child = up[0];
    return true;
  }

  static int serve(const options& o, int in, int out) {
    char go = 0;
    if (::read(in, &go, 1) != 1)
      return 0; // not needed
    runtime rt;
    api_server api{rt};
    std::string value(o.bytes, 'x');
    std::string other(o.unreferenced_bytes > 0 ? o.unreferenced_bytes
                                               : o.bytes,
                      'y');
    for (std::size_t n = 0; n < o.namespaces; ++n) {
      for (std::size_t i = 0; i < o.per_namespace; ++i)
        api.create(secret_of(ns_of(n), referenced_name(i), value));
      for (std::size_t i = 0; i < o.unreferenced; ++i)
        api.create(secret_of(ns_of(n), unreferenced_name(i), other));
    }
    wire::http_server_options sopts;
    sopts.max_watches = o.namespaces * o.per_namespace + 64;
    auto front = wire::http_server::start(rt.system(), api.current_actor(),
                                          sopts);
    auto port = front ? std::to_string((*front)->port()) + "\n"
                      : std::string{"0\n"};
    if (::write(out, port.data(), port.size()) < 0 || !front)
      return 1;
    while (::read(in, &go, 1) > 0) {
      // serve until the parent closes the pipe
    }
    (*front)->stop();
    return 0;
  }

  /// Starts serving; the URL, or "" on failure.
  std::string start() {
    char go = 'g';
    if (::write(to_child, &go, 1) != 1)
      return {};
    std::string port;
    char c = 0;
    while (::read(from_child, &c, 1) == 1 && c != '\n')
      port.push_back(c);
    if (port.empty() || port == "0")
      return {};
    return "http://127.0.0.1:" + port;
  }

  void stop() {
    if (to_child >= 0)
      ::close(to_child);
    if (from_child >= 0)
      ::close(from_child);
    to_child = from_child = -1;
    if (pid > 0)
      ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
};

// -- the client -------------------------------------------------------------------

std::uint64_t requests_made(const cluster_stats& st) {
  std::uint64_t n = st.open_streams;
  for (const auto& [k, x] : st.requests)
    n += x;
  return n;
}

/// The finished requests that did not answer 200 (retries, failures), as
/// "VERB CODE: n" pairs; "none" if every one did.
std::string other_replies(const cluster_stats& st) {
  std::string out;
  for (const auto& [k, x] : st.requests)
    if (k != "GET 200")
      out += (out.empty() ? "" : ", ") + k + ": " + std::to_string(x);
  return out.empty() ? "none" : out;
}

/// PUT through the cluster's HTTP client; whether it answered 200.
bool put(cluster& cl, const api_object& obj) {
  auto done = std::make_shared<std::promise<int>>();
  auto status = done->get_future();
  wire::http_client::handlers h;
  h.on_done = [done](wire::http_response r) { done->set_value(r.status); };
  const auto& m = obj.meta();
  cl.client()->send("PUT",
                    "/api/v1/namespaces/" + m.ns + "/secrets/" + m.name,
                    wire::encode_object(obj), std::move(h));
  return status.wait_for(std::chrono::seconds(30)) == std::future_status::ready
         && status.get() == 200;
}

/// Waits (bounded by `limit`) until `f` holds.
template <class F>
bool wait_for(F f, std::chrono::seconds limit) {
  auto deadline = clock_type::now() + limit;
  while (!f()) {
    if (clock_type::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

bool measure(const options& o, std::size_t k, const std::string& url) {
  const auto total = o.namespaces * o.per_namespace;
  // A namespace past K holds one watch, else one per object.
  const auto expected_watches
    = k > 0 && o.per_namespace > k ? o.namespaces : total;
  runtime rt;
  auto cl = bench::connect_h2c(rt, url, "podref_mux_bench");
  if (!cl)
    return false;
  bool ok = true;
  {
    manager_options mo;
    mo.strategy = strategy::watch;
    mo.sync_timeout = std::chrono::seconds(120);
    mo.mux_threshold = k;
    secret_manager mgr{rt, *cl, mo};
    bench::trim_heap();
    auto rss0 = bench::rss_bytes();
    auto t0 = clock_type::now();
    std::vector<std::string> refs;
    for (std::size_t i = 0; i < o.per_namespace; ++i)
      refs.push_back(referenced_name(i));
    for (std::size_t n = 0; n < o.namespaces; ++n) {
      pod p;
      p.metadata.ns = ns_of(n);
      p.metadata.name = "p";
      p.metadata.uid = "uid-" + std::to_string(n);
      for (const auto& r : refs)
        p.spec.image_pull_secrets.push_back(local_object_reference{r});
      ok = static_cast<bool>(mgr.register_pod(p)) && ok;
    }
    for (std::size_t n = 0; ok && n < o.namespaces; ++n)
      for (const auto& r : refs)
        if (!mgr.get_secret(ns_of(n), r)) {
          std::fprintf(stderr, "%s/%s did not sync\n", ns_of(n).c_str(),
                       r.c_str());
          ok = false;
          break;
        }
    auto synced = clock_type::now();
    ok = ok && wait_for(
                 [&] { return cl->stats().open_streams >= expected_watches; },
                 std::chrono::seconds(120));
    auto watching = clock_type::now();
    auto sync_stats = cl->stats();
    bench::trim_heap();
    auto rss1 = bench::rss_bytes();
    // One write to every unreferenced object, through the front, by
    // another client: the manager's receives only what its watches bring.
    auto writer = bench::connect_h2c(rt, url, "podref_mux_bench_writer");
    if (!writer)
      return false;
    auto before = mgr.manager().stats().unreferenced_events;
    auto bytes0 = cl->stats().bytes_received;
    for (std::size_t n = 0; ok && n < o.namespaces; ++n)
      for (std::size_t i = 0; i < o.unreferenced; ++i)
        ok = put(*writer,
                 secret_of(ns_of(n), unreferenced_name(i), "changed"))
             && ok;
    // Multiplexed, each write comes back once; per object, none does.
    auto writes = o.namespaces * o.unreferenced;
    auto want = expected_watches == total ? 0 : writes;
    wait_for(
      [&] {
        return mgr.manager().stats().unreferenced_events - before >= want;
      },
      std::chrono::seconds(30));
    auto st = mgr.manager().stats();
    auto ms = [&](clock_type::time_point t) {
      return std::chrono::duration<double, std::milli>(t - t0).count();
    };
    std::printf(
      "K=%zu objects %zu: watches held %llu, requests to sync %llu (%llu "
      "bytes; not 200: %s; connections %llu), synced %.0f ms, watching %.0f ms, client RSS %.2f KB/object, "
      "unreferenced events: %llu with the lists, %llu for %zu writes (%llu "
      "bytes)\n",
      k, total, static_cast<unsigned long long>(sync_stats.open_streams),
      static_cast<unsigned long long>(requests_made(sync_stats)),
      static_cast<unsigned long long>(sync_stats.bytes_received),
      other_replies(sync_stats).c_str(),
      static_cast<unsigned long long>(sync_stats.connects), ms(synced),
      ms(watching),
      static_cast<double>(rss1 > rss0 ? rss1 - rss0 : 0) / 1024.0
        / static_cast<double>(total),
      static_cast<unsigned long long>(before),
      static_cast<unsigned long long>(st.unreferenced_events - before),
      writes,
      static_cast<unsigned long long>(cl->stats().bytes_received - bytes0));
    std::fflush(stdout);
  }
  cl.reset();
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: podref_mux_bench [--namespaces N] [--per-namespace "
                 "M] [--unreferenced U] [--bytes B] [--unreferenced-bytes "
                 "B] [--k K1,K2,...]\n");
    return 2;
  }
  // Every child now, while this process has no thread.
  std::vector<server_child> servers;
  for (std::size_t i = 0; i < o.ks.size(); ++i) {
    server_child s;
    if (!s.fork_now(o, servers)) {
      std::perror("fork");
      return 1;
    }
    servers.push_back(s);
  }
  bool ok = true;
  for (std::size_t i = 0; i < o.ks.size(); ++i) {
    auto url = servers[i].start();
    if (url.empty()) {
      std::fprintf(stderr, "the server did not start\n");
      ok = false;
    } else {
      ok = measure(o, o.ks[i], url) && ok;
    }
    servers[i].stop();
  }
  return ok ? 0 : 1;
}
