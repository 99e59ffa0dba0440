// Whether the HTTP front lets a request through: authentication (who) and
// authorization (may they), decided before anything else is answered.
//
// Without TLS nothing is checked (plain HTTP is loopback only). With TLS,
// in kube-apiserver's order: a verified client certificate authenticates;
// else a bearer token must be one of the token file's (an unknown one is
// 401, even for /healthz); else the request is anonymous, which without
// `anonymous` is 401 too.
//
// Authorization is all or nothing: an authenticated user may do
// everything podref serves, whatever the groups. An anonymous request (when
// allowed) reaches /version, /healthz, /readyz and /livez only, as the real
// server's system:public-info-viewer role allows, and gets the real
// server's 403 elsewhere. With node_authorizer, users of group
// system:nodes read Secrets and ConfigMaps one object at a time only, as
// the real node authorizer lets a kubelet: a list or watch of a whole
// namespace (no fieldSelector metadata.name) or of all namespaces gets its
// 403. Unlike the real one it does not check that a pod bound to the node
// references the object.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "podref/wire/authn.hpp"
#include "podref/wire/router.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire {

/// What the server checks.
struct access_policy {
  bool tls = false;
  const token_table* tokens = nullptr; // may be null: no token authenticates
  bool anonymous = false;
  /// The node authorizer's shape for group system:nodes (above).
  bool node_authorizer = false;
};

/// What a request presents.
struct credentials {
  /// The user of a client certificate verified in the handshake.
  const user_info* certificate_user = nullptr;
  /// The Authorization header's value, empty without one.
  std::string_view authorization;
};

/// nullopt to let the request through; else the 401 or 403 to answer.
/// `path` is the request's path (without the query).
std::optional<api_status> check_access(const access_policy& policy,
                                       const credentials& presented,
                                       const route& r, std::string_view path);

/// 401 Unauthorized, as the real server's (no details).
api_status unauthorized_status();

/// 403 Forbidden for `user` on route `r` (or on `path` when `r` names no
/// resource), worded as the real server's RBAC denial; `why`, when given,
/// ends the message after ": " (the node authorizer's reason).
api_status forbidden_status(const std::string& user, const route& r,
                            std::string_view path,
                            const std::string& why = {});

} // namespace podref::wire
