#include "podref/manifest/detail/kinds.hpp"

#include <algorithm>
#include <array>

namespace podref::detail {

namespace {

constexpr std::array<std::string_view, 6> template_kinds = {
  "Deployment", "StatefulSet", "DaemonSet",
  "ReplicaSet", "ReplicationController", "Job",
};

} // namespace

bool is_template_kind(std::string_view kind) noexcept {
  return std::find(template_kinds.begin(), template_kinds.end(), kind)
         != template_kinds.end();
}

bool is_decoded_kind(std::string_view kind) noexcept {
  return kind == "Pod" || kind == "CronJob" || kind == "Secret"
         || kind == "ConfigMap" || kind == "Node" || is_template_kind(kind);
}

std::string_view typed_list_item_kind(std::string_view kind) noexcept {
  constexpr std::string_view suffix = "List";
  if (kind.size() <= suffix.size()
      || kind.substr(kind.size() - suffix.size()) != suffix)
    return {};
  auto item = kind.substr(0, kind.size() - suffix.size());
  return is_decoded_kind(item) ? item : std::string_view{};
}

bool is_skipped_kind(std::string_view kind) noexcept {
  return !kind.empty() && kind != "List" && !is_decoded_kind(kind)
         && typed_list_item_kind(kind).empty();
}

} // namespace podref::detail
