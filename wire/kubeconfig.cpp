#include "podref/wire/kubeconfig.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "podref/manifest/detail/documents.hpp"
#include "podref/manifest/detail/yaml_scalar.hpp"
#include "podref/messages/base64.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::json;

error_info config_error(std::string message) {
  return {errc::invalid_argument, std::move(message)};
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// `path` against `dir` unless absolute (or empty).
std::string resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/')
    return path;
  return dir + "/" + path;
}

bool file_exists(const std::string& path) {
  std::ifstream in{path};
  return in.good();
}

/// The whole file, bounded; `what` prefixes the error.
result<std::string> read_bounded(const std::string& path,
                                 const std::string& what) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return config_error(what + "cannot read " + path + ": "
                        + std::strerror(errno));
  std::string text;
  char buf[8192];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_kubeconfig_bytes)
      return config_error(what + path + " is larger than "
                          + std::to_string(max_kubeconfig_bytes) + " bytes");
  }
  return text;
}

/// One named entry of clusters, users or contexts, with where it was read.
struct entry {
  std::string file;
  std::string label; // `clusters[2] "name"`
  json body;         // the cluster, user or context map

  std::string at(const std::string& field) const {
    return file + ": " + label + ": " + field + ": ";
  }
};

/// The merged view of the kubeconfig files, first definition winning.
struct merged_config {
  std::vector<std::string> files;
  std::string current_context;
  std::map<std::string, entry> clusters, users, contexts;
};

/// The member `key` of the map `map`, or nullptr when it has none.
const json* member(const json& map, std::string_view key) {
  auto i = map.find(key);
  return i == map.end() ? nullptr : &*i;
}

/// The string member `key` of `map`: "" when absent or null, nullopt when
/// of another type (kubectl takes no number or boolean for a string).
std::optional<std::string> string_at(const json& map, const char* key) {
  const auto* x = member(map, key);
  if (x == nullptr || x->is_null())
    return std::string{};
  if (!x->is_string())
    return std::nullopt;
  return x->get<std::string>();
}

/// The first document of the kubeconfig `text` read from `path` (null when
/// it has none): kubectl reads no further. Its checks and limits are the
/// manifest decoder's.
result<json> parse_config(const std::string& path, std::string_view text) {
  struct first_read {};
  manifest_limits limits;
  limits.max_bytes = max_kubeconfig_bytes;
  limits.max_document_bytes = max_kubeconfig_bytes;
  limits.keep_documents = true; // every field, whatever the kind
  json first;
  try {
    detail::for_each_document(text, limits, [&](std::size_t, json&& doc) {
      first = std::move(doc);
      throw first_read{};
    });
  } catch (const first_read&) {
    // nop: the rest is not read
  } catch (const detail::input_error& e) {
    auto line = e.line() == 0 ? std::string{}
                              : "line " + std::to_string(e.line()) + ": ";
    return config_error(path + ": not a kubeconfig: " + line + e.what());
  }
  return first;
}

/// Reads one file's stanzas into `into`; names already there are kept.
std::optional<error_info> merge_file(const std::string& path,
                                     merged_config& into) {
  auto text = read_bounded(path, "kubeconfig: ");
  if (!text)
    return text.error();
  auto parsed = parse_config(path, *text);
  if (!parsed)
    return parsed.error();
  const auto& root = *parsed;
  into.files.push_back(path);
  if (root.is_null())
    return std::nullopt; // an empty file defines nothing, as for kubectl
  if (!root.is_object())
    return config_error(path + ": not a kubeconfig: the document is not a "
                               "map");
  auto current = string_at(root, "current-context");
  if (!current)
    return config_error(path + ": current-context: must be a string");
  if (into.current_context.empty())
    into.current_context = *current;
  struct section {
    const char* key;
    const char* body;
    std::map<std::string, entry>* out;
  };
  for (auto [key, body, out] :
       {section{"clusters", "cluster", &into.clusters},
        section{"users", "user", &into.users},
        section{"contexts", "context", &into.contexts}}) {
    const auto* list = member(root, key);
    if (list == nullptr || list->is_null())
      continue;
    if (!list->is_array())
      return config_error(path + ": " + key + ": must be a list");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto& item = (*list)[i];
      auto label = std::string{key} + "[" + std::to_string(i) + "]";
      if (!item.is_object())
        return config_error(path + ": " + label + ": must be a map");
      auto name = string_at(item, "name");
      if (!name)
        return config_error(path + ": " + label + ": name: must be a string");
      if (name->empty())
        return config_error(path + ": " + label + ": name: Required value");
      const auto* b = member(item, body);
      if (b != nullptr && !b->is_null() && !b->is_object())
        return config_error(path + ": " + label + ": " + body
                            + ": must be a map");
      out->emplace(*name, entry{path, label + " \"" + *name + "\"",
                                b != nullptr && b->is_object()
                                  ? *b
                                  : json::object()});
    }
  }
  return std::nullopt;
}

