// Where a client connects and how it authenticates: a kubeconfig resolved
// as kubectl resolves it, or the in-cluster configuration of a pod, chosen
// as kubectl chooses (resolve_client_config).
//
// kubeconfig: `--kubeconfig FILE` alone, else the `:`-separated $KUBECONFIG
// list (files that do not exist are skipped; the first file to define a
// cluster, user or context name, or current-context, wins), else
// ~/.kube/config. The context is `--context`, else current-context.
// Relative paths resolve against the directory of the file that names them.
// `*-data` fields are base64 and win over their file twins, as client-go's.
//
// No credential goes over plain HTTP: for an http:// server the token,
// token file, client certificate and exec plugin are dropped here, the one
// place that decides it (as kubectl sends none there).
//
// Every error names the file and the field, e.g.
// `/home/a/.kube/config: users[0] "alice": client-key: cannot read
// /home/a/key.pem: No such file or directory`. No error quotes a token or a
// key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "podref/messages/errors.hpp"

namespace podref::wire {

/// users[].user.exec: a client.authentication.k8s.io credential plugin,
/// run non-interactively by the client.
struct exec_plugin {
  std::string api_version; // client.authentication.k8s.io/v1 or /v1beta1
  /// As written, or resolved against the file's directory when it is a
  /// relative path with a '/'; a bare name is looked up on PATH.
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  bool provide_cluster_info = false;
};

/// A resolved client configuration.
struct client_config {
  /// scheme://host[:port][/path prefix], without a trailing '/'.
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  /// PEM; empty: verify against the system's roots.
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;
  /// Re-read by the client (about every minute, and on a 401) when set;
  /// empty when `token` is set, which wins as in client-go.
  std::string token_file;
  std::optional<exec_plugin> exec;
  /// The context's namespace, "default" when it names none.
  std::string namespace_name = "default";
  /// The context used, empty in-cluster.
  std::string context;
  /// Where this came from, for messages: a file path, or "in-cluster".
  std::string origin;

  /// True for an http:// server (then there are no credentials).
  bool plain_http() const;
};

/// What selects a kubeconfig: the flags and the environment.
struct kubeconfig_selection {
  std::string explicit_path; // --kubeconfig
  std::string env_list;      // $KUBECONFIG
  std::string home;          // $HOME
  std::string context;       // --context
};

/// The selection from the process's environment plus the two flags.
kubeconfig_selection selection_from_environment(std::string explicit_path,
                                                std::string context);

/// Resolves the kubeconfig the selection names (see the file comment).
result<client_config> load_kubeconfig(const kubeconfig_selection& selection);

/// A pod's view of its cluster.
struct in_cluster_environment {
  std::string service_host; // $KUBERNETES_SERVICE_HOST
  std::string service_port; // $KUBERNETES_SERVICE_PORT
  /// The service account's directory (token, ca.crt, namespace).
  std::string account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
};

/// The environment of this process.
in_cluster_environment in_cluster_from_environment();

/// https://HOST:PORT with the account's CA and namespace, and its token
/// file (re-read by the client as it rotates).
result<client_config> load_in_cluster(const in_cluster_environment& env);

/// Whether this process runs in a pod, as client-go decides it:
/// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set and the
/// account's token file present.
bool in_cluster_possible(const in_cluster_environment& env);

/// kubectl's choice of configuration (client-go's deferred loading): the
/// kubeconfig the selection names when there is one (--kubeconfig always;
/// else the files of $KUBECONFIG, else ~/.kube/config, when one exists);
/// otherwise, in a pod (in_cluster_possible), the in-cluster
/// configuration; otherwise load_kubeconfig's error. client-go also falls
/// back to in-cluster when the kubeconfig it found is empty; here an empty
/// file is an error.
result<client_config> resolve_client_config(
  const kubeconfig_selection& selection, const in_cluster_environment& env);

/// Files larger than this are refused (kubeconfigs are a few KB).
inline constexpr std::size_t max_kubeconfig_bytes = 4u << 20;

} // namespace podref::wire
