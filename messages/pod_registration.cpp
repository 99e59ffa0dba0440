#include "podref/messages/pod_registration.hpp"

#include <algorithm>

#include "podref/messages/pod_references.hpp"

namespace podref {

pod_registration::pod_registration(std::string_view ns, std::string_view name,
                                   std::string_view uid,
                                   std::vector<std::string_view> names) {
  // Keys share the "ns/" prefix, so sorting names sorts keys.
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  auto size = ns.size() + name.size() + uid.size() + 2;
  for (auto n : names)
    size += ns.size() + 1 + n.size();
  text_.reserve(size);
  text_.append(ns).append(1, '\0');
  name_at_ = static_cast<std::uint32_t>(text_.size());
  text_.append(name).append(1, '\0');
  uid_at_ = static_cast<std::uint32_t>(text_.size());
  text_.append(uid);
  keys_at_ = static_cast<std::uint32_t>(text_.size());
  key_hash_ = hash_text(view(0, keys_at_));
  uid_hash_ = hash_text(this->uid());
  objects_.reserve(names.size());
  for (auto n : names) {
    object x;
    x.at = static_cast<std::uint32_t>(text_.size());
    text_.append(ns).append(1, '/').append(n);
    x.size = static_cast<std::uint32_t>(text_.size() - x.at);
    x.hash = hash_text(view(x.at, x.at + x.size));
    objects_.push_back(x);
  }
}

std::string object_key_of(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  key.append(ns).append(1, '/').append(name);
  return key;
}

pod_registration_ptr make_registration(const pod& p, resource r) {
  // The visitors hand out the pod's own strings: view them, copy once.
  std::vector<std::string_view> names;
  names.reserve(8);
  auto collect = [&](const std::string& n) {
    names.emplace_back(n);
    return true;
  };
  if (r == resource::secrets)
    visit_pod_secret_names(p, collect);
  else
    visit_pod_config_map_names(p, collect);
  return std::make_shared<const pod_registration>(
    p.metadata.ns, p.metadata.name, p.metadata.uid, std::move(names));
}

pod_registration_ptr make_registration(std::string_view ns,
                                       std::string_view name,
                                       std::string_view uid,
                                       const std::vector<std::string>& names) {
  return std::make_shared<const pod_registration>(
    ns, name, uid, std::vector<std::string_view>(names.begin(), names.end()));
}

} // namespace podref
