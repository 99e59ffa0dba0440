#include "podref/testing/invariant_checker.hpp"

#include <memory>
#include <sstream>
#include <thread>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_registry.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/sec.hpp>

#include "podref/read_side/snapshot_index.hpp"
#include "podref/runtime/object_manager.hpp"
#include "podref/testing/pending_reply.hpp"

namespace podref::testing {

namespace {

/// "{u1: 1, u2: 2}".
std::string render(const ref_map& refs) {
  std::string result = "{";
  for (const auto& [uid, n] : refs) {
    if (result.size() > 1)
      result += ", ";
    result += uid + ": " + std::to_string(n);
  }
  return result + "}";
}

/// How a read or a peek ended, in words.
std::string render(const caf::expected<api_object>& x) {
  if (!x)
    return "error \""
           + from_caf_error(x.error(),
                            error_info{errc::unavailable,
                                       caf::to_string(x.error())})
               .message
           + "\"";
  if (!*x)
    return "an empty object";
  return "resourceVersion " + x->meta().resource_version;
}

errc code_of(const caf::error& err) {
  return from_caf_error(err, error_info{errc::unavailable, "other"}).code;
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

/// Each pod adds one reference per object (its keys are distinct).
std::map<std::string, ref_map>
recompute(const std::vector<pod_registration_ptr>& pods) {
  std::map<std::string, ref_map> result;
  for (const auto& p : pods)
    for (std::size_t i = 0; i < p->object_count(); ++i)
      ++result[std::string{p->object_key(i).text}][std::string{p->uid()}];
  return result;
}

} // namespace

// -- counters -------------------------------------------------------------------

std::function<engine_counts()>
counts_of(std::shared_ptr<const detail::engine_counters> counters) {
  return [counters] {
    engine_counts x;
    x.registered_pods = counters->registered_pods.load();
    x.referenced_objects = counters->referenced_objects.load();
    x.live_reflectors = counters->live_reflectors.load();
    x.open_watches = counters->open_watches.load();
    x.reflectors_started = counters->reflectors_started.load();
    x.reflectors_stopped = counters->reflectors_stopped.load();
    x.busy = counters->busy.load();
    return x;
  };
}

std::function<engine_counts()> counts_of(const object_manager& mgr) {
  return [&mgr] {
    auto st = mgr.stats();
    engine_counts x;
    x.registered_pods = st.registered_pods;
    x.referenced_objects = st.referenced_objects;
    x.live_reflectors = st.live_reflectors;
    x.open_watches = st.open_watches;
    x.reflectors_started = st.reflectors_started;
    x.reflectors_stopped = st.reflectors_stopped;
    return x;
  };
}

// -- construction ---------------------------------------------------------------

invariant_checker::invariant_checker(caf::actor_system& sys,
                                     caf::actor manager, caf::actor server,
                                     std::function<engine_counts()> counts,
                                     invariant_options opts)
  : sys_(sys),
    manager_(std::move(manager)),
    server_(std::move(server)),
    counts_(std::move(counts)),
    opts_(opts) {
  // nop
}

void invariant_checker::set_read_side(detail::read_side_ptr rs) {
  read_side_ = std::move(rs);
}

void invariant_checker::set_server(caf::actor server) {
  server_ = std::move(server);
}

void invariant_checker::record_baseline() {
  if (deterministic())
    dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler()).run();
  baseline_ = sys_.registry().running();
}

// -- checks ---------------------------------------------------------------------

std::vector<std::string>
invariant_checker::check(const std::vector<pod_registration_ptr>& pods) {
  auto expected = opts_.keeps_references ? recompute(pods) : expected_refs{};
  auto pod_count = opts_.keeps_references
                     ? static_cast<std::int64_t>(pods.size())
                     : 0;
  for (const auto& kvp : expected)
    known_.insert(kvp.first);
  return settle([&] {
    std::vector<std::string> out;
    check_refs(expected, out);
    if (opts_.check_reads)
      check_reads(expected, out);
    check_counts(pod_count, static_cast<std::int64_t>(expected.size()), out);
    return out;
  });
}

std::vector<std::string> invariant_checker::check(
  const std::map<std::string, pod_registration_ptr>& pods) {
  std::vector<pod_registration_ptr> xs;
  for (const auto& kvp : pods)
    xs.push_back(kvp.second);
  return check(xs);
}

std::vector<std::string> invariant_checker::check_node_pods(
  const std::function<std::vector<pod_identity>()>& registered,
  const std::function<std::vector<pod_identity>()>& bound) {
  return settle([&] {
    std::vector<std::string> out;
    auto mine = registered();
    auto theirs = bound();
    std::map<std::string, int> by_uid;
    std::map<std::string, int> by_name;
    for (const auto& p : mine) {
      if (++by_uid[p.uid] == 2)
        out.push_back("pod uid " + p.uid + " is registered twice");
      if (++by_name[p.ns + "/" + p.name] == 2)
        out.push_back("pod " + p.ns + "/" + p.name
                      + " is registered twice (two uids)");
    }
    std::set<std::string> live;
    for (const auto& p : theirs) {
      live.insert(p.uid);
      if (by_uid.count(p.uid) == 0)
        out.push_back("pod " + p.ns + "/" + p.name + " (uid " + p.uid
                      + ") is bound to the node but not registered");
    }
    for (const auto& p : mine)
      if (live.count(p.uid) == 0)
        out.push_back("pod " + p.ns + "/" + p.name + " (uid " + p.uid
                      + ") is registered but not bound to the node");
    return out;
  });
}

std::vector<std::string> invariant_checker::drained() {
  return settle([&] {
    std::vector<std::string> out;
    check_refs({}, out);
    for (const auto& key : known_) {
      auto [ns, name] = split_key(key);
      auto x = ask<api_object>(manager_, get_obj_atom::value, ns, name);
      if (x || code_of(x.error()) != errc::not_registered)
        out.push_back("\"" + key + "\" reads as " + render(x)
                      + " after its last pod went, not as not registered");
    }
    check_counts(0, 0, out);
    if (baseline_) {
      if (deterministic())
        dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler())
          .run();
      auto running = sys_.registry().running();
      if (running != *baseline_)
        out.push_back(std::to_string(running) + " actors run, "
                      + std::to_string(*baseline_)
                      + " at the baseline: actors leaked");
    }
    return out;
  });
}

