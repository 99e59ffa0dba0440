// `podref bench -w apiserver` (apiserver_bench.hpp): the server in this
// process, the client in a child forked before any server thread exists,
// the two speaking over two pipes, one command and one answer a line.
#include "bench/apiserver_bench.hpp"

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "bench/h2_load_client.hpp"
#include "bench/histogram.hpp"
#include "bench/process_stats.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/http_server.hpp"

namespace podref::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
         + static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec)
             * 1e-6;
}

double since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

/// One line from `fd` (blocking), without its '\n'; empty at EOF.
std::string read_line(int fd) {
  std::string line;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n')
    line.push_back(c);
  return line;
}

void write_line(int fd, const std::string& line) {
  auto text = line + "\n";
  for (std::size_t done = 0; done < text.size();) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0)
      return;
    done += static_cast<std::size_t>(n);
  }
}

std::string watch_path(const std::string& ns, const std::string& res,
                       const std::string& selector, std::uint64_t rv) {
  return "/api/v1/namespaces/" + ns + "/" + res + "?" + selector
         + "resourceVersion=" + std::to_string(rv)
         + "&allowWatchBookmarks=true&timeoutSeconds=3600&watch=true";
}

// -- the client process -------------------------------------------------------

/// Runs commands from `in` and answers on `out` until "quit" or EOF.
void client_main(int in, int out) {
  std::unique_ptr<h2_load_client> c;
  std::size_t expected_streams = 0;
  for (;;) {
    std::istringstream cmd{read_line(in)};
    std::string verb;
    cmd >> verb;
    auto t0 = clock_type::now();
    auto cpu0 = cpu_seconds();
    std::ostringstream reply;
    try {
      if (verb == "connect") {
        unsigned port = 0;
        std::size_t conns = 0;
        cmd >> port >> conns;
        c = std::make_unique<h2_load_client>(static_cast<std::uint16_t>(port),
                                             conns);
        reply << "ok";
      } else if (verb == "watch" || verb == "fanwatch") {
        std::size_t n = 0;
        std::uint64_t rv = 0;
        cmd >> n >> rv;
        std::vector<std::string> paths;
        paths.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
          paths.push_back(
            verb == "watch"
              ? watch_path("bench", "secrets",
                           "fieldSelector=metadata.name%3Dw" + std::to_string(i)
                             + "&",
                           rv)
              : watch_path("fan", "configmaps", "", rv));
        expected_streams += n;
        c->open_streams(paths);
        bool ok = c->run_until(
          [&] {
            return c->ok_streams() + c->failed_streams() >= expected_streams;
          },
          std::chrono::minutes(5));
        reply << (ok && c->failed_streams() == 0 ? "ok" : "failed") << ' '
              << since(t0) << ' ' << cpu_seconds() - cpu0 << ' '
              << c->ok_streams() << ' ' << c->failed_streams();
      } else if (verb == "expect") {
        std::uint64_t lines = 0;
        cmd >> lines;
        bool ok = c->run_until([&] { return c->lines() >= lines; },
                               std::chrono::minutes(2));
        auto last = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      c->last_line_at().time_since_epoch())
                      .count();
        reply << (ok ? "ok" : "failed") << ' ' << last << ' '
              << cpu_seconds() - cpu0 << ' ' << c->lines();
      } else if (verb == "latency") {
        // One operation, one request at a time, for SECONDS: get, list and
        // create, and the writes that track managedFields on a stored
        // Secret: update (PUT), patch (merge) and apply (server-side).
        double seconds = 0;
        std::string op;
        cmd >> seconds >> op;
        const std::string base = "/api/v1/namespaces/bench/secrets";
        // A Secret whose data "n" is four digits (valid base64): what the
        // writes change.
        auto secret = [](const std::string& name, const std::string& n) {
          return R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")"
                 + name + R"("},"data":{"k":"dmFsdWU=","n":")" + n + R"("}})";
        };
        auto n_of = [](std::size_t i) { return std::to_string(1000 + i % 9000); };
        if (op == "update" || op == "patch" || op == "apply")
          c->request("POST", base, secret("w-" + op, "0999"));
        histogram h;
        auto until = clock_type::now()
                     + std::chrono::duration_cast<clock_type::duration>(
                       std::chrono::duration<double>(seconds));
        std::size_t i = 0, bad = 0;
        auto cpu = cpu_seconds();
        auto start = clock_type::now();
        const std::string item = base + "/w-" + op;
        while (clock_type::now() < until) {
          auto t = clock_type::now();
          int status = 0, ok = 200;
          if (op == "get") {
            status = c->request("GET", base + "/s0");
          } else if (op == "list") {
            status = c->request("GET", base + "?limit=100");
          } else if (op == "create") {
            status = c->request("POST", base,
                                secret("lat-" + std::to_string(i), "1000"));
            ok = 201;
          } else if (op == "update") {
            status = c->request("PUT", item, secret("w-update", n_of(i)));
          } else if (op == "patch") {
            status = c->request("PATCH", item,
                                R"({"data":{"n":")" + n_of(i) + R"("}})",
                                "application/merge-patch+json");
          } else {
            status = c->request("PATCH", item + "?fieldManager=bench&force=true",
                                secret("w-apply", n_of(i)),
                                "application/apply-patch+yaml");
          }
          h.record(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(
              clock_type::now() - t)
              .count()));
          bad += status == ok ? 0 : 1;
          ++i;
        }
        reply << "ok " << op << ' ' << h.count() << ' '
              << h.value_at_percentile(50) << ' '
              << h.value_at_percentile(99) << ' ' << bad << ' '
              << (cpu_seconds() - cpu) / since(start);
      } else {
        return; // "quit" or EOF
      }
    } catch (const std::exception& e) {
      reply.str("");
      reply << "failed " << e.what();
    }
    write_line(out, reply.str());
  }
}

