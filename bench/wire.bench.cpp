// podref_wire_bench: time to sync N Secrets through the wire source, per
// transport, against `podref apiserver`'s front in process (loopback):
// h2 over TLS (ALPN, bearer token), h2c with prior knowledge, HTTP/1.1.
//
// For each transport: a fresh API server holding --objects Secrets of
// --bytes value bytes, its HTTP front, a cluster without client-side rate
// limit (--qps 0, the default; the kubelet's is 50), and a Watch manager;
// then --objects pods are registered, each referencing its own Secret, and
// the clock runs until every Secret reads as synced and every watch stream
// is open. The front's watch and connection bounds are raised to fit. Prints the wall time, the process's CPU time over it (client and
// server share the process), requests, connections, HTTP/2 replies and
// bytes received. Timings from a loaded machine are not figures; run it on
// a quiet one (docs/benchmarks.md).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bench/process_stats.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/tls_material.hpp"

namespace {

using namespace podref;
using clock_type = std::chrono::steady_clock;

constexpr const char* bench_token = "tok-wire-bench-0123456789";

struct options {
  std::size_t objects = 1000;
  std::size_t bytes = 1024;
  double qps = 0;
  std::string transport = "all"; // h2-tls, h2c, http1, all
};

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return false;
    std::string v = argv[++i];
    char* end = nullptr;
    if (arg == "--objects")
      o.objects = std::strtoull(v.c_str(), &end, 10);
    else if (arg == "--bytes")
      o.bytes = std::strtoull(v.c_str(), &end, 10);
    else if (arg == "--qps")
      o.qps = std::strtod(v.c_str(), &end);
    else if (arg == "--transport" && (v == "h2-tls" || v == "h2c"
                                      || v == "http1" || v == "all"))
      o.transport = v;
    else
      return false;
    if (end != nullptr && *end != '\0')
      return false;
  }
  return o.objects > 0;
}

/// A temporary directory for the TLS material, removed after.
struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/podref-wire-bench-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::string cmd = "rm -rf '" + path + "'";
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }
};

api_object secret_of(std::size_t i, const std::string& value) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = "default";
  x->metadata.name = "s" + std::to_string(i);
  x->type = "Opaque";
  x->data["k"] = value;
  return api_object{secret_ptr{std::move(x)}};
}

/// A pod whose only reference is an image pull secret: s<i>.
pod pod_of(std::size_t i) {
  pod p;
  p.metadata.ns = "default";
  p.metadata.name = "p" + std::to_string(i);
  p.metadata.uid = "uid-" + std::to_string(i);
  p.spec.image_pull_secrets.push_back(
    local_object_reference{"s" + std::to_string(i)});
  return p;
}

/// One transport's run; false when something failed (printed).
bool run(const options& o, const std::string& transport) {
  runtime rt;
  api_server api{rt};
  std::string value(o.bytes, 'x');
  for (std::size_t i = 0; i < o.objects; ++i)
    if (!api.create(secret_of(i, value))) {
      std::fprintf(stderr, "create s%zu failed\n", i);
      return false;
    }
  temp_dir dir;
  wire::http_server_options sopts;
  // The front's own bounds (4096 watches, 1024 connections) are not what
  // is measured; HTTP/1.1 needs a connection per watch.
  sopts.max_watches = o.objects + 64;
  sopts.max_connections = o.objects + 64;
  wire::client_config cfg;
  cfg.origin = "podref_wire_bench";
  cluster_options copts;
  copts.source.qps = o.qps;
  if (transport == "h2-tls") {
    auto files = wire::ensure_tls_dir(dir.path + "/tls", {"127.0.0.1"});
    auto tokens = wire::token_table::parse(
      std::string{bench_token} + ",bench,u-1\n", "tokens.csv");
    auto ca = files ? wire::read_small_file(files->ca_cert)
                    : result<std::string>{files.error()};
    if (!files || !tokens || !ca) {
      std::fprintf(stderr, "TLS material failed\n");
      return false;
    }
    sopts.tls = wire::http_tls_options{files->cert, files->key, {}};
    sopts.tokens = std::make_shared<const wire::token_table>(*tokens);
    cfg.ca_pem = *ca;
    cfg.token = bench_token;
  } else if (transport == "h2c") {
    copts.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
  }
  auto front = wire::http_server::start(rt.system(), api.current_actor(),
                                        sopts);
  if (!front) {
    std::fprintf(stderr, "%s\n", front.error().message.c_str());
    return false;
  }
  cfg.server = (*front)->url();
  auto connected = cluster::connect(rt, cfg, copts);
  if (!connected) {
    std::fprintf(stderr, "%s\n", connected.error().message.c_str());
    return false;
  }
  auto cl = std::move(connected).value();
  bool ok = true;
  {
    manager_options mo;
    mo.strategy = strategy::watch;
    mo.sync_timeout = std::chrono::seconds(120);
    secret_manager mgr{rt, *cl, mo};
    auto cpu0 = bench::process_cpu_seconds();
    auto t0 = clock_type::now();
    for (std::size_t i = 0; i < o.objects; ++i)
      if (!mgr.register_pod(pod_of(i)))
        ok = false;
    for (std::size_t i = 0; ok && i < o.objects; ++i)
      if (!mgr.get_secret("default", "s" + std::to_string(i))) {
        std::fprintf(stderr, "s%zu did not sync\n", i);
        ok = false;
      }
    auto synced = clock_type::now();
    auto deadline = synced + std::chrono::seconds(60);
    while (ok && cl->stats().open_streams < o.objects) {
      if (clock_type::now() > deadline) {
        std::fprintf(stderr, "watches did not all open\n");
        ok = false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    auto watching = clock_type::now();
    auto cpu = bench::process_cpu_seconds() - cpu0;
    auto st = cl->stats();
    std::uint64_t requests = st.open_streams;
    for (const auto& [k, n] : st.requests)
      requests += n;
    auto ms = [&](clock_type::time_point t) {
      return std::chrono::duration<double, std::milli>(t - t0).count();
    };
    std::printf("%-7s objects %zu  synced %.1f ms  watching %.1f ms  cpu "
                "%.2f s  requests %llu (GET 200 %llu, streams %llu)  "
                "connections %llu  h2 replies %llu  bytes %llu\n",
                transport.c_str(), o.objects, ms(synced), ms(watching), cpu,
                static_cast<unsigned long long>(requests),
                static_cast<unsigned long long>(st.requests["GET 200"]),
                static_cast<unsigned long long>(st.open_streams),
                static_cast<unsigned long long>(st.connects),
                static_cast<unsigned long long>(st.http2_responses),
                static_cast<unsigned long long>(st.bytes_received));
  }
  cl.reset();
  (*front)->stop();
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: podref_wire_bench [--objects N] [--bytes B] "
                 "[--qps Q] [--transport h2-tls|h2c|http1|all]\n");
    return 2;
  }
  bool ok = true;
  for (const char* t : {"h2-tls", "h2c", "http1"})
    if (o.transport == "all" || o.transport == t)
      ok = run(o, t) && ok;
  return ok ? 0 : 1;
}
