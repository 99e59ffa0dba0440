// The kubeconfig `podref apiserver --write-kubeconfig` writes for its
// clients (kubectl, client-go, wire/kubeconfig.hpp's resolver): one cluster,
// user and context named podref, namespace default.
#pragma once

#include <string>

#include "podref/messages/errors.hpp"

namespace podref::wire {

/// What the kubeconfig says.
struct server_kubeconfig {
  /// http://... or https://...
  std::string url;
  /// The CA that signed the serving certificate (PEM), written as
  /// certificate-authority-data; empty for plain HTTP.
  std::string ca_pem;
  /// The user's bearer token; empty: the user has no credential.
  std::string token;
};

/// The kubeconfig's YAML text.
std::string kubeconfig_text(const server_kubeconfig& kc);

/// Writes kubeconfig_text(kc) to `path`, mode 0600 (it may hold a token).
result<void> write_kubeconfig(const std::string& path,
                              const server_kubeconfig& kc);

} // namespace podref::wire
