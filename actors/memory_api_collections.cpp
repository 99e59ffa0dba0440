// The in-memory API server's collection reads: a list and a watch over every
// object of a namespace or of all namespaces, as the API's collection paths
// (/api/v1/namespaces/NS/secrets, /api/v1/secrets) serve them.
#include "podref/actors/detail/memory_api_server_ops.hpp"

#include <string>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref::detail {

namespace {

/// The scope key of a collection: no name, and no namespace for all.
memory_api_server_state::object_key scope_of(resource res,
                                             const std::string& ns) {
  return {res, ns, std::string{}};
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

caf::result<list_result> list_namespace(memory_api_server_pointer self,
                                        resource res, const std::string& ns,
                                        const std::string& rv) {
  // The requested resourceVersion does not matter: memory is current.
  if (auto err = record(self, source_verb::list, res, ns, std::string{}, rv))
    return err;
  if (auto err = forbidden(self, "list", res, ns))
    return err;
  const auto& st = self->state;
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
