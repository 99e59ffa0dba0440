// libFuzzer target: the manager actor's reference counting against a model.
//
// The input is a sequence of operations over a small universe (3 namespaces,
// 8 Secret names, 6 pods with 2 uids each): register a pod with a set of
// names (again = update: the new set replaces the old one), unregister
// (unknown pods are a no-op), read, and idle recycling after virtual time
// passes. After every operation the scheduler runs until idle and every
// object's reference counts (refs), the live reflectors and the open
// watches are compared with the model; a read must answer "not registered"
// exactly when no registered pod references the object. Each input ends by
// unregistering everything and checking that nothing is left. Any mismatch
// aborts, which libFuzzer reports as a crash.
//
// One actor system serves the whole process, on CAF's deterministic
// scheduler (no threads; messages run only when run() is called).
#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>
#include <caf/response_handle.hpp>
#include <caf/sec.hpp>

#include "podref/actors/manager.hpp"
#include "podref/actors/memory_api_server.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/read_side/read_side.hpp"
#include "support/deterministic_fixture.hpp"

namespace {

using namespace podref;

constexpr std::size_t namespace_count = 3;
constexpr std::size_t object_count = 8;
constexpr std::size_t pod_count = 6;
constexpr std::size_t uid_count = 2;
constexpr std::size_t slot_count = namespace_count * pod_count * uid_count;
/// Objects 0 to 3 exist in the API server, 4 exists and is immutable, the
/// rest do not exist (reads of them answer "not found").
constexpr std::size_t existing_objects = 5;
constexpr std::size_t immutable_object = 4;
/// Longer inputs are cut: every operation checks all objects.
constexpr std::size_t max_operations = 96;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "registry fuzz: model mismatch: %s\n", what.c_str());
  std::abort();
}

std::string ns_name(std::size_t i) {
  return "ns" + std::to_string(i);
}

std::string object_name(std::size_t i) {
  return "s" + std::to_string(i);
}

/// A registration slot: one (namespace, pod, uid) triple.
struct slot_id {
  std::size_t ns;
  std::size_t pod;
  std::size_t uid;

  static slot_id from_byte(std::uint8_t x) {
    std::size_t i = x % slot_count;
    return {i % namespace_count, (i / namespace_count) % pod_count,
            i / (namespace_count * pod_count)};
  }

  std::size_t index() const {
    return ns + namespace_count * (pod + pod_count * uid);
  }

  std::string pod_name() const {
    return "p" + std::to_string(pod);
  }

  std::string uid_text() const {
    return "p" + std::to_string(pod) + "-uid" + std::to_string(uid);
  }
};

/// The sorted names selected by the bits of `mask`.
std::vector<std::string> names_of(std::bitset<object_count> mask) {
  std::vector<std::string> result;
  for (std::size_t i = 0; i < object_count; ++i)
    if (mask.test(i))
      result.push_back(object_name(i));
  return result;
}

/// The expected state: which slots are registered, with which names.
struct model {
  std::array<bool, slot_count> registered{};
  std::array<std::bitset<object_count>, slot_count> names{};

  /// The expected refs of object `obj` in namespace `ns`: uid -> count.
  ref_map refs(std::size_t ns, std::size_t obj) const {
    ref_map result;
    for (std::size_t i = 0; i < slot_count; ++i) {
      auto s = slot_id::from_byte(static_cast<std::uint8_t>(i));
      if (s.ns == ns && registered[s.index()] && names[s.index()].test(obj))
        ++result[s.uid_text()];
    }
    return result;
  }
};

/// The process-wide actor system, API server and manager.
///
/// Created once and leaked on purpose: libFuzzer ends the process with
/// exit(), and ~actor_system would wait for the manager and the server,
/// which never stop on their own. A leaked object that a static pointer
/// still reaches is not reported by LeakSanitizer.
struct engine : podref::test::deterministic_fixture {
  detail::read_side_ptr rs = std::make_shared<detail::read_side>();
  memory_api_server_actor server;
  manager_actor mgr;

