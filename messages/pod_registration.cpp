#include "podref/messages/pod_registration.hpp"

#include <algorithm>

#include "podref/messages/pod_references.hpp"

namespace podref {

pod_registration_ptr make_registration(const pod& p, resource r) {
  auto names = r == resource::secrets ? secret_names(p) : config_map_names(p);
  return make_registration(p.metadata.ns, p.metadata.name, p.metadata.uid,
                           std::move(names));
}

pod_registration_ptr make_registration(std::string ns, std::string name,
                                       std::string uid,
                                       std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return std::make_shared<const pod_registration>(
    pod_registration{std::move(ns), std::move(name), std::move(uid),
                     std::move(names)});
}

} // namespace podref
