// The kubeconfig of `podref apiserver` (see server_kubeconfig.hpp).
#include "podref/wire/server_kubeconfig.hpp"

#include "podref/messages/base64.hpp"
#include "podref/wire/tls_material.hpp"

namespace podref::wire {

namespace {

/// A YAML double-quoted scalar (tokens may hold any printable character).
std::string quoted(const std::string& x) {
  std::string out = "\"";
  for (auto c : x) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

} // namespace

std::string kubeconfig_text(const server_kubeconfig& kc) {
  std::string out = "apiVersion: v1\n"
                    "kind: Config\n"
                    "clusters:\n"
                    "- name: podref\n"
                    "  cluster:\n"
                    "    server: "
                    + kc.url + "\n";
  if (!kc.ca_pem.empty())
    out += "    certificate-authority-data: " + encode_base64(kc.ca_pem)
           + "\n";
  out += "contexts:\n"
         "- name: podref\n"
         "  context:\n"
         "    cluster: podref\n"
         "    user: podref\n"
         "    namespace: default\n"
         "current-context: podref\n"
         "users:\n"
         "- name: podref\n";
  if (kc.token.empty())
    out += "  user: {}\n";
  else
    out += "  user:\n    token: " + quoted(kc.token) + "\n";
  return out;
}

result<void> write_kubeconfig(const std::string& path,
                              const server_kubeconfig& kc) {
  return write_private_file(path, kubeconfig_text(kc), 0600);
}

} // namespace podref::wire
