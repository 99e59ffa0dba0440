// The benchmarks' API server child process (server_child.hpp). Protocol on
// two pipes, one text line each way: the child says "ready URL" once it
// serves; then "u I" updates Secret I and answers "BEFORE AFTER" (ns),
// "a R" updates every Secret R times and answers its CPU seconds for it,
// "c" answers the child's CPU seconds, "q" (or the pipe's end) stops it.
#include "bench/wire/server_child.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/process_stats.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/tls_material.hpp"

namespace podref::bench {

namespace {

constexpr const char* bench_token = "tok-wire-bench-0123456789";

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

api_object secret_of(std::size_t i, std::string value) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = "default";
  x->metadata.name = bench_secret_name(i);
  x->type = "Opaque";
  x->data["k"] = std::move(value);
  return api_object{secret_ptr{std::move(x)}};
}

/// One line from `fd` without its '\n'; false at the end.
bool read_line(int fd, std::string& line) {
  line.clear();
  char c;
  for (;;) {
    auto n = ::read(fd, &c, 1);
    if (n <= 0)
      return false;
    if (c == '\n')
      return true;
    line.push_back(c);
  }
}

void write_line(int fd, const std::string& line) {
  auto text = line + "\n";
  std::size_t at = 0;
  while (at < text.size()) {
    auto n = ::write(fd, text.data() + at, text.size() - at);
    if (n <= 0)
      return;
    at += static_cast<std::size_t>(n);
  }
}

/// The child: serves until told to stop; never returns.
[[noreturn]] void serve(const server_child_options& o, const std::string& dir,
                        int in, int out) {
  int rc = 0;
  {
    runtime rt;
    api_server api{rt};
    std::string value(o.bytes, 'x');
    for (std::size_t i = 0; i < o.objects; ++i)
      api.create(secret_of(i, value));
    wire::http_server_options sopts;
    // Not what is measured: room for a watch (HTTP/1.1: a connection) each.
    sopts.max_watches = o.objects + 64;
    sopts.max_connections = o.objects + 64;
    if (o.transport == "h2-tls") {
      auto files = wire::ensure_tls_dir(dir + "/tls", {"127.0.0.1"});
      auto tokens = wire::token_table::parse(
        std::string{bench_token} + ",bench,u-1\n", "tokens.csv");
      if (!files || !tokens)
        ::_exit(3);
      sopts.tls = wire::http_tls_options{files->cert, files->key, {}};
      sopts.tokens = std::make_shared<const wire::token_table>(*tokens);
    }
    auto front = wire::http_server::start(rt.system(), api.current_actor(),
                                          sopts);
    if (!front)
      ::_exit(4);
    write_line(out, "ready " + (*front)->url());
    std::string line;
    std::size_t version = 0;
    while (read_line(in, line) && line != "q") {
      if (line.rfind("u ", 0) == 0) {
        auto i = std::stoull(line.substr(2));
        auto before = now_ns();
        api.update(secret_of(i, std::to_string(++version)));
        auto after = now_ns();
        write_line(out, std::to_string(before) + " " + std::to_string(after));
      } else if (line.rfind("a ", 0) == 0) {
        auto rounds = std::stoull(line.substr(2));
        auto cpu0 = process_cpu_seconds();
        for (std::size_t r = 0; r < rounds; ++r)
          for (std::size_t i = 0; i < o.objects; ++i)
            api.update(secret_of(i, std::to_string(++version)));
        write_line(out, std::to_string(process_cpu_seconds() - cpu0));
      } else if (line == "c") {
        write_line(out, std::to_string(process_cpu_seconds()));
      }
    }
    (*front)->stop();
  }
  ::_exit(rc);
}

} // namespace

std::string bench_secret_name(std::size_t i) {
  return "s" + std::to_string(i);
}

server_child::server_child(const server_child_options& opts) {
  char tmpl[] = "/tmp/podref-wire-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr)
    throw std::runtime_error("cannot make a temporary directory");
  dir_ = tmpl;
  int down[2];
  int up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0)
    throw std::runtime_error("cannot make pipes");
  pid_ = ::fork();
  if (pid_ < 0)
    throw std::runtime_error("cannot fork the server");
  if (pid_ == 0) {
    ::close(down[1]);
    ::close(up[0]);
    serve(opts, dir_, down[0], up[1]);
  }
  ::close(down[0]);
  ::close(up[1]);
  to_child_ = down[1];
  from_child_ = up[0];
  std::string line;
  if (!read_line(from_child_, line) || line.rfind("ready ", 0) != 0)
    throw std::runtime_error("the server child did not start");
  config_.server = line.substr(6);
  config_.origin = "podref bench";
  if (opts.transport == "h2-tls") {
    auto ca = wire::read_small_file(dir_ + "/tls/ca.crt");
    if (!ca)
      throw std::runtime_error(ca.error().message);
    config_.ca_pem = *ca;
    config_.token = bench_token;
  }
}

server_child::~server_child() {
  write_line(to_child_, "q");
  ::close(to_child_);
  ::close(from_child_);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  std::string cmd = "rm -rf '" + dir_ + "'";
  [[maybe_unused]] auto rc = std::system(cmd.c_str());
}

std::string server_child::call(const std::string& line) {
  write_line(to_child_, line);
  std::string reply;
  if (!read_line(from_child_, reply))
    throw std::runtime_error("the server child went away");
  return reply;
}

write_times server_child::update(std::size_t i,
                                 const std::function<void()>& meanwhile) {
  write_line(to_child_, "u " + std::to_string(i));
  if (meanwhile)
    meanwhile();
  std::string reply;
  if (!read_line(from_child_, reply))
    throw std::runtime_error("the server child went away");
  auto sp = reply.find(' ');
  return {std::stoll(reply.substr(0, sp)), std::stoll(reply.substr(sp + 1))};
}

double server_child::update_all(std::size_t rounds) {
  return std::stod(call("a " + std::to_string(rounds)));
}

double server_child::cpu_seconds() {
  return std::stod(call("c"));
}

} // namespace podref::bench