void invariant_checker::check_refs(const expected_refs& expected,
                                   std::vector<std::string>& out) {
  std::set<std::string> keys = known_;
  for (const auto& kvp : expected)
    keys.insert(kvp.first);
  for (const auto& key : keys) {
    auto [ns, name] = split_key(key);
    auto refs = ask<ref_map>(manager_, refs_atom::value, ns, name);
    auto i = expected.find(key);
    auto want = i == expected.end() ? ref_map{} : i->second;
    if (!refs)
      out.push_back("refs of \"" + key + "\": no answer from the manager ("
                    + caf::to_string(refs.error()) + ")");
    else if (*refs != want)
      out.push_back("refs of \"" + key + "\": manager " + render(*refs)
                    + ", recomputed from the pods " + render(want));
  }
}

void invariant_checker::check_reads(const expected_refs& expected,
                                    std::vector<std::string>& out) {
  for (const auto& kvp : expected) {
    const auto& key = kvp.first;
    auto [ns, name] = split_key(key);
    auto truth = ask<api_object>(server_, peek_atom::value, opts_.res, ns,
                                 name);
    if (!truth && code_of(truth.error()) != errc::not_found) {
      out.push_back("\"" + key + "\": the API server did not answer ("
                    + render(truth) + ")");
      continue;
    }
    auto read = ask<api_object>(manager_, get_obj_atom::value, ns, name);
    if (truth) {
      if (!read || !(*read == *truth))
        out.push_back("\"" + key + "\" reads as " + render(read)
                      + ", the API server has " + render(truth));
    } else if (read || code_of(read.error()) != errc::not_found) {
      out.push_back("\"" + key + "\" reads as " + render(read)
                    + ", the API server has no such object");
    }
    if (!read_side_)
      continue;
    // What lock-free readers see: the snapshot the reflector published.
    auto pin = read_side_->domain.pin();
    auto* slot = read_side_->index.find(key, detail::hash_key(key));
    if (slot == nullptr) {
      out.push_back("\"" + key + "\" has no slot in the read side");
      continue;
    }
    const auto* snap = slot->load();
    auto want = truth ? *truth : api_object{};
    if (!snap->synced)
      out.push_back("\"" + key + "\": its snapshot is not synced");
    else if (!(snap->object == want))
      out.push_back("\"" + key + "\": its snapshot holds "
                    + render(caf::expected<api_object>{snap->object})
                    + ", the API server has " + render(truth));
  }
}