/// A string field of `e`, "" when absent or null.
result<std::string> string_field(const entry& e, const char* key) {
  auto x = string_at(e.body, key);
  if (!x)
    return config_error(e.at(key) + "must be a string");
  return std::move(*x);
}

/// A boolean field of `e`: true or false, or one of YAML 1.1's words
/// (yes, no, on, off...), which kubectl's YAML reader takes for booleans.
result<bool> bool_field(const entry& e, const char* key) {
  const auto* x = member(e.body, key);
  if (x == nullptr || x->is_null())
    return false;
  if (x->is_boolean())
    return x->get<bool>();
  if (x->is_string())
    if (auto value = detail::yaml11_boolean(x->get_ref<const std::string&>()))
      return *value;
  return config_error(e.at(key) + "must be true or false");
}

/// PEM from `<key>-data` (base64) or the file `<key>`; both set is an error,
/// as in client-go's validation.
result<std::string> pem_field(const entry& e, const std::string& key) {
  auto data_key = key + "-data";
  auto data = string_field(e, data_key.c_str());
  if (!data)
    return data.error();
  auto file = string_field(e, key.c_str());
  if (!file)
    return file.error();
  if (!data->empty() && !file->empty())
    return config_error(e.at(data_key) + data_key + " and " + key
                        + " are both specified");
  std::string pem;
  if (!data->empty()) {
    auto bytes = decode_base64(*data);
    if (!bytes)
      return config_error(e.at(data_key) + "not valid base64");
    pem = std::move(*bytes);
  } else if (!file->empty()) {
    auto text = read_bounded(resolve(directory_of(e.file), *file), e.at(key));
    if (!text)
      return text.error();
    pem = std::move(*text);
  } else {
    return std::string{};
  }
  if (pem.find("-----BEGIN ") == std::string::npos)
    return config_error(e.at(data->empty() ? key : data_key)
                        + "no PEM block found");
  return pem;
}

result<exec_plugin> read_exec(const entry& user) {
  const auto& node = *member(user.body, "exec");
  entry e{user.file, user.label + ": exec", node};
  if (!node.is_object())
    return config_error(user.at("exec") + "must be a map");
  exec_plugin x;
  auto api = string_field(e, "apiVersion");
  if (!api)
    return api.error();
  if (*api != "client.authentication.k8s.io/v1"
      && *api != "client.authentication.k8s.io/v1beta1")
    return config_error(e.at("apiVersion")
                        + (api->empty() ? std::string{"Required value"}
                                        : "unsupported \"" + *api
                                            + "\" (v1 or v1beta1 of "
                                              "client.authentication.k8s.io)"));
  x.api_version = *api;
  auto command = string_field(e, "command");
  if (!command)
    return command.error();
  if (command->empty())
    return config_error(e.at("command") + "Required value");
  x.command = command->find('/') == std::string::npos
                ? *command
                : resolve(directory_of(e.file), *command);
  if (const auto* args = member(node, "args");
      args != nullptr && !args->is_null()) {
    if (!args->is_array())
      return config_error(e.at("args") + "must be a list of strings");
    for (const auto& a : *args) {
      if (!a.is_string())
        return config_error(e.at("args") + "must be a list of strings");
      x.args.push_back(a.get<std::string>());
    }
  }
  if (const auto* env = member(node, "env");
      env != nullptr && !env->is_null()) {
    if (!env->is_array())
      return config_error(e.at("env") + "must be a list of name/value maps");
    for (const auto& v : *env) {
      auto name = v.is_object() ? string_at(v, "name") : std::nullopt;
      auto value = v.is_object() ? string_at(v, "value") : std::nullopt;
      if (!name || name->empty())
        return config_error(e.at("env") + "each entry needs a name");
      if (!value)
        return config_error(e.at("env") + "a value must be a string");
      x.env.emplace_back(std::move(*name), std::move(*value));
    }
  }
  auto cluster_info = bool_field(e, "provideClusterInfo");
  if (!cluster_info)
    return cluster_info.error();
  x.provide_cluster_info = *cluster_info;
  auto mode = string_field(e, "interactiveMode");
  if (!mode)
    return mode.error();
  if (*mode == "Always")
    return config_error(e.at("interactiveMode")
                        + "Always is not supported: podref runs credential "
                          "plugins without a terminal");
  return x;
}