  engine() {
    server = spawn_memory_api_server(sys);
    run();
    for (std::size_t ns = 0; ns < namespace_count; ++ns)
      for (std::size_t obj = 0; obj < existing_objects; ++obj)
        store_secret(ns, obj);
    manager_config cfg;
    cfg.res = resource::secrets;
    cfg.source = caf::actor_cast<object_source_actor>(server);
    cfg.read_side = rs;
    cfg.recycle_period = caf::timespan{0};
    mgr = sys.spawn(manager, std::move(cfg));
    run();
  }

  void store_secret(std::size_t ns, std::size_t obj) {
    auto x = std::make_shared<secret>();
    x->metadata.ns = ns_name(ns);
    x->metadata.name = object_name(obj);
    x->type = "Opaque";
    x->data["key"] = "value-" + std::to_string(obj);
    if (obj == immutable_object)
      x->immutable = true;
    auto stored = ask_now<api_object>(server, create_atom::value,
                                      api_object{secret_ptr{std::move(x)}});
    if (!stored)
      fail("cannot store " + ns_name(ns) + "/" + object_name(obj));
  }

  void send_registration(bool reg, slot_id s, std::bitset<object_count> m) {
    auto r = make_registration(ns_name(s.ns), s.pod_name(), s.uid_text(),
                               names_of(m));
    if (reg)
      self->send(mgr, reg_pod_atom::value, std::move(r));
    else
      self->send(mgr, unreg_pod_atom::value, std::move(r));
    run();
  }

  /// Sends a request from `self`; take() collects the reply after a run().
  template <class Handle, class... Ts>
  caf::message_id ask(const Handle& dest, Ts&&... xs) {
    return self->request(dest, caf::infinite, std::forward<Ts>(xs)...).id();
  }

  /// The reply to request `id`: replies arrive in the order of the requests,
  /// so after a run() the next one is at the head of the mailbox.
  template <class T>
  caf::expected<T> take(caf::message_id id) {
    if (self->mailbox().empty())
      fail("no reply to a request");
    caf::expected<T> result{caf::make_error(caf::sec::unexpected_response)};
    caf::response_handle<caf::blocking_actor, caf::message, true> handle{
      id, self.ptr()};
    handle.receive([&](T& x) { result = std::move(x); },
                   [&](caf::error& err) { result = std::move(err); });
    return result;
  }

  /// Sends one request, runs until idle and returns the reply.
  template <class T, class Handle, class... Ts>
  caf::expected<T> ask_now(const Handle& dest, Ts&&... xs) {
    auto id = ask(dest, std::forward<Ts>(xs)...);
    run();
    return take<T>(id);
  }

  /// The refs of every object and the server's open watches, in one batch.
  std::pair<std::vector<ref_map>, std::size_t> snapshot() {
    std::vector<caf::message_id> ids;
    for (std::size_t ns = 0; ns < namespace_count; ++ns)
      for (std::size_t obj = 0; obj < object_count; ++obj)
        ids.push_back(ask(mgr, refs_atom::value, ns_name(ns),
                          object_name(obj)));
    auto watches_id = ask(server, watches_atom::value);
    run();
    std::vector<ref_map> refs;
    for (auto id : ids) {
      auto x = take<ref_map>(id);
      if (!x)
        fail("refs: " + caf::to_string(x.error()));
      refs.push_back(std::move(*x));
    }
    auto watches = take<std::size_t>(watches_id);
    if (!watches)
      fail("watches: " + caf::to_string(watches.error()));
    return {std::move(refs), *watches};
  }
};

engine& the_engine() {
  static auto* instance = new engine; // leaked on purpose, see engine
  return *instance;
}

std::string describe(const ref_map& x) {
  std::string result = "{";
  for (const auto& [uid, n] : x)
    result += " " + uid + ":" + std::to_string(n);
  return result + " }";
}