void invariant_checker::check_counts(std::int64_t pods, std::int64_t objects,
                                     std::vector<std::string>& out) {
  if (!counts_)
    return;
  auto c = counts_();
  auto text = [](auto x) { return std::to_string(x); };
  if (c.registered_pods != pods)
    out.push_back("the manager counts " + text(c.registered_pods)
                  + " registered pods, expected " + text(pods));
  if (c.referenced_objects != objects)
    out.push_back("the manager counts " + text(c.referenced_objects)
                  + " referenced objects, the pods reference "
                  + text(objects));
  auto reflectors = opts_.expect_reflectors ? objects : 0;
  if (c.live_reflectors != reflectors)
    out.push_back(text(c.live_reflectors) + " reflectors live, expected "
                  + text(reflectors));
  auto alive = static_cast<std::int64_t>(c.reflectors_started
                                         - c.reflectors_stopped);
  if (alive != c.live_reflectors)
    out.push_back("reflectors started - stopped = " + text(alive)
                  + ", but " + text(c.live_reflectors) + " live");
  if (c.busy && *c.busy != 0)
    out.push_back(text(*c.busy) + " reflectors or fetches still busy");
  if (c.open_watches > reflectors)
    out.push_back(text(c.open_watches) + " open watches for "
                  + text(reflectors) + " reflectors");
  if (opts_.exclusive_server) {
    auto n = ask<std::size_t>(server_, watches_atom::value);
    if (!n)
      out.push_back("the API server did not report its watches");
    else if (static_cast<std::int64_t>(*n) != c.open_watches)
      out.push_back("the API server holds " + text(*n)
                    + " watches, the engine counts " + text(c.open_watches));
  }
}

// -- waiting --------------------------------------------------------------------

std::vector<std::string> invariant_checker::settle(
  const std::function<std::vector<std::string>()>& attempt) {
  std::chrono::nanoseconds waited{0};
  auto real_deadline = std::chrono::steady_clock::now() + opts_.settle_limit;
  for (;;) {
    auto out = attempt();
    if (out.empty())
      return out;
    auto over = deterministic()
                  ? waited >= opts_.settle_limit
                  : std::chrono::steady_clock::now() >= real_deadline;
    if (over)
      return out;
    pass(opts_.step);
    waited += opts_.step;
  }
}

bool invariant_checker::deterministic() const {
  return dynamic_cast<caf::scheduler::test_coordinator*>(&sys_.scheduler())
         != nullptr;
}

void invariant_checker::pass(std::chrono::nanoseconds d) {
  if (deterministic()) {
    auto& sched
      = dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler());
    sched.advance_time(d);
    sched.run();
  } else {
    // Waiting for other threads' progress, bounded by the caller.
    std::this_thread::sleep_for(d);
  }
}

template <class T, class... Ts>
caf::expected<T> invariant_checker::ask(const caf::actor& dest, Ts&&... xs) {
  // A read may wait for a first sync (the sync timeout): allow that much.
  constexpr auto limit = std::chrono::seconds(5);
  pending_reply<T> reply{sys_, dest, std::forward<Ts>(xs)...};
  if (deterministic()) {
    auto& sched
      = dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler());
    sched.run();
    for (std::chrono::nanoseconds t{0}; !reply.ready() && t < limit;
         t += opts_.step) {
      sched.advance_time(opts_.step);
      sched.run();
    }
  } else {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!reply.ready() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return reply.take();
}

std::string describe(const std::vector<std::string>& mismatches) {
  std::ostringstream out;
  for (const auto& x : mismatches)
    out << "- " << x << '\n';
  return out.str();
}

} // namespace podref::testing