std::optional<error_info> apply_cluster(const entry& e, client_config& out) {
  auto server = string_field(e, "server");
  if (!server)
    return server.error();
  if (server->empty())
    return config_error(e.at("server") + "cluster has no server defined");
  auto s = *server;
  if (s.find("://") == std::string::npos)
    s = "https://" + s; // as client-go defaults a bare host
  if (s.rfind("http://", 0) != 0 && s.rfind("https://", 0) != 0)
    return config_error(e.at("server") + "scheme must be http or https");
  while (!s.empty() && s.back() == '/')
    s.pop_back();
  out.server = s;
  auto name = string_field(e, "tls-server-name");
  if (!name)
    return name.error();
  out.tls_server_name = *name;
  auto insecure = bool_field(e, "insecure-skip-tls-verify");
  if (!insecure)
    return insecure.error();
  out.insecure_skip_tls_verify = *insecure;
  auto ca = pem_field(e, "certificate-authority");
  if (!ca)
    return ca.error();
  if (*insecure && !ca->empty())
    return config_error(e.at("insecure-skip-tls-verify")
                        + "specifying a root certificates file with the "
                          "insecure flag is not allowed");
  out.ca_pem = std::move(*ca);
  return std::nullopt;
}

std::optional<error_info> apply_user(const entry& e, client_config& out) {
  if (member(e.body, "auth-provider") != nullptr)
    return config_error(e.at("auth-provider")
                        + "not supported (kubectl dropped auth providers in "
                          "1.26): use an exec credential plugin");
  if (member(e.body, "username") != nullptr
      || member(e.body, "password") != nullptr)
    return config_error(e.at("username")
                        + "basic authentication is not supported");
  auto token = string_field(e, "token");
  if (!token)
    return token.error();
  auto token_file = string_field(e, "tokenFile");
  if (!token_file)
    return token_file.error();
  out.token = std::move(*token);
  if (out.token.empty() && !token_file->empty()) {
    out.token_file = resolve(directory_of(e.file), *token_file);
    if (!file_exists(out.token_file))
      return config_error(e.at("tokenFile") + "cannot read "
                          + out.token_file + ": " + std::strerror(errno));
  }
  auto cert = pem_field(e, "client-certificate");
  if (!cert)
    return cert.error();
  auto key = pem_field(e, "client-key");
  if (!key)
    return key.error();
  if (cert->empty() != key->empty())
    return config_error(e.at(cert->empty() ? "client-certificate"
                                           : "client-key")
                        + "a client certificate needs both "
                          "client-certificate and client-key");
  out.client_cert_pem = std::move(*cert);
  out.client_key_pem = std::move(*key);
  if (member(e.body, "exec") != nullptr) {
    auto x = read_exec(e);
    if (!x)
      return x.error();
    out.exec = std::move(*x);
  }
  return std::nullopt;
}

std::string joined(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files)
    out += (out.empty() ? "" : ":") + f;
  return out;
}

} // namespace

bool client_config::plain_http() const {
  return server.rfind("http://", 0) == 0;
}

kubeconfig_selection selection_from_environment(std::string explicit_path,
                                                std::string context) {
  kubeconfig_selection x;
  x.explicit_path = std::move(explicit_path);
  x.context = std::move(context);
  if (const char* list = std::getenv("KUBECONFIG"))
    x.env_list = list;
  if (const char* home = std::getenv("HOME"))
    x.home = home;
  return x;
}

