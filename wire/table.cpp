#include "podref/wire/table.hpp"

#include <ctime>

#include <nlohmann/json.hpp>

#include "podref/wire/detail/json_object.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"
#include "podref/wire/detail/table_kinds.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;
using detail::age_doc;
using detail::array_at;
using detail::name_doc;
using detail::object_at;
using detail::table_column;

// The column descriptions are the API's field documentation, as the real
// server sends them.
constexpr const char* type_doc
  = "Used to facilitate programmatic handling of secret data. More info: "
    "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
constexpr const char* secret_data_doc
  = "Data contains the secret data. Each key must consist of alphanumeric "
    "characters, '-', '_' or '.'. The serialized form of the secret data is a "
    "base64 encoded string, representing the arbitrary (possibly non-string) "
    "data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
constexpr const char* config_data_doc
  = "Data contains the configuration data. Each key must consist of "
    "alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte "
    "sequences must use the BinaryData field. The keys stored in Data must "
    "not overlap with the keys in the BinaryData field, this is enforced "
    "during validation process.";
constexpr const char* node_address_doc
  = "List of addresses reachable to the node. Queried from cloud provider, if "
    "available. More info: "
    "https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This "
    "field is declared as mergeable, but the merge key is not sufficiently "
    "unique, which can cause data corruption when it is merged. Callers "
    "should instead use a full-replacement patch. See "
    "https://pr.k8s.io/79391 for an example. Consumers should assume that "
    "addresses can change during the lifetime of a Node. However, there are "
    "some exceptions where this may not be possible, such as Pods that "
    "inherit a Node's address in its own status or consumers of the "
    "downward API (status.hostIP).";

void pod_columns(json& xs) {
  xs.push_back(table_column("Ready", "",
                      "The aggregate readiness state of this pod for "
                      "accepting traffic."));
  xs.push_back(table_column("Status", "",
                      "The aggregate status of the containers in this pod."));
  xs.push_back(table_column("Restarts", "",
                      "The number of times the containers in this pod have "
                      "been restarted and when the last container in this "
                      "pod has restarted."));
  xs.push_back(table_column("Age", "", age_doc));
  xs.push_back(table_column("IP", "",
                      "IP address allocated to the pod. Routable at least "
                      "within the cluster. Empty if not yet allocated.",
                      1));
  xs.push_back(table_column(
    "Node", "",
    "NodeName is a request to schedule this pod onto a specific node. If it "
    "is non-empty, the scheduler simply schedules this pod onto that node, "
    "assuming that it fits resource requirements.",
    1));
  xs.push_back(table_column(
    "Nominated Node", "",
    "nominatedNodeName is set only when this pod preempts other pods on the "
    "node, but it cannot be scheduled right away as preemption victims "
    "receive their graceful termination periods. This field does not "
    "guarantee that the pod will be scheduled on this node. Scheduler may "
    "decide to place the pod elsewhere if other nodes become available "
    "sooner. Scheduler may also decide to give the resources on this node to "
    "a higher priority pod that is created after preemption. As a result, "
    "this field may be different than PodSpec.nodeName when the pod is "
    "scheduled.",
    1));
  xs.push_back(table_column(
    "Readiness Gates", "",
    "If specified, all readiness gates will be evaluated for pod readiness. A "
    "pod is ready when all its containers are ready AND all conditions "
    "specified in the readiness gates have status equal to \"True\" More "
    "info: "
    "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
    1));
}

void node_columns(json& xs) {
  xs.push_back(table_column("Status", "", "The status of the node"));
  xs.push_back(table_column("Roles", "", "The roles of the node"));
  xs.push_back(table_column("Age", "", age_doc));
  xs.push_back(table_column("Version", "", "Kubelet Version reported by the node."));
  xs.push_back(table_column("Internal-IP", "", node_address_doc, 1));
  xs.push_back(table_column("External-IP", "", node_address_doc, 1));
  xs.push_back(table_column("OS-Image", "",
                      "OS Image reported by the node from /etc/os-release "
                      "(e.g. Debian GNU/Linux 7 (wheezy)).",
                      1));
  xs.push_back(table_column("Kernel-Version", "",
                      "Kernel Version reported by the node from 'uname -r' "
                      "(e.g. 3.16.0-0.bpo.4-amd64).",
                      1));
  xs.push_back(table_column("Container-Runtime", "",
                      "ContainerRuntime Version reported by the node through "
                      "runtime remote API (e.g. containerd://1.4.2).",
                      1));
}

