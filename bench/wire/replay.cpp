// `podref bench -w wire-replay`: the client's CPU per watch event applied,
// with no server. Every object's watch stream is recorded first, as the
// HTTP front writes it (wire/codec.hpp's encoder: one MODIFIED line per
// update, `bytes` of value each); a replay source (the reflectors' source
// protocol, as the wire source speaks it) answers the lists and takes the
// watches; then the recorded bytes are cut into lines (line_splitter),
// decoded (decode_watch_line) and handed to the watchers, as the wire
// client's I/O thread does, and the clock runs until every object reads
// as its last version. Also measured alone: the decode of the same bytes.
#include "bench/wire/workloads.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "bench/process_stats.hpp"
#include "bench/wire/server_child.hpp"
#include "podref/messages/actor_types.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/wire_decode.hpp"

namespace podref::bench {

namespace {

using clock_type = std::chrono::steady_clock;

api_object version_of(std::size_t i, std::uint64_t rv,
                      const std::string& value) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = "default";
  x->metadata.name = bench_secret_name(i);
  x->metadata.uid = "uid-" + std::to_string(i);
  x->metadata.resource_version = std::to_string(rv);
  x->type = "Opaque";
  x->data["k"] = value;
  return api_object{secret_ptr{std::move(x)}};
}

/// The watches the replay source was given, by object index.
struct watch_book {
  std::mutex mtx;
  std::vector<std::pair<watch_id, watcher_actor>> by_object;
  std::size_t opened = 0;
};

struct replay_state {
  static constexpr const char* name = "podref.bench.replay_source";
  std::shared_ptr<watch_book> book;
  std::vector<api_object> initial;
  watch_id next = 1;
};

caf::behavior replay_source(caf::stateful_actor<replay_state>* self,
                            std::shared_ptr<watch_book> book,
                            std::vector<api_object> initial) {
  self->state.book = std::move(book);
  self->state.initial = std::move(initial);
  auto index = [](const std::string& name) {
    return static_cast<std::size_t>(std::stoull(name.substr(1)));
  };
  return {
    [self, index](list_atom, resource, std::string&, std::string& name,
                  std::string&) {
      return list_result{{self->state.initial[index(name)]}, "1"};
    },
    [self, index](watch_atom, resource, std::string&, std::string& name,
                  std::string&, watcher_actor& w) {
      auto id = self->state.next++;
      auto& b = *self->state.book;
      std::lock_guard<std::mutex> guard{b.mtx};
      b.by_object[index(name)] = {id, std::move(w)};
      ++b.opened;
      return id;
    },
    [self, index](caf::get_atom, resource, std::string&, std::string& name,
                  std::string&) {
      return self->state.initial[index(name)];
    },
    [](cancel_atom, watch_id) {
      // nop
    },
  };
}

/// Feeds `stream` to `deliver` line by line, decoded; events delivered.
template <class Deliver>
std::size_t replay(const std::string& stream, Deliver&& deliver) {
  wire::line_splitter split{4u << 20};
  std::size_t n = 0;
  // As the socket gives it: 16 KiB reads.
  for (std::size_t at = 0; at < stream.size(); at += 16384) {
    split.feed(std::string_view{stream}.substr(at, 16384),
               [&](std::string_view line) {
                 auto ev = wire::decode_watch_line(resource::secrets, line);
                 if (!ev)
                   return false;
                 auto line_ev = std::move(ev).value();
                 deliver(std::move(line_ev.event));
                 ++n;
                 return true;
               });
  }
  return n;
}

} // namespace

bench_result run_wire_replay(const wire_bench_options& o) {
  const auto n = o.objects;
  const auto e = o.events;
  std::string value(o.bytes, 'x');
  std::vector<api_object> initial;
  std::vector<std::string> streams(n);
  for (std::size_t i = 0; i < n; ++i) {
    initial.push_back(version_of(i, 1, value));
    for (std::size_t k = 1; k <= e; ++k)
      streams[i] += wire::encode_watch_line(
        "MODIFIED", wire::encode_object(version_of(i, 1 + k, value)));
  }
  bench_result r;
  r.workload = "wire-replay";
  r.impl = "podref";
  r.strategy = "watch";
  r.threads = 1;
  r.ops = n * e;
  // The decoder alone, on the calling thread.
  {
    auto cpu0 = process_cpu_seconds();
    std::size_t decoded = 0;
    for (const auto& s : streams)
      decoded += replay(s, [](watch_event&&) {});
    auto cpu = process_cpu_seconds() - cpu0;
    r.extra["decode_us_per_event"] = cpu * 1e6 / static_cast<double>(decoded);
  }
  runtime rt;
  auto book = std::make_shared<watch_book>();
  book->by_object.resize(n);
  auto src = rt.system().spawn(replay_source, book, initial);
  {
    manager_options mo;
    mo.sync_timeout = std::chrono::seconds(120);
    secret_manager mgr{rt, src, strategy::watch, mo};
    for (std::size_t i = 0; i < n; ++i)
      mgr.register_pod(bench_pod(i));
    for (std::size_t i = 0; i < n; ++i)
      mgr.get_secret("default", bench_secret_name(i));
    for (;;) {
      {
        std::lock_guard<std::mutex> guard{book->mtx};
        if (book->opened == n)
          break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    auto final_rv = std::to_string(1 + e);
    auto cpu0 = process_cpu_seconds();
    auto t0 = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
      auto [id, w] = book->by_object[i];
      replay(streams[i], [&, id = id, w = w](watch_event&& ev) {
        caf::anon_send(w, w_event_atom::value, id, std::move(ev));
      });
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (;;) {
        auto s = mgr.get_secret("default", bench_secret_name(i));
        if (s && (*s)->metadata.resource_version == final_rv)
          break;
        // Not a spin: the waiting thread's CPU counts too.
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    auto cpu = process_cpu_seconds() - cpu0;
    r.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    r.ops_per_sec = static_cast<double>(r.ops) / r.seconds;
    r.extra["cpu_us_per_event"] = cpu * 1e6 / static_cast<double>(r.ops);
    r.extra["cores"] = cpu / r.seconds;
    r.extra["objects"] = static_cast<double>(n);
    r.peak_rss_bytes = peak_rss_bytes();
  }
  caf::anon_send_exit(src, caf::exit_reason::user_shutdown);
  return r;
}

} // namespace podref::bench
