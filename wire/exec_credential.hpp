// A kubeconfig's exec credential plugin (client.authentication.k8s.io v1 or
// v1beta1), run as kubectl runs it: non-interactively, with the process's
// environment plus the plugin's `env` and KUBERNETES_EXEC_INFO (an
// ExecCredential whose spec says interactive false, and carries the cluster
// when provideClusterInfo is set), stdin from /dev/null and stderr passed
// through. Its stdout must be an ExecCredential of the same apiVersion
// whose status holds a token, or a client certificate and key (PEM), and
// may hold an expirationTimestamp.
//
// Bounded where kubectl is not: the plugin gets `timeout` to finish and at
// most `max_output` bytes of stdout; past either it is killed and the run
// fails. No error quotes the plugin's output (it holds the credential).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "podref/messages/errors.hpp"
#include "podref/wire/kubeconfig.hpp"

namespace podref::wire {

/// What a plugin run handed back.
struct exec_credential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  /// status.expirationTimestamp; none: valid until the server says 401.
  std::optional<std::chrono::system_clock::time_point> expires;
};

/// Bounds of the runs, where kubectl has none: past `timeout` or
/// `max_output` a plugin is killed and the run fails. A client runs a
/// plugin again at most once per `min_interval` (every transfer refused
/// with a 401 asks for a run).
struct exec_limits {
  std::chrono::milliseconds timeout{60000};
  std::size_t max_output = 1u << 20;
  std::chrono::milliseconds min_interval{1000};
};

/// Runs `config.exec` for `config`'s cluster. `cancel`, when given and set
/// by another thread, kills the plugin and fails the run within ~0.1 s.
/// Errors start with `config.origin`, then "exec: " and the command.
result<exec_credential> run_exec_plugin(const client_config& config,
                                        const exec_limits& limits = {},
                                        const std::atomic<bool>* cancel
                                        = nullptr);

/// KUBERNETES_EXEC_INFO for `config` (exposed for tests).
std::string exec_info_json(const client_config& config);

/// Decodes a plugin's stdout, asked for `api_version`. The error says what
/// is missing or wrong, never a value.
result<exec_credential> decode_exec_credential(const std::string& output,
                                               const std::string& api_version);

} // namespace podref::wire
