#include "podref/manifest/detail/object_decoder.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <memory>
#include <string_view>
#include <utility>

#include "podref/messages/base64.hpp"
#include "podref/messages/object_validation.hpp"
#include "podref/manifest/detail/kinds.hpp"
#include "podref/manifest/detail/pod_spec_decoder.hpp"

namespace podref::detail {

namespace {

// -- fields -------------------------------------------------------------------

constexpr std::string_view default_namespace = "default";

/// resourceVersion is a string in the API; a YAML author may write a bare
/// integer, which is kept as its decimal text.
void read_resource_version(const json& meta, const field_path& at,
                           std::string& out) {
  const auto* value = member(meta, "resourceVersion");
  if (value == nullptr)
    return;
  if (value->is_string())
    out = value->get<std::string>();
  else if (value->is_number_integer())
    out = value->dump();
  else
    fail_type(*value, at.field("resourceVersion"), "a string or an integer");
}

/// A map of base64 strings (Secret data, ConfigMap binaryData), decoded.
void read_base64_map(const json& object, std::string_view key,
                     const field_path& at,
                     std::map<std::string, std::string>& out) {
  std::map<std::string, std::string> encoded;
  read(object, key, at, encoded);
  if (encoded.empty())
    return;
  const auto map_at = at.field(key);
  for (auto& [name, text] : encoded) {
    auto decoded = decode_base64_checked(text);
    if (!decoded.bytes)
      fail(map_at.field(name), "illegal base64 data at input byte "
                                 + std::to_string(decoded.error_offset));
    out.emplace(name, std::move(*decoded.bytes));
  }
}

/// Fails with the first of `problems` (paths from the object's root).
void fail_first(const field_path& at,
                const std::vector<field_problem>& problems) {
  if (problems.empty())
    return;
  auto path = at.str();
  if (!path.empty())
    path += '.';
  path += problems.front().path;
  fail(field_path{path}, problems.front().problem);
}

/// The metadata of `object`, an object of `kind`; a namespaced kind
/// without a namespace gets "default". When `check`, fails at the first
/// problem find_meta_problems finds (an empty name passes: the manifest may
/// rely on generateName).
object_meta decode_metadata(const json& object, const field_path& at,
                            resource kind, bool check) {
  object_meta out;
  if (const auto* meta = member(object, "metadata")) {
    const auto meta_at = at.field("metadata");
    expect_map(*meta, meta_at);
    read(*meta, "namespace", meta_at, out.ns);
    read(*meta, "name", meta_at, out.name);
    read(*meta, "uid", meta_at, out.uid);
    read_resource_version(*meta, meta_at, out.resource_version);
    read(*meta, "labels", meta_at, out.labels);
    read(*meta, "annotations", meta_at, out.annotations);
  }
  if (is_namespaced(kind) && out.ns.empty())
    out.ns = default_namespace;
  if (check)
    fail_first(at, find_meta_problems(out, kind, false));
  return out;
}

// -- objects ------------------------------------------------------------------

pod_ptr decode_pod(const json& object, const field_path& at,
                   const manifest_limits& limits) {
  auto out = std::make_shared<pod>();
  out->metadata = decode_metadata(object, at, resource::pods,
                                  limits.check_objects);
  if (const auto* spec = member(object, "spec"))
    out->spec = decode_pod_spec(*spec, at.field("spec"), limits);
  return out;
}

/// Calls `f(value, path)` for the value that the keys [key, end) lead to
/// from `value`, if every step is present; fails when a step on the way is
/// not a map.
template <class F>
void descend(const json& value, const field_path& at,
             const std::string_view* key, const std::string_view* end, F f) {
  if (key == end) {
    f(value, at);
    return;
  }
  expect_map(value, at);
  if (const auto* next = member(value, *key))
    descend(*next, at.field(*key), key + 1, end, f);
}

/// The pod of a workload's template: the workload's namespace and name, the
/// template's labels, annotations and spec, and no uid.
pod_ptr decode_workload(const json& object, const field_path& at,
                        bool cron_job, const manifest_limits& limits) {
  auto out = std::make_shared<pod>();
  auto meta = decode_metadata(object, at, resource::pods,
                              limits.check_objects);
  out->metadata.ns = std::move(meta.ns);
  out->metadata.name = std::move(meta.name);
  // A CronJob's template is at spec.jobTemplate.spec.template, the other
  // workloads' at the last two steps of that path.
  static constexpr std::string_view path[] = {"spec", "jobTemplate", "spec",
                                              "template"};
  const auto* first = cron_job ? std::begin(path) : std::end(path) - 2;
  descend(object, at, first, std::end(path),
          [&out, &limits](const json& tmpl, const field_path& tmpl_at) {
            expect_map(tmpl, tmpl_at);
            if (const auto* meta = member(tmpl, "metadata")) {
              const auto meta_at = tmpl_at.field("metadata");
              expect_map(*meta, meta_at);
              read(*meta, "labels", meta_at, out->metadata.labels);
              read(*meta, "annotations", meta_at, out->metadata.annotations);
            }
            if (const auto* spec = member(tmpl, "spec"))
              out->spec = decode_pod_spec(*spec, tmpl_at.field("spec"),
                                          limits);
          });
  return out;
}

secret_ptr decode_secret(const json& object, const field_path& at,
                         bool check) {
  auto out = std::make_shared<secret>();
  out->metadata = decode_metadata(object, at, resource::secrets, check);
  read(object, "type", at, out->type);
  read(object, "immutable", at, out->immutable);
  read_base64_map(object, "data", at, out->data);
  read(object, "stringData", at, out->string_data);
  if (check) {
    // The server's default type, which its checks see.
    auto defaulted = *out;
    if (defaulted.type.empty())
      defaulted.type = "Opaque";
    fail_first(at, find_secret_content_problems(defaulted));
  }
  return out;
}

config_map_ptr decode_config_map(const json& object, const field_path& at,
                                 bool check) {
  auto out = std::make_shared<config_map>();
  out->metadata = decode_metadata(object, at, resource::config_maps, check);
  read(object, "immutable", at, out->immutable);
  read(object, "data", at, out->data);
  read_base64_map(object, "binaryData", at, out->binary_data);
  if (check)
    fail_first(at, find_config_map_content_problems(*out));
  return out;
}

node_ptr decode_node(const json& object, const field_path& at, bool check) {
  auto out = std::make_shared<node>();
  out->metadata = decode_metadata(object, at, resource::nodes, check);
  return out;
}

} // namespace

void object_decoder::count_object(const field_path& at) {
  if (++objects_ > limits_.max_objects)
    throw object_limit_error(at, "more objects than the limit of "
                                   + std::to_string(limits_.max_objects));
}

void object_decoder::decode_document(std::size_t index,
                                     const json& document) {
  doc_ = index;
  if (document.is_null()) {
    // An empty document (e.g. after a trailing `---`) holds no object, but
    // costs a parse like one: it counts toward the limit all the same.
    count_object(field_path{});
    return;
  }
  // Lists (even nested ones) are walked with an explicit stack rather than
  // recursion, so that no input can exhaust the call stack.
  std::vector<pending> work;
  work.push_back(pending{&document, {}, {}});
  while (!work.empty()) {
    auto item = std::move(work.back());
    work.pop_back();
    try {
      decode_object(item, work);
    } catch (const object_limit_error&) {
      throw;
    } catch (const field_error& e) {
      // Only this object is lost; a List's items were not pushed yet.
      errors_.add("document " + std::to_string(doc_) + ": " + e.what());
    }
  }
}

void object_decoder::decode_object(const pending& item,
                                   std::vector<pending>& work) {
  const auto& object = *item.object;
  const field_path at{item.path};
  count_object(at);
  expect_map(object, at);
  std::string kind;
  read(object, "kind", at, kind);
  if (kind.empty())
    kind = item.default_kind;
  if (kind.empty())
    fail(at.field("kind"), "required field is missing");
  auto item_kind = typed_list_item_kind(kind);
  if (kind == "List" || !item_kind.empty()) {
    const auto* items = member(object, "items");
    if (items == nullptr)
      return;
    const auto items_at = at.field("items");
    expect_list(*items, items_at);
    // Pushed last to first, so that they come off the stack in order.
    for (auto i = items->size(); i-- > 0;)
      work.push_back(pending{&(*items)[i], items_at.index(i).str(),
                             std::string{item_kind}});
    return;
  }
  manifest_object entry{doc_, kind, {}};
  if (kind == "Pod")
    entry.object = decode_pod(object, at, limits_);
  else if (kind == "CronJob" || is_template_kind(kind))
    entry.object = decode_workload(object, at, kind == "CronJob", limits_);
  else if (kind == "Secret")
    entry.object = decode_secret(object, at, limits_.check_objects);
  else if (kind == "ConfigMap")
    entry.object = decode_config_map(object, at, limits_.check_objects);
  else if (kind == "Node")
    entry.object = decode_node(object, at, limits_.check_objects);
  else
    return; // a kind podref does not model
  out_.push_back(std::move(entry));
}

} // namespace podref::detail