result<client_config> load_kubeconfig(const kubeconfig_selection& selection) {
  merged_config merged;
  if (!selection.explicit_path.empty()) {
    if (auto err = merge_file(selection.explicit_path, merged))
      return *err;
  } else if (!selection.env_list.empty()) {
    std::stringstream list{selection.env_list};
    std::string path;
    while (std::getline(list, path, ':'))
      if (!path.empty() && file_exists(path))
        if (auto err = merge_file(path, merged))
          return *err;
    if (merged.files.empty())
      return config_error("kubeconfig: none of the files in KUBECONFIG ("
                          + selection.env_list + ") exists");
  } else {
    if (selection.home.empty())
      return config_error("kubeconfig: no --kubeconfig, KUBECONFIG or HOME");
    if (auto err = merge_file(selection.home + "/.kube/config", merged))
      return *err;
  }
  auto files = joined(merged.files);
  auto name = selection.context.empty() ? merged.current_context
                                        : selection.context;
  if (name.empty())
    return config_error(files + ": current-context is not set and no "
                                "context was given");
  auto ctx = merged.contexts.find(name);
  if (ctx == merged.contexts.end())
    return config_error(files + ": context was not found for specified "
                                "context: "
                        + name);
  client_config out;
  out.context = name;
  out.origin = files;
  auto cluster_name = string_field(ctx->second, "cluster");
  if (!cluster_name)
    return cluster_name.error();
  if (cluster_name->empty())
    return config_error(ctx->second.at("cluster") + "Required value");
  auto cluster = merged.clusters.find(*cluster_name);
  if (cluster == merged.clusters.end())
    return config_error(ctx->second.at("cluster") + "cluster \""
                        + *cluster_name + "\" was not found for context \""
                        + name + "\"");
  if (auto err = apply_cluster(cluster->second, out))
    return *err;
  auto ns = string_field(ctx->second, "namespace");
  if (!ns)
    return ns.error();
  if (!ns->empty())
    out.namespace_name = *ns;
  auto user_name = string_field(ctx->second, "user");
  if (!user_name)
    return user_name.error();
  if (!user_name->empty()) {
    auto user = merged.users.find(*user_name);
    if (user == merged.users.end())
      return config_error(ctx->second.at("user") + "user \"" + *user_name
                          + "\" was not found for context \"" + name + "\"");
    if (auto err = apply_user(user->second, out))
      return *err;
  }
  if (out.plain_http()) {
    out.token.clear();
    out.token_file.clear();
    out.client_cert_pem.clear();
    out.client_key_pem.clear();
    out.exec.reset();
  }
  return out;
}

in_cluster_environment in_cluster_from_environment() {
  in_cluster_environment x;
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"))
    x.service_host = host;
  if (const char* port = std::getenv("KUBERNETES_SERVICE_PORT"))
    x.service_port = port;
  return x;
}

result<client_config> load_in_cluster(const in_cluster_environment& env) {
  if (env.service_host.empty() || env.service_port.empty())
    return config_error("unable to load in-cluster configuration, "
                        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                        "must be defined");
  client_config out;
  out.origin = "in-cluster";
  auto host = env.service_host.find(':') == std::string::npos
                ? env.service_host
                : "[" + env.service_host + "]";
  out.server = "https://" + host + ":" + env.service_port;
  out.token_file = env.account_dir + "/token";
  if (!file_exists(out.token_file))
    return config_error("in-cluster: cannot read " + out.token_file + ": "
                        + std::strerror(errno));
  auto ca = read_bounded(env.account_dir + "/ca.crt", "in-cluster: ");
  if (!ca)
    return ca.error();
  out.ca_pem = std::move(*ca);
  if (out.ca_pem.find("-----BEGIN ") == std::string::npos)
    return config_error("in-cluster: " + env.account_dir
                        + "/ca.crt: no PEM block found");
  if (auto ns = read_bounded(env.account_dir + "/namespace", "")) {
    auto text = *ns;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    if (!text.empty())
      out.namespace_name = text;
  }
  return out;
}

} // namespace podref::wire
