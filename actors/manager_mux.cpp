// Adaptive watch multiplexing, the manager's part: referenced objects counted
// per namespace, a namespace multiplexer spawned past the threshold and
// stopped below half of it, the reflectors handed over by source
// replacement (new_src), and the fallback when the namespace-wide calls are
// refused (docs/multiplexing.md).
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "podref/actors/detail/manager_ops.hpp"
#include "podref/actors/manager.hpp"
#include "podref/actors/namespace_mux.hpp"

namespace podref::detail {

namespace {

bool enabled(manager_self self) {
  auto& cfg = self->state.cfg;
  return cfg.mux_threshold > 0 && cfg.strategy == strategy::watch;
}

/// Whether object key "ns/name" is in namespace `ns`.
bool in_namespace(const std::string& key, std::string_view ns) {
  return key.size() > ns.size() && key[ns.size()] == '/'
         && key.compare(0, ns.size(), ns) == 0;
}

/// Tells the reflectors of `ns` their new source.
void hand_over(manager_self self, std::string_view ns,
               const object_source_actor& src) {
  for (auto& entry : self->state.objects)
    if (entry.reflector && in_namespace(entry.slot->key(), ns))
      self->send(entry.reflector, new_src_atom::value, src);
}

void switch_up(manager_self self, const std::string& ns,
               manager_state::namespace_entry& n) {
  auto& st = self->state;
  namespace_mux_config mc;
  mc.res = st.cfg.res;
  mc.ns = ns;
  mc.upstream = caf::actor_cast<namespace_source_actor>(st.cfg.source);
  mc.manager = caf::actor_cast<caf::actor_addr>(self);
  mc.counters = counters_of(st.cfg.read_side);
  for (auto& entry : st.objects)
    if (in_namespace(entry.slot->key(), ns))
      mc.names.push_back(entry.slot->name());
  n.mux = self->spawn(namespace_mux, std::move(mc));
  // Should it fail, its reflectors go back to the API server (mux_down).
  self->monitor(n.mux);
  hand_over(self, ns, caf::actor_cast<object_source_actor>(n.mux));
}

void switch_down(manager_self self, const std::string& ns,
                 manager_state::namespace_entry& n) {
  if (!n.mux)
    return;
  // Reflectors first: they cancel at the multiplexer and relist at the API
  // server from the last version they saw; whatever they still had in
  // flight at the multiplexer is stale to them once it is gone.
  hand_over(self, ns, self->state.cfg.source);
  self->demonitor(n.mux.address());
  caf::anon_send_exit(n.mux, caf::exit_reason::user_shutdown);
  n.mux = namespace_mux_actor{};
}

} // namespace

object_source_actor source_for(manager_self self, std::string_view ns) {
  auto& st = self->state;
  if (!st.namespaces.empty()) {
    auto i = st.namespaces.find(std::string{ns});
    if (i != st.namespaces.end() && i->second.mux)
      return caf::actor_cast<object_source_actor>(i->second.mux);
  }
  return st.cfg.source;
}

bool multiplexed(manager_self self, std::string_view ns) {
  auto& st = self->state;
  if (st.namespaces.empty())
    return false;
  auto i = st.namespaces.find(std::string{ns});
  return i != st.namespaces.end() && i->second.mux;
}

void mux_object_added(manager_self self,
                      const manager_state::object_entry& entry) {
  if (!enabled(self))
    return;
  auto ns = entry.slot->ns();
  auto& n = self->state.namespaces[ns];
  ++n.objects;
  if (n.mux)
    self->send(n.mux, mux_track_atom::value, entry.slot->name());
  else if (!n.refused && n.objects > self->state.cfg.mux_threshold)
    switch_up(self, ns, n);
}

void mux_object_removed(manager_self self, const std::string& ns,
                        const std::string& name) {
  if (!enabled(self))
    return;
  auto& st = self->state;
  auto i = st.namespaces.find(ns);
  if (i == st.namespaces.end())
    return;
  auto& n = i->second;
  --n.objects;
  if (n.mux) {
    self->send(n.mux, mux_untrack_atom::value, name);
    // Hysteresis: down only below half the threshold (and with the last).
    if (n.objects == 0 || n.objects * 2 < st.cfg.mux_threshold)
      switch_down(self, ns, n);
  }
  if (n.objects == 0 && !n.refused)
    st.namespaces.erase(i);
}

void mux_refused(manager_self self, const std::string& ns,
                 const caf::actor_addr& mux) {
  auto& st = self->state;
  auto i = st.namespaces.find(ns);
  if (i == st.namespaces.end() || !i->second.mux
      || i->second.mux.address() != mux)
    return;
  i->second.refused = true;
  switch_down(self, ns, i->second);
}

bool mux_down(manager_self self, const caf::actor_addr& who) {
  for (auto& [ns, n] : self->state.namespaces)
    if (n.mux && n.mux.address() == who) {
      // Per object at once: the reflectors relist at the API server from
      // the last version they saw (what they had in flight at the dead
      // multiplexer is abandoned). A later reference in the namespace
      // that finds it above the threshold multiplexes it again.
      n.mux = namespace_mux_actor{};
      hand_over(self, ns, self->state.cfg.source);
      return true;
    }
  return false;
}

caf::result<mux_stats> mux_stats_of(manager_self self,
                                    const std::string& ns) {
  auto& st = self->state;
  auto i = st.namespaces.find(ns);
  if (i == st.namespaces.end() || !i->second.mux)
    return make_caf_error(error_info{
      errc::not_found, "namespace \"" + ns + "\" is not multiplexed"});
  return self->delegate(i->second.mux, mux_stats_atom::value);
}

void mux_adopt_source(manager_self self) {
  for (auto& [ns, n] : self->state.namespaces)
    if (n.mux)
      self->send(n.mux, new_src_atom::value, self->state.cfg.source);
}

void mux_apply_environment(manager_config& cfg) {
  if (cfg.mux_threshold != 0)
    return;
  if (const char* text = std::getenv("PODREF_MUX_THRESHOLD")) {
    char* end = nullptr;
    auto k = std::strtoull(text, &end, 10);
    if (end != text && *end == '\0')
      cfg.mux_threshold = static_cast<std::size_t>(k);
  }
}

} // namespace podref::detail