json columns(resource res) {
  auto xs = json::array();
  xs.push_back(table_column("Name", "name", name_doc));
  switch (res) {
    case resource::secrets:
      xs.push_back(table_column("Type", "", type_doc));
      xs.push_back(table_column("Data", "", secret_data_doc));
      xs.push_back(table_column("Age", "", age_doc));
      break;
    case resource::config_maps:
      xs.push_back(table_column("Data", "", config_data_doc));
      xs.push_back(table_column("Age", "", age_doc));
      break;
    case resource::pods:
      pod_columns(xs);
      break;
    case resource::nodes:
      node_columns(xs);
      break;
    case resource::namespaces:
      xs.push_back(table_column("Status", "", "The status of the namespace"));
      xs.push_back(table_column("Age", "", age_doc));
      break;
    default:
      detail::append_kind_columns(res, xs);
      break;
  }
  return xs;
}

std::string or_none(std::string x, const char* none = "<none>") {
  return x.empty() ? none : x;
}

/// Ready, Status, Restarts (before Age) and the wide cells (after it), as
/// kubectl's pod printer computes them from spec and status.
void pod_cells(const api_object& obj, json& before, json& after) {
  auto fields = detail::opaque_fields(obj);
  const auto& spec = object_at(fields, "spec");
  const auto& status = object_at(fields, "status");
  auto total = array_at(spec, "containers").size();
  std::size_t ready = 0;
  std::int64_t restarts = 0;
  for (const auto& c : array_at(status, "containerStatuses")) {
    if (c.is_object() && c.value("ready", false))
      ++ready;
    if (c.is_object() && c.contains("restartCount")
        && c["restartCount"].is_number_integer())
      restarts += c["restartCount"].get<std::int64_t>();
  }
  auto reason = detail::string_at(status, {"reason"});
  if (reason.empty())
    reason = detail::string_at(status, {"phase"});
  if (!obj.as_opaque()->deletion_timestamp.empty() && reason != "NodeLost")
    reason = "Terminating";
  before.push_back(std::to_string(ready) + "/" + std::to_string(total));
  before.push_back(reason);
  before.push_back(std::to_string(restarts));
  after.push_back(or_none(detail::string_at(status, {"podIP"})));
  after.push_back(or_none(detail::string_at(spec, {"nodeName"})));
  after.push_back(or_none(detail::string_at(status, {"nominatedNodeName"})));
  const auto& gates = array_at(spec, "readinessGates");
  if (gates.empty()) {
    after.push_back("<none>");
  } else {
    std::size_t met = 0;
    for (const auto& g : gates) {
      auto type = detail::string_at(g, {"conditionType"});
      for (const auto& c : array_at(status, "conditions"))
        if (detail::string_at(c, {"type"}) == type
            && detail::string_at(c, {"status"}) == "True")
          ++met;
    }
    after.push_back(std::to_string(met) + "/" + std::to_string(gates.size()));
  }
}

/// Status, Roles (before Age) and Version and the wide cells (after it).
void node_cells(const api_object& obj, json& before, json& after) {
  auto fields = detail::opaque_fields(obj);
  const auto& spec = object_at(fields, "spec");
  const auto& status = object_at(fields, "status");
  std::string state = "Unknown";
  for (const auto& c : array_at(status, "conditions"))
    if (detail::string_at(c, {"type"}) == "Ready")
      state = detail::string_at(c, {"status"}) == "True" ? "Ready"
                                                         : "NotReady";
  if (spec.value("unschedulable", false))
    state += ",SchedulingDisabled";
  before.push_back(state);
  std::string roles;
  constexpr std::string_view role_prefix = "node-role.kubernetes.io/";
  for (const auto& [k, v] : obj.meta().labels) {
    std::string role;
    if (k.compare(0, role_prefix.size(), role_prefix) == 0)
      role = k.substr(role_prefix.size());
    else if (k == "kubernetes.io/role")
      role = v;
    if (!role.empty())
      roles += (roles.empty() ? "" : ",") + role;
  }
  before.push_back(or_none(roles));
  const auto& info = object_at(status, "nodeInfo");
  after.push_back(detail::string_at(info, {"kubeletVersion"}));
  auto address = [&](const char* type) {
    for (const auto& a : array_at(status, "addresses"))
      if (detail::string_at(a, {"type"}) == type)
        return detail::string_at(a, {"address"});
    return std::string{};
  };
  after.push_back(or_none(address("InternalIP")));
  after.push_back(or_none(address("ExternalIP")));
  after.push_back(or_none(detail::string_at(info, {"osImage"}), "<unknown>"));
  after.push_back(
    or_none(detail::string_at(info, {"kernelVersion"}), "<unknown>"));
  after.push_back(
    or_none(detail::string_at(info, {"containerRuntimeVersion"}),
            "<unknown>"));
}

