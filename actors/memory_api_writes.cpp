// The in-memory API server's writes: create, update, apply and delete, each
// a new cluster version with its stored copy, history entry and fan-out to
// the watches of that object (memory_api_server.hpp has the protocol).
#include "podref/actors/detail/memory_api_server_ops.hpp"
#include "podref/messages/object_validation.hpp"
#include "podref/messages/resource_kinds.hpp"

#include <memory>
#include <string>
#include <utility>

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref::detail {

namespace {

using state_type = memory_api_server_state;
using object_key = state_type::object_key;
using server_pointer = memory_api_server_pointer;

/// A copy of `obj` in namespace `ns` at resourceVersion `rv`.
api_object stamped(const api_object& obj, const std::string& ns,
                   std::uint64_t rv) {
  auto meta = obj.meta();
  meta.ns = ns;
  meta.resource_version = std::to_string(rv);
  return with_metadata(obj, std::move(meta));
}

/// Checks the input of a write.
caf::error check_input(const api_object& obj) {
  if (!obj)
    return podref_error(errc::invalid_argument,
                        "cannot store an empty object");
  if (obj.meta().name.empty())
    return podref_error(errc::invalid_argument,
                        std::string{plural_name(obj.kind())}
                          + " \"\" is invalid: metadata.name: Required value:"
                            " name is required");
  return {};
}

/// Sends `ev` to the watches of exactly `key`.
void fan_out_to(server_pointer self, const object_key& key,
                const watch_event& ev) {
  auto& st = self->state;
  auto i = st.watches_by_key.find(key);
  if (i == st.watches_by_key.end())
    return;
  for (auto id : i->second) {
    auto w = st.watches.find(id);
    if (w != st.watches.end() && !w->second.closing
        && ev.resource_version > w->second.after)
      send_event(self, id, w->second, ev);
  }
}

/// Sends `ev` to the watches of its object, of its namespace and of its
/// resource in all namespaces (see in_scope).
void fan_out(server_pointer self, const object_key& key,
             const watch_event& ev) {
  fan_out_to(self, key, ev);
  auto res = std::get<0>(key);
  // A cluster-scoped key has no namespace: its scope is the resource's.
  if (!std::get<1>(key).empty())
    fan_out_to(self, object_key{res, std::get<1>(key), std::string{}}, ev);
  fan_out_to(self, object_key{res, std::string{}, std::string{}}, ev);
}

/// Appends to the bounded history; what falls out moves the compaction
/// point.
void remember(state_type& st, const object_key& key, const watch_event& ev,
              api_object previous) {
  if (st.history_capacity == 0) {
    st.compacted = ev.resource_version;
    return;
  }
  if (st.history.size() >= st.history_capacity) {
    st.compacted = st.history.front().event.resource_version;
    st.history.pop_front();
  }
  st.history.push_back(
    state_type::history_entry{key, ev, std::move(previous)});
}

/// Applies one write: a new version, the stored copy, history and fan-out.
/// Returns the stored copy (for DELETED: the last state at the new version).
api_object commit(server_pointer self, const object_key& key, api_object obj,
                  watch_event_type type) {
  auto& st = self->state;
  auto rv = ++st.store->version;
  auto stored = stamped(obj, std::get<1>(key), rv);
  api_object previous;
  if (auto i = st.store->objects.find(key); i != st.store->objects.end())
    previous = i->second;
  if (type == watch_event_type::deleted)
    st.store->objects.erase(key);
  else
    st.store->objects[key] = stored;
  watch_event ev{type, stored, rv};
  remember(st, key, ev, std::move(previous));
  fan_out(self, key, ev);
  end_closing(self);
  return stored;
}

} // namespace

caf::result<api_object> create_object(server_pointer self,
                                      const api_object& obj) {
  if (auto err = check_input(obj))
    return err;
  auto key = key_of(obj.kind(), obj.meta().ns, obj.meta().name);
  if (self->state.store->objects.count(key) != 0)
    return podref_error(errc::already_exists,
                        std::string{qualified_name(obj.kind())} + " \""
                          + obj.meta().name + "\" already exists");
  return commit(self, key, obj, watch_event_type::added);
}

caf::result<api_object> update_object(server_pointer self,
                                      const api_object& obj) {
  if (auto err = check_input(obj))
    return err;
  auto key = key_of(obj.kind(), obj.meta().ns, obj.meta().name);
  if (self->state.store->objects.count(key) == 0)
    return make_caf_error(api_not_found_error(obj.kind(), obj.meta().name));
  return commit(self, key, obj, watch_event_type::modified);
}

caf::result<api_object> replace_object(server_pointer self,
                                       const api_object& obj) {
  if (auto err = check_input(obj))
    return err;
  auto key = key_of(obj.kind(), obj.meta().ns, obj.meta().name);
  auto i = self->state.store->objects.find(key);
  if (i == self->state.store->objects.end())
    return make_caf_error(api_not_found_error(obj.kind(), obj.meta().name));
  const auto& stored = i->second.meta();
  const auto& wanted = obj.meta().resource_version;
  if (!wanted.empty() && wanted != stored.resource_version)
    return make_caf_error(api_conflict_error(obj.kind(), obj.meta().name));
  // The API server's update rules (immutable objects, a Secret's type, a
  // Pod's spec), checked against what is stored now.
  if (auto problems = find_update_problems(i->second, obj); !problems.empty())
    return make_caf_error(
      error_info{errc::invalid,
                 invalid_object_message(kind_of(obj.kind()).qualified_kind,
                                        obj.meta().name, problems),
                 std::move(problems)});
  auto meta = obj.meta();
  meta.uid = stored.uid;
  meta.creation_timestamp = stored.creation_timestamp;
  auto copy = with_metadata(obj, std::move(meta));
  // metadata.deletionTimestamp is the server's, as uid and creation time.
  if (auto old = i->second.as_opaque(); old && !old->deletion_timestamp.empty()) {
    auto x = *copy.as_opaque();
    if (x.deletion_timestamp.empty()) {
      x.deletion_timestamp = old->deletion_timestamp;
      x.deletion_grace_period_seconds = old->deletion_grace_period_seconds;
    }
    copy = api_object{obj.kind(), std::make_shared<opaque_object>(std::move(x))};
  }
  return commit(self, key, std::move(copy), watch_event_type::modified);
}

caf::result<api_object> apply_object(server_pointer self,
                                     const api_object& obj) {
  if (auto err = check_input(obj))
    return err;
  auto key = key_of(obj.kind(), obj.meta().ns, obj.meta().name);
  auto type = self->state.store->objects.count(key) != 0
                ? watch_event_type::modified
                : watch_event_type::added;
  return commit(self, key, obj, type);
}

caf::result<caf::ok_atom> delete_object(server_pointer self, resource res,
                                        const std::string& ns,
                                        const std::string& name) {
  auto key = key_of(res, ns, name);
  auto i = self->state.store->objects.find(key);
  if (i == self->state.store->objects.end())
    return make_caf_error(api_not_found_error(res, name));
  commit(self, key, i->second, watch_event_type::deleted);
  return caf::ok_atom::value;
}

} // namespace podref::detail
