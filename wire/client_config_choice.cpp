// Which client configuration a command uses when it is given no
// --kubeconfig: kubectl's choice (client-go's deferred loading), so that
// `podref node` and `podref hollow` run in a pod with no flag at all.
#include "podref/wire/kubeconfig.hpp"

#include <sstream>

#include <sys/stat.h>

namespace podref::wire {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// Whether the selection names a kubeconfig file that exists.
bool kubeconfig_exists(const kubeconfig_selection& selection) {
  if (!selection.explicit_path.empty())
    return true; // named: used, and an error when missing
  if (!selection.env_list.empty()) {
    std::stringstream list{selection.env_list};
    std::string path;
    while (std::getline(list, path, ':'))
      if (!path.empty() && is_regular_file(path))
        return true;
    return false;
  }
  return !selection.home.empty()
         && is_regular_file(selection.home + "/.kube/config");
}

} // namespace

bool in_cluster_possible(const in_cluster_environment& env) {
  return !env.service_host.empty() && !env.service_port.empty()
         && is_regular_file(env.account_dir + "/token");
}

result<client_config> resolve_client_config(
  const kubeconfig_selection& selection, const in_cluster_environment& env) {
  if (!kubeconfig_exists(selection) && in_cluster_possible(env))
    return load_in_cluster(env);
  return load_kubeconfig(selection);
}

} // namespace podref::wire