// -- the server process ---------------------------------------------------------

struct client_process {
  pid_t pid = -1;
  int to = -1;
  int from = -1;

  /// Sends `cmd`; the answer's words, or a failure for a broken child.
  std::vector<std::string> ask(const std::string& cmd) {
    write_line(to, cmd);
    std::istringstream in{read_line(from)};
    std::vector<std::string> words;
    for (std::string w; in >> w;)
      words.push_back(w);
    if (words.empty() || words[0] != "ok")
      throw std::runtime_error("the client failed at \"" + cmd + "\": "
                               + in.str());
    return words;
  }

  ~client_process() {
    if (pid <= 0)
      return;
    write_line(to, "quit");
    ::close(to);
    ::close(from);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
};

/// Forks the client (before any thread of the server exists).
void fork_client(client_process& p) {
  int down[2], up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0)
    throw std::runtime_error("pipe failed");
  p.pid = ::fork();
  if (p.pid < 0)
    throw std::runtime_error("fork failed");
  if (p.pid == 0) {
    ::close(down[1]);
    ::close(up[0]);
    client_main(down[0], up[1]);
    ::_exit(0);
  }
  ::close(down[0]);
  ::close(up[1]);
  p.to = down[1];
  p.from = up[0];
}

api_object object_of(resource res, const std::string& ns,
                     const std::string& json_text) {
  auto x = nlohmann::json::parse(json_text);
  x["apiVersion"] = "v1";
  x["kind"] = std::string{kind_name(res)};
  auto d = wire::decode_request_body(res, "application/json", x.dump(), ns,
                                     {});
  if (d.failure)
    throw std::runtime_error("bad seed object: " + d.failure->body);
  return wire::stamp_new(d.object, std::chrono::system_clock::now());
}