/// Compares every object's refs and the live reflectors with the model;
/// returns how many objects are referenced.
std::size_t check_counts(engine& e, const model& m) {
  auto [refs, watches] = e.snapshot();
  std::size_t referenced = 0;
  for (std::size_t ns = 0; ns < namespace_count; ++ns)
    for (std::size_t obj = 0; obj < object_count; ++obj) {
      const auto& got = refs[ns * object_count + obj];
      auto want = m.refs(ns, obj);
      if (got != want)
        fail("refs of " + ns_name(ns) + "/" + object_name(obj) + ": got "
             + describe(got) + ", want " + describe(want));
      if (!want.empty())
        ++referenced;
    }
  auto live = e.rs->counters.live_reflectors.load();
  if (live != static_cast<std::int64_t>(referenced))
    fail("live reflectors: " + std::to_string(live) + ", referenced objects: "
         + std::to_string(referenced));
  if (watches > referenced)
    fail("open watches: " + std::to_string(watches)
         + ", referenced objects: " + std::to_string(referenced));
  return referenced;
}

/// Reads object `obj` of namespace `ns` through the manager.
void check_read(engine& e, const model& m, std::size_t ns, std::size_t obj) {
  auto x = e.ask_now<api_object>(e.mgr, get_obj_atom::value, ns_name(ns),
                                 object_name(obj));
  auto where = ns_name(ns) + "/" + object_name(obj);
  bool referenced = !m.refs(ns, obj).empty();
  if (x) {
    if (!referenced)
      fail("read of unreferenced " + where + " returned an object");
    if (obj >= existing_objects)
      fail("read of absent " + where + " returned an object");
    if (!*x || x->meta().ns != ns_name(ns)
        || x->meta().name != object_name(obj))
      fail("read of " + where + " returned another object");
    return;
  }
  auto info = from_caf_error(x.error(),
                             error_info{errc::unavailable,
                                        caf::to_string(x.error())});
  if (referenced && obj < existing_objects)
    fail("read of " + where + ": " + info.message + ", want the object");
  auto want = referenced ? errc::not_found : errc::not_registered;
  if (info.code != want)
    fail("read of " + where + ": " + to_string(info.code) + " ("
         + info.message + "), want " + to_string(want));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  auto& e = the_engine();
  model m;
  std::size_t pos = 0;
  auto next = [&]() -> std::uint8_t { return pos < size ? data[pos++] : 0; };
  for (std::size_t n = 0; n < max_operations && pos < size; ++n) {
    auto op = next() % 8;
    switch (op) {
      case 0:
      case 1:
      case 2: { // register, or re-register with a new set
        auto s = slot_id::from_byte(next());
        std::bitset<object_count> names{next()};
        e.send_registration(true, s, names);
        m.registered[s.index()] = true;
        m.names[s.index()] = names;
        break;
      }
      case 3: { // register without references
        auto s = slot_id::from_byte(next());
        e.send_registration(true, s, {});
        m.registered[s.index()] = true;
        m.names[s.index()].reset();
        break;
      }
      case 4:
      case 5: { // unregister; only the identity counts, not the names sent
        auto s = slot_id::from_byte(next());
        std::bitset<object_count> names{next()};
        e.send_registration(false, s, names);
        m.registered[s.index()] = false;
        m.names[s.index()].reset();
        break;
      }
      case 6: { // read
        auto x = next();
        check_read(e, m, x % namespace_count,
                   (x / namespace_count) % object_count);
        break;
      }
      default: { // virtual time passes, then idle watches are recycled
        auto minutes = next() % 8;
        e.sched.advance_time(std::chrono::minutes(minutes));
        e.self->send(e.mgr, recycle_atom::value);
        e.run();
        break;
      }
    }
    check_counts(e, m);
  }
  // Back to the empty state for the next input.
  for (std::size_t i = 0; i < slot_count; ++i) {
    auto s = slot_id::from_byte(static_cast<std::uint8_t>(i));
    if (m.registered[s.index()]) {
      e.send_registration(false, s, {});
      m.registered[s.index()] = false;
    }
  }
  if (check_counts(e, m) != 0)
    fail("objects still referenced after unregistering every pod");
  if (auto n = e.snapshot().second; n != 0)
    fail("open watches after unregistering every pod: " + std::to_string(n));
  if (auto n = e.rs->counters.open_watches.load(); n != 0)
    fail("open_watches counter after unregistering every pod: "
         + std::to_string(n));
  e.self->send(e.server, clear_atom::value);
  e.run();
  return 0;
}