/// Parses the codec's own RFC 3339 form; false if it is not that.
bool parse_timestamp(const std::string& text,
                     std::chrono::system_clock::time_point& out) {
  std::tm tm{};
  auto end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0')
    return false;
  out = std::chrono::system_clock::from_time_t(timegm(&tm));
  return true;
}

json row(const api_object& obj, std::chrono::system_clock::time_point now) {
  auto cells = json::array();
  auto after = json::array();
  bool with_age = true;
  cells.push_back(obj.meta().name);
  if (auto s = obj.as_secret()) {
    cells.push_back(s->type);
    cells.push_back(s->data.size());
  } else if (auto c = obj.as_config_map()) {
    cells.push_back(c->data.size() + c->binary_data.size());
  } else if (obj.kind() == resource::pods) {
    pod_cells(obj, cells, after);
  } else if (obj.kind() == resource::nodes) {
    node_cells(obj, cells, after);
  } else if (!detail::kind_cells(obj, cells, after, with_age)) {
    cells.push_back(
      detail::string_at(detail::opaque_fields(obj), {"status", "phase"}));
  }
  std::chrono::system_clock::time_point created;
  if (with_age)
    cells.push_back(parse_timestamp(obj.meta().creation_timestamp, created)
                      ? short_age(now - created)
                      : std::string{"<unknown>"});
  for (auto& x : after)
    cells.push_back(std::move(x));
  json partial;
  partial["kind"] = "PartialObjectMetadata";
  partial["apiVersion"] = "meta.k8s.io/v1";
  partial["metadata"] = detail::metadata_json(obj.meta());
  json x;
  x["cells"] = std::move(cells);
  x["object"] = std::move(partial);
  return x;
}

} // namespace

bool wants_table(std::string_view accept) {
  return accept.find("as=Table") != std::string_view::npos;
}

std::string short_age(std::chrono::system_clock::duration age) {
  using namespace std::chrono;
  auto s = duration_cast<seconds>(age).count();
  if (s < 0)
    s = 0;
  auto str = [](long long x) { return std::to_string(x); };
  if (s < 120)
    return str(s) + "s";
  auto m = s / 60;
  if (m < 10)
    return s % 60 == 0 ? str(m) + "m" : str(m) + "m" + str(s % 60) + "s";
  auto h = s / 3600;
  if (h < 3)
    return str(m) + "m";
  if (h < 8)
    return m % 60 == 0 ? str(h) + "h" : str(h) + "h" + str(m % 60) + "m";
  if (h < 48)
    return str(h) + "h";
  auto d = h / 24;
  if (h < 192)
    return h % 24 == 0 ? str(d) + "d" : str(d) + "d" + str(h % 24) + "h";
  if (d < 365 * 2)
    return str(d) + "d";
  return str(d / 365) + "y";
}

std::string encode_table(resource res, const std::vector<api_object>& items,
                         const std::string& rv, bool with_columns,
                         std::chrono::system_clock::time_point now) {
  json x;
  x["kind"] = "Table";
  x["apiVersion"] = "meta.k8s.io/v1";
  x["metadata"] = json{{"resourceVersion", rv}};
  x["columnDefinitions"] = with_columns ? columns(res) : json(nullptr);
  auto rows = json::array();
  for (const auto& item : items)
    rows.push_back(row(item, now));
  x["rows"] = std::move(rows);
  return detail::json_text(x);
}

} // namespace podref::wire
