// Runs an exec credential plugin (exec_credential.hpp has the contract).
#include "podref/wire/exec_credential.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "podref/messages/base64.hpp"

extern char** environ;

namespace podref::wire {

namespace {

using json = nlohmann::json;
using clock = std::chrono::steady_clock;

error_info plugin_error(const client_config& config, const std::string& what) {
  auto where = config.origin.empty() ? std::string{"client config"}
                                     : config.origin;
  return error_info{errc::unavailable,
                    where + ": exec plugin \"" + config.exec->command + "\": "
                      + what};
}

/// The process's environment, then the plugin's `env` (replacing a
/// variable of the same name), then KUBERNETES_EXEC_INFO.
std::vector<std::string> plugin_environment(const client_config& config) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv{*e};
    auto eq = kv.find('=');
    if (eq != std::string_view::npos)
      vars[std::string{kv.substr(0, eq)}] = std::string{kv.substr(eq + 1)};
  }
  for (const auto& [name, value] : config.exec->env)
    vars[name] = value;
  vars["KUBERNETES_EXEC_INFO"] = exec_info_json(config);
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars)
    out.push_back(name + "=" + value);
  return out;
}

/// Seconds since the epoch of an RFC 3339 time: date, 'T', time, optional
/// fraction, then 'Z' or an offset.
std::optional<std::chrono::system_clock::time_point>
parse_rfc3339(const std::string& s) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[Tt]%2d:%2d:%2d%n", &tm.tm_year,
                  &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &consumed)
        != 6
      || consumed != 19)
    return std::nullopt;
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    ++i;
    auto digits = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    if (i == digits)
      return std::nullopt;
  }
  long offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-')
             && s[i + 3] == ':') {
    int h = 0;
    int m = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &h, &m) != 2 || h > 23
        || m > 59)
      return std::nullopt;
    offset = (s[i] == '+' ? 1 : -1) * (h * 3600L + m * 60L);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size() || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1
      || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59
      || tm.tm_sec > 60)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  auto secs = timegm(&tm);
  if (secs == static_cast<std::time_t>(-1))
    return std::nullopt;
  return std::chrono::system_clock::from_time_t(secs - offset);
}

/// Waits for `pid` until `deadline`, then kills it; its exit status, or
/// -1 when it was killed or did not exit normally.
int reap(pid_t pid, clock::time_point deadline,
         const std::atomic<bool>* cancel) {
  for (;;) {
    int status = 0;
    auto r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r < 0 && errno != EINTR)
      return -1;
    if (clock::now() >= deadline || (cancel != nullptr && cancel->load())) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    // Its stdout is closed: the exit is a moment away.
    struct timespec pause{0, 2'000'000};
    nanosleep(&pause, nullptr);
  }
}

} // namespace

std::string exec_info_json(const client_config& config) {
  json spec = {{"interactive", false}};
  if (config.exec && config.exec->provide_cluster_info) {
    json cluster = {{"server", config.server}};
    if (!config.tls_server_name.empty())
      cluster["tls-server-name"] = config.tls_server_name;
    if (config.insecure_skip_tls_verify)
      cluster["insecure-skip-tls-verify"] = true;
    if (!config.ca_pem.empty())
      cluster["certificate-authority-data"] = encode_base64(config.ca_pem);
    spec["cluster"] = std::move(cluster);
  }
  json info = {{"kind", "ExecCredential"},
               {"apiVersion", config.exec ? config.exec->api_version
                                          : std::string{}},
               {"spec", std::move(spec)}};
  return info.dump();
}

result<exec_credential> decode_exec_credential(const std::string& output,
                                               const std::string& api_version) {
  auto fail = [](std::string what) {
    return error_info{errc::invalid_argument, std::move(what)};
  };
  auto doc = json::parse(output, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return fail("its output is not a JSON object");
  auto text = [](const json& at, const char* key) -> const std::string* {
    auto i = at.find(key);
    return i != at.end() && i->is_string() ? &i->get_ref<const std::string&>()
                                           : nullptr;
  };
  const auto* kind = text(doc, "kind");
  if (kind == nullptr || *kind != "ExecCredential")
    return fail("its output is not an ExecCredential (kind)");
  const auto* version = text(doc, "apiVersion");
  if (version == nullptr || *version != api_version)
    return fail("it was asked for apiVersion " + api_version
                + " and answered "
                + (version == nullptr ? std::string{"none"}
                                      : json(*version).dump(
                                        -1, ' ', false,
                                        json::error_handler_t::replace)));
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_object())
    return fail("its ExecCredential has no status");
  exec_credential out;
  if (const auto* t = text(*status, "token"))
    out.token = *t;
  const auto* cert = text(*status, "clientCertificateData");
  const auto* key = text(*status, "clientKeyData");
  if ((cert == nullptr || cert->empty()) != (key == nullptr || key->empty()))
    return fail("status has only one of clientCertificateData and "
                "clientKeyData");
  if (cert != nullptr && !cert->empty()) {
    out.client_cert_pem = *cert;
    out.client_key_pem = *key;
  }
  if (out.token.empty() && out.client_cert_pem.empty())
    return fail("status has neither a token nor clientCertificateData and "
                "clientKeyData");
  if (auto i = status->find("expirationTimestamp");
      i != status->end() && !i->is_null()) {
    auto at = i->is_string() ? parse_rfc3339(i->get<std::string>())
                             : std::nullopt;
    if (!at)
      return fail("status.expirationTimestamp is not an RFC 3339 time");
    out.expires = at;
  }
  return out;
}

result<exec_credential> run_exec_plugin(const client_config& config,
                                        const exec_limits& limits,
                                        const std::atomic<bool>* cancel) {
  if (!config.exec)
    return error_info{errc::invalid_argument, "no exec plugin configured"};
  const auto& plugin = *config.exec;
  std::vector<std::string> args{plugin.command};
  args.insert(args.end(), plugin.args.begin(), plugin.args.end());
  auto env = plugin_environment(config);
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return plugin_error(config, std::string{"pipe: "} + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, plugin.command.c_str(), &actions, nullptr,
                        argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return plugin_error(config,
                        rc == ENOENT ? std::string{"executable file not found"}
                                     : std::string{"cannot run: "}
                                         + std::strerror(rc));
  }
  auto deadline = clock::now() + limits.timeout;
  std::string output;
  std::string problem;
  char buf[4096];
  for (;;) {
    if (cancel != nullptr && cancel->load()) {
      problem = "cancelled";
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - clock::now())
                  .count();
    if (left <= 0) {
      problem = "did not finish within "
                + std::to_string(limits.timeout.count()) + " ms";
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    auto n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
    if (n < 0 && errno != EINTR) {
      problem = std::string{"poll: "} + std::strerror(errno);
      break;
    }
    if (n <= 0)
      continue;
    auto got = read(fds[0], buf, sizeof(buf));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break; // EOF (or a read error, which the exit status then explains)
    if (output.size() + static_cast<std::size_t>(got) > limits.max_output) {
      problem = "wrote more than " + std::to_string(limits.max_output)
                + " bytes";
      break;
    }
    output.append(buf, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  auto status = reap(pid, problem.empty() ? deadline : clock::now(), cancel);
  if (!problem.empty())
    return plugin_error(config, problem);
  if (status != 0)
    return plugin_error(config, status < 0 ? std::string{"was killed"}
                                           : "exited with status "
                                               + std::to_string(status));
  auto cred = decode_exec_credential(output, plugin.api_version);
  if (!cred)
    return plugin_error(config, cred.error().message);
  return cred;
}

} // namespace podref::wire
