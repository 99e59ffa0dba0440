#include "hollow/convergence.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "hollow/requests.hpp"
#include "hollow/workload.hpp"
#include "podref/messages/object_meta.hpp"
#include "podref/messages/pod_references.hpp"
#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/http_call.hpp"
#include "podref/wire/pod_decode.hpp"

namespace podref::cli::hollow {

namespace {

/// The server's side of one attempt.
struct server_view {
  /// Node name -> uids of its live pods.
  std::unordered_map<std::string, std::set<std::string>> pods;
  /// Object key -> resourceVersion (0: the server has none).
  std::map<std::string, std::uint64_t> objects;
  std::string failure;
};

struct key_parts {
  resource res;
  std::string ns;
  std::string name;
};

key_parts split_key(const std::string& key) {
  auto slash = key.find('/', 2);
  return {key[0] == 's' ? resource::secrets : resource::config_maps,
          key.substr(2, slash - 2), key.substr(slash + 1)};
}

std::vector<std::string> keys_of(const pod& p) {
  std::vector<std::string> out;
  for (const auto& s : secret_names(p))
    out.push_back(object_key(resource::secrets, p.metadata.ns, s));
  for (const auto& c : config_map_names(p))
    out.push_back(object_key(resource::config_maps, p.metadata.ns, c));
  return out;
}

server_view read_server(fleet& f, wire::http_client& client) {
  server_view v;
  auto r = wire::call_and_wait(client, "GET", "/api/v1/pods");
  if (r.status != 200 || !r.error.empty()) {
    v.failure = wire::detail::error_of(r, "list pods").message;
    return v;
  }
  auto list = wire::decode_pod_list(r.body);
  if (!list) {
    v.failure = "list pods: " + list.error().message;
    return v;
  }
  for (const auto& item : list->items)
    if (item.ok && !item.pod.is_terminal() && !item.pod.is_deleting())
      v.pods[item.pod.node_name].insert(item.pod.pod->metadata.uid);
  for (std::size_t i = 0; i < f.size(); ++i)
    for (const auto& p : f.agent(i).registered_pods())
      for (auto& k : keys_of(*p))
        v.objects.emplace(std::move(k), 0);
  std::mutex mtx;
  request_window window{client, 32};
  for (auto& [key, rv] : v.objects) {
    auto parts = split_key(key);
    auto path = "/api/v1/namespaces/" + wire::detail::escape(parts.ns)
                + (parts.res == resource::secrets ? "/secrets/" : "/configmaps/")
                + wire::detail::escape(parts.name);
    auto* slot = &rv;
    auto* failure = &v.failure;
    window.send("GET", path, {},
                [slot, failure, &mtx, key = key](const wire::http_response& r) {
                  std::lock_guard<std::mutex> guard{mtx};
                  if (r.error.empty() && r.status == 200)
                    *slot = resource_version_of(r.body);
                  else if (r.error.empty() && r.status == 404)
                    *slot = 0;
                  else if (failure->empty())
                    *failure = wire::detail::error_of(r, "get " + key).message;
                });
  }
  window.wait();
  return v;
}

/// Node i's mismatches against `v` (empty: converged).
std::vector<std::string> node_problems(fleet& f, std::size_t i,
                                       const server_view& v) {
  std::vector<std::string> out;
  auto& agent = f.agent(i);
  const auto& name = f.name(i);
  auto pods = agent.registered_pods();
  std::set<std::string> mine;
  for (const auto& p : pods)
    mine.insert(p->metadata.uid);
  auto theirs_at = v.pods.find(name);
  static const std::set<std::string> none;
  const auto& theirs = theirs_at == v.pods.end() ? none : theirs_at->second;
  if (mine != theirs)
    out.push_back(name + ": " + std::to_string(mine.size())
                  + " pods registered, the server binds "
                  + std::to_string(theirs.size()));
  std::set<std::string> keys;
  for (const auto& p : pods)
    for (auto& k : keys_of(*p))
      keys.insert(std::move(k));
  for (const auto& key : keys) {
    auto want = v.objects.find(key);
    if (want == v.objects.end())
      continue; // registered after the server was read: the next attempt
    auto parts = split_key(key);
    std::optional<std::uint64_t> got; // nullopt: not found
    std::string error;
    if (parts.res == resource::secrets) {
      auto s = agent.secrets().get_secret(parts.ns, parts.name);
      if (s)
        got = parse_resource_version((*s)->metadata.resource_version);
      else if (s.error().code != errc::not_found)
        error = s.error().message;
    } else {
      auto c = agent.config_maps().get_configmap(parts.ns, parts.name);
      if (c)
        got = parse_resource_version((*c)->metadata.resource_version);
      else if (c.error().code != errc::not_found)
        error = c.error().message;
    }
    if (!error.empty())
      out.push_back(name + ": " + key + ": " + error);
    else if (want->second == 0 && got)
      out.push_back(name + ": " + key + " reads version "
                    + std::to_string(*got) + ", the server has none");
    else if (want->second != 0 && (!got || *got < want->second))
      out.push_back(name + ": " + key + " reads "
                    + (got ? "version " + std::to_string(*got)
                           : std::string{"not found"})
                    + ", the server has " + std::to_string(want->second));
  }
  return out;
}

} // namespace

convergence_result check_convergence(fleet& f, wire::http_client& client,
                                     std::chrono::nanoseconds settle) {
  convergence_result out;
  out.nodes = f.size();
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + settle;
  for (;;) {
    ++out.attempts;
    auto v = read_server(f, client);
    out.problems.clear();
    out.converged = 0;
    out.objects = v.objects.size();
    if (!v.failure.empty()) {
      out.problems.push_back(v.failure);
    } else {
      // Reads may block (Get, Cache): one task per node on the fleet's
      // threads, waited for.
      std::mutex mtx;
      std::condition_variable cv;
      std::size_t left = f.size();
      std::vector<std::vector<std::string>> found(f.size());
      for (std::size_t i = 0; i < f.size(); ++i)
        f.pool().post([&, i] {
          auto p = node_problems(f, i, v);
          std::lock_guard<std::mutex> guard{mtx};
          found[i] = std::move(p);
          if (--left == 0)
            cv.notify_all();
        });
      std::unique_lock<std::mutex> guard{mtx};
      cv.wait(guard, [&] { return left == 0; });
      for (auto& p : found) {
        if (p.empty())
          ++out.converged;
        for (auto& line : p)
          if (out.problems.size() < 10)
            out.problems.push_back(std::move(line));
      }
    }
    auto now = std::chrono::steady_clock::now();
    out.seconds = std::chrono::duration<double>(now - start).count();
    if (out.ok() || now >= deadline)
      return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

} // namespace podref::cli::hollow
