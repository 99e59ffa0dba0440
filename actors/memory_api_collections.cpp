// The in-memory API server's collection reads: a list and a watch over every
// object of a namespace or of all namespaces, as the API's collection paths
// (/api/v1/namespaces/NS/secrets, /api/v1/secrets) serve them.
#include "podref/actors/detail/memory_api_server_ops.hpp"

#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <system_error>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref::detail {

namespace {

/// The scope key of a collection: no name, and no namespace for all.
memory_api_server_state::object_key scope_of(resource res,
                                             const std::string& ns) {
  return {res, ns, std::string{}};
}

/// A decimal resourceVersion; "" is 0.
std::optional<std::uint64_t> version_of(const std::string& text) {
  std::uint64_t result = 0;
  if (text.empty())
    return result;
  auto last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, result);
  if (ec != std::errc{} || ptr != last)
    return std::nullopt;
  return result;
}

/// forbid_ns's refusal, in the words of a node authorizer's 403.
caf::error forbidden(memory_api_server_pointer self, const char* verb,
                     resource res, const std::string& ns) {
  if (!self->state.forbid_namespaces)
    return {};
  std::string plural{plural_name(res)};
  return podref_error(errc::forbidden,
                      plural + " is forbidden: cannot " + verb
                        + " resource \"" + plural
                        + "\" in API group \"\" in the namespace \"" + ns
                        + "\"");
}

} // namespace

caf::result<list_result> list_at(memory_api_server_pointer self, resource res,
                                 const std::string& ns,
                                 const std::string& name,
                                 const std::string& rv, bool exact) {
  if (auto err = record(self, source_verb::list, res, ns, name, rv))
    return err;
  const auto& st = self->state;
  auto at = version_of(rv);
  if (!at)
    return podref_error(errc::invalid_argument,
                        "invalid resource version: \"" + rv + "\"");
  auto scope = name.empty() ? scope_of(res, ns) : key_of(res, ns, name);
  const auto& objects = st.store->objects;
  list_result result;
  auto now = st.store->version;
  if (!exact || *at == 0 || *at >= now) {
    for (auto i = objects.lower_bound(scope);
         i != objects.end() && in_scope(scope, i->first); ++i)
      result.items.push_back(i->second);
    result.resource_version = std::to_string(now);
    return result;
  }
  if (*at < st.compacted)
    return podref_error(errc::expired,
                        "The resourceVersion for the provided list is too "
                        "old.");
  // The state at `at`: each object the later events touched as it was
  // before the first of them; the others as they are now.
  std::map<memory_api_server_state::object_key, api_object> touched;
  for (auto i = st.history.rbegin();
       i != st.history.rend() && i->event.resource_version > *at; ++i)
    if (in_scope(scope, i->key))
      touched[i->key] = i->previous; // the oldest later event wins
  auto mine = objects.lower_bound(scope);
  auto theirs = touched.begin();
  auto take = [&result](const api_object& x) {
    if (x)
      result.items.push_back(x);
  };
  while (true) {
    bool more_mine = mine != objects.end() && in_scope(scope, mine->first);
    if (!more_mine && theirs == touched.end())
      break;
    if (!more_mine
        || (theirs != touched.end() && theirs->first <= mine->first)) {
      if (more_mine && theirs->first == mine->first)
        ++mine;
      take(theirs->second);
      ++theirs;
    } else {
      take(mine->second);
      ++mine;
    }
  }
  result.resource_version = std::to_string(*at);
  return result;
}

caf::result<list_result> list_namespace(memory_api_server_pointer self,
                                        resource res, const std::string& ns,
                                        const std::string& rv) {
  // The requested resourceVersion does not matter: memory is current.
  if (auto err = record(self, source_verb::list, res, ns, std::string{}, rv))
    return err;
  if (auto err = forbidden(self, "list", res, ns))
    return err;
  return list_or_hold(self, res, ns, std::string{}, caf::error{});
}

list_result namespace_now(const memory_api_server_state& st, resource res,
                          const std::string& ns) {
  auto scope = scope_of(res, ns);
  list_result result;
  const auto& objects = st.store->objects;
  for (auto i = objects.lower_bound(scope);
       i != objects.end() && in_scope(scope, i->first); ++i)
    result.items.push_back(i->second);
  result.resource_version = std::to_string(st.store->version);
  return result;
}

caf::result<watch_id> watch_namespace(memory_api_server_pointer self,
                                      resource res, const std::string& ns,
                                      const std::string& from,
                                      const watcher_actor& watcher) {
  if (auto err = record(self, source_verb::watch, res, ns, std::string{}))
    return err;
  if (auto err = forbidden(self, "watch", res, ns))
    return err;
  return start_watch(self, scope_of(res, ns), from, watcher);
}

} // namespace podref::detail
