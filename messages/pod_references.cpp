#include "podref/messages/pod_references.hpp"

#include <algorithm>

#include "podref/messages/reference_walk.hpp"

namespace podref {

namespace {

/// The names one resource's visitor reads, in upstream's order, as a
/// filter over the walk: upstream's skipEmptyNames makes an empty name
/// count as "continue", never reaching `visitor`. A template over the
/// visitor, so that secret_name_views (one call per registration) pays no
/// std::function dispatch per name.
template <resource R, class V>
bool visit_names(const pod& p, V& visitor) {
  return walk_references<reference_order::visitors>(
    p.spec, [&visitor](const reference_field& field) {
      return field.of != R || !field.visited || field.name.empty()
             || visitor(field.name);
    });
}

/// Stores views into a caller's buffer and counts past its end.
struct view_collector {
  std::string_view* out;
  std::size_t capacity;
  std::size_t count = 0;

  bool operator()(const std::string& name) noexcept {
    if (count < capacity)
      out[count] = name;
    ++count;
    return true;
  }
};

void sort_unique(std::vector<std::string>& xs) {
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
}

} // namespace

bool visit_containers(pod_spec& spec, container_type mask,
                      const container_visitor& visitor) {
  auto walk = [&](std::vector<container>& list, container_type kind) {
    if (!has(mask, kind))
      return true;
    for (auto& c : list)
      if (!visitor(c, kind))
        return false;
    return true;
  };
  return walk(spec.init_containers, container_type::init_containers)
         && walk(spec.containers, container_type::containers)
         && walk(spec.ephemeral_containers,
                 container_type::ephemeral_containers);
}

bool visit_pod_secret_names(const pod& p, const name_visitor& visitor) {
  return visit_names<resource::secrets>(p, visitor);
}

bool visit_pod_config_map_names(const pod& p, const name_visitor& visitor) {
  return visit_names<resource::config_maps>(p, visitor);
}

std::vector<std::string> secret_names(const pod& p) {
  std::vector<std::string> result;
  auto collect = [&result](const std::string& name) {
    result.push_back(name);
    return true;
  };
  visit_names<resource::secrets>(p, collect);
  sort_unique(result);
  return result;
}

std::vector<std::string> config_map_names(const pod& p) {
  std::vector<std::string> result;
  auto collect = [&result](const std::string& name) {
    result.push_back(name);
    return true;
  };
  visit_names<resource::config_maps>(p, collect);
  sort_unique(result);
  return result;
}

std::size_t secret_name_views(const pod& p, std::string_view* out,
                              std::size_t capacity) {
  view_collector collect{out, capacity};
  visit_names<resource::secrets>(p, collect);
  return collect.count;
}

std::size_t config_map_name_views(const pod& p, std::string_view* out,
                                  std::size_t capacity) {
  view_collector collect{out, capacity};
  visit_names<resource::config_maps>(p, collect);
  return collect.count;
}

} // namespace podref