bool wait_for_watches(api_server& api, std::size_t n) {
  auto until = clock_type::now() + std::chrono::minutes(2);
  while (clock_type::now() < until) {
    auto open = api.open_watches();
    if (open && *open >= n)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string us(const std::string& ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f us", std::stod(ns) / 1000.0);
  return buf;
}

} // namespace

int run_apiserver_bench(const apiserver_bench_options& o, std::ostream& out,
                        std::ostream& err) {
  client_process client;
  try {
    fork_client(client);
    runtime rt;
    api_server api{rt};
    for (int i = 0; i < 100; ++i)
      api.apply(object_of(resource::secrets, "bench",
                          R"({"metadata":{"name":"s)" + std::to_string(i)
                            + R"("},"data":{"k":"dmFsdWUtdmFsdWUtdmFsdWU="}})"));
    api.apply(object_of(resource::config_maps, "fan",
                        R"({"metadata":{"name":"fan0"},"data":{"v":"0"}})"));
    wire::http_server_options http;
    auto conns = std::max<std::size_t>(o.connections, 1);
    http.max_streams = (o.watches + o.watchers) / conns + 256;
    http.max_watches = o.watches + o.watchers + 64;
    auto front = wire::http_server::start(rt.system(), api.current_actor(),
                                          http);
    if (!front)
      throw std::runtime_error(front.error().message);
    auto rv = [&] {
      auto x = api.apply(object_of(resource::config_maps, "fan",
                                   R"({"metadata":{"name":"fan1"}})"));
      return x ? x->resource_version() : 0;
    };
    // -- memory per open watch
    trim_heap();
    auto rss0 = rss_bytes();
    auto heap0 = heap_bytes();
    client.ask("connect " + std::to_string((*front)->port()) + " "
               + std::to_string(conns));
    auto opened = client.ask("watch " + std::to_string(o.watches) + " "
                             + std::to_string(rv()));
    if (!wait_for_watches(api, o.watches))
      throw std::runtime_error("the API server did not see every watch");
    trim_heap();
    auto rss1 = rss_bytes();
    auto heap1 = heap_bytes();
    auto per = [&](std::uint64_t a, std::uint64_t b) {
      return o.watches == 0 ? 0.0
                            : (static_cast<double>(b) - static_cast<double>(a))
                                / static_cast<double>(o.watches);
    };
    // -- fan-out
    client.ask("fanwatch " + std::to_string(o.watchers) + " "
               + std::to_string(rv()));
    if (!wait_for_watches(api, o.watches + o.watchers))
      throw std::runtime_error("the API server did not see every watcher");
    auto cpu0 = process_cpu_seconds();
    auto t0 = clock_type::now();
    for (std::size_t e = 0; e < o.events; ++e)
      api.apply(object_of(resource::config_maps, "fan",
                          R"({"metadata":{"name":"fan0"},"data":{"v":")"
                            + std::to_string(e) + R"("}})"));
    auto expected = static_cast<std::uint64_t>(o.events) * o.watchers;
    auto fanned = client.ask("expect " + std::to_string(expected));
    auto last = clock_type::time_point{
      std::chrono::nanoseconds{std::stoll(fanned[1])}};
    auto fan_s = std::chrono::duration<double>(last - t0).count();
    auto server_cpu = process_cpu_seconds() - cpu0;
    // -- latency, and the server's CPU per request, one operation at a time
    // lat: per op: name n p50 p99 bad client_cores server_cpu_us
    std::vector<std::string> lat;
    for (const char* op :
         {"get", "list", "create", "update", "patch", "apply"}) {
      auto cpu = process_cpu_seconds();
      auto words
        = client.ask("latency " + std::to_string(o.seconds) + " " + op);
      auto served = std::stod(words[2]);
      words.push_back(std::to_string(
        served > 0 ? (process_cpu_seconds() - cpu) * 1e6 / served : 0));
      lat.insert(lat.end(), words.begin() + 1, words.end());
    }
    (*front)->stop();
    nlohmann::ordered_json j;
    j["workload"] = "apiserver";
    j["watches"] = o.watches;
    j["connections"] = conns;
    j["open_s"] = std::stod(opened[1]);
    j["open_client_cpu_s"] = std::stod(opened[2]);
    j["rss_bytes_per_watch"] = per(rss0, rss1);
    j["heap_bytes_per_watch"] = per(heap0, heap1);
    j["watchers"] = o.watchers;
    j["fanout_events"] = expected;
    j["fanout_s"] = fan_s;
    j["fanout_events_per_s"] = fan_s > 0 ? static_cast<double>(expected) / fan_s : 0;
    j["fanout_server_cpu_s"] = server_cpu;
    // On a shared machine the wall time is the host's; the server's CPU
    // time per event is the server's.
    j["fanout_events_per_server_cpu_s"]
      = server_cpu > 0 ? static_cast<double>(expected) / server_cpu : 0;
    j["fanout_client_cpu_s"] = std::stod(fanned[2]);
    for (std::size_t i = 0; i + 7 <= lat.size(); i += 7) {
      auto& x = j["latency"][lat[i]];
      x["n"] = std::stoull(lat[i + 1]);
      x["p50_ns"] = std::stoull(lat[i + 2]);
      x["p99_ns"] = std::stoull(lat[i + 3]);
      x["failed"] = std::stoull(lat[i + 4]);
      x["client_cores"] = std::stod(lat[i + 5]);
      x["server_cpu_us_per_request"] = std::stod(lat[i + 6]);
    }
    if (o.json) {
      out << j.dump() << '\n';
      return 0;
    }
    char line[512];
    std::snprintf(line, sizeof line,
                  "apiserver: %zu watches over %zu h2c connections open in "
                  "%.2f s (client CPU %.2f s)\n"
                  "  server memory per open watch: %.0f B RSS, %.0f B heap\n"
                  "  fan-out: %zu writes x %zu watchers = %llu events in "
                  "%.3f s: %.0f events/s, %.0f per server CPU second "
                  "(client CPU %.2f s)\n",
                  o.watches, conns, std::stod(opened[1]),
                  std::stod(opened[2]), per(rss0, rss1), per(heap0, heap1),
                  o.events, o.watchers,
                  static_cast<unsigned long long>(expected), fan_s,
                  j["fanout_events_per_s"].get<double>(),
                  j["fanout_events_per_server_cpu_s"].get<double>(),
                  std::stod(fanned[2]));
    out << line;
    for (std::size_t i = 0; i + 7 <= lat.size(); i += 7) {
      char cpu[32];
      std::snprintf(cpu, sizeof cpu, "%.1f us", std::stod(lat[i + 6]));
      out << "  " << lat[i] << " (HTTP/2, one at a time): " << lat[i + 1]
          << " requests, p50 " << us(lat[i + 2]) << ", p99 " << us(lat[i + 3])
          << ", " << lat[i + 4] << " failed, server CPU " << cpu
          << " per request, client " << lat[i + 5] << " cores\n";
    }
    return 0;
  } catch (const std::exception& e) {
    err << "podref bench: apiserver: " << e.what() << '\n';
    if (client.pid > 0)
      ::kill(client.pid, SIGKILL); // it may be waiting for what failed
    return 1;
  }
}

} // namespace podref::bench
