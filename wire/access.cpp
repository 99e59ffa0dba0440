// Authentication and the all-or-nothing authorization of the HTTP front.
#include "podref/wire/access.hpp"

#include <algorithm>

#include "podref/messages/resource_kinds.hpp"

namespace podref::wire {

namespace {

/// RBAC's verb for a route; empty for a path that is not a resource.
std::string verb_of(route_kind kind) {
  switch (kind) {
    case route_kind::get:
      return "get";
    case route_kind::list:
      return "list";
    case route_kind::watch:
      return "watch";
    case route_kind::create:
      return "create";
    case route_kind::update:
      return "update";
    case route_kind::remove:
      return "delete";
    default:
      return {};
  }
}

/// The node authorizer's refusal of a Secret or ConfigMap collection read
/// by a node (see access.hpp), or nullopt.
std::optional<api_status> node_rule(const user_info& user, const route& r,
                                    std::string_view path) {
  auto node = std::find(user.groups.begin(), user.groups.end(),
                        "system:nodes")
              != user.groups.end();
  auto collection = (r.kind == route_kind::list || r.kind == route_kind::watch)
                    && (r.ns.empty() || !r.field_name);
  if (!node || !collection
      || (r.res != resource::secrets && r.res != resource::config_maps))
    return std::nullopt;
  constexpr std::string_view prefix = "system:node:";
  auto name = user.name.compare(0, prefix.size(), prefix) == 0
                ? user.name.substr(prefix.size())
                : user.name;
  return forbidden_status(user.name, r, path,
                          "no relationship found between node '" + name
                            + "' and this object");
}

bool public_info(route_kind kind) {
  switch (kind) {
    case route_kind::version:
    case route_kind::healthz:
    case route_kind::readyz:
    case route_kind::livez:
      return true;
    default:
      return false;
  }
}

} // namespace

api_status unauthorized_status() {
  return failure_status(401, "Unauthorized", "Unauthorized");
}

api_status forbidden_status(const std::string& user, const route& r,
                            std::string_view path, const std::string& why) {
  auto verb = verb_of(r.kind);
  if (verb.empty())
    return failure_status(403, "Forbidden",
                          "forbidden: User \"" + user
                            + "\" cannot get path \"" + std::string{path}
                            + "\"",
                          true);
  auto plural = std::string{plural_name(r.res)};
  auto qualified = std::string{qualified_name(r.res)};
  auto group = kind_of(r.res).group;
  auto subject = r.name.empty() ? qualified
                                : qualified + " \"" + r.name + "\"";
  auto scope = r.ns.empty() ? std::string{"at the cluster scope"}
                            : "in the namespace \"" + r.ns + "\"";
  return failure_status(403, "Forbidden",
                        subject + " is forbidden: User \"" + user
                          + "\" cannot " + verb + " resource \"" + plural
                          + "\" in API group \"" + std::string{group} + "\" "
                          + scope
                          + (why.empty() ? std::string{} : ": " + why),
                        true, r.name, plural, group);
}

std::optional<api_status> check_access(const access_policy& policy,
                                       const credentials& presented,
                                       const route& r, std::string_view path) {
  if (!policy.tls)
    return std::nullopt;
  auto authorize = [&](const user_info& user) -> std::optional<api_status> {
    if (policy.node_authorizer)
      return node_rule(user, r, path);
    return std::nullopt;
  };
  if (presented.certificate_user != nullptr)
    return authorize(*presented.certificate_user);
  if (auto token = bearer_token(presented.authorization)) {
    if (policy.tokens != nullptr)
      if (auto* user = policy.tokens->find(*token))
        return authorize(*user);
    return unauthorized_status();
  }
  if (!policy.anonymous)
    return unauthorized_status();
  if (public_info(r.kind))
    return std::nullopt;
  return forbidden_status("system:anonymous", r, path);
}

} // namespace podref::wire
