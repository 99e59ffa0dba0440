#include "podref/messages/api_object.hpp"

namespace podref {

std::string_view singular_name(resource r) noexcept {
  return r == resource::secrets ? "secret" : "configmap";
}

std::string_view plural_name(resource r) noexcept {
  return r == resource::secrets ? "secrets" : "configmaps";
}

api_object::api_object(secret_ptr x) noexcept {
  if (x) {
    meta_ = &x->metadata;
    immutable_ = x->is_immutable();
    kind_ = resource::secrets;
    ptr_ = std::move(x);
  }
}

api_object::api_object(config_map_ptr x) noexcept {
  if (x) {
    meta_ = &x->metadata;
    immutable_ = x->is_immutable();
    kind_ = resource::config_maps;
    ptr_ = std::move(x);
  }
}

std::uint64_t api_object::resource_version() const noexcept {
  return meta_ ? parse_resource_version(meta_->resource_version) : 0;
}

secret_ptr api_object::as_secret() const noexcept {
  if (!meta_ || kind_ != resource::secrets)
    return nullptr;
  return std::static_pointer_cast<const secret>(ptr_);
}

config_map_ptr api_object::as_config_map() const noexcept {
  if (!meta_ || kind_ != resource::config_maps)
    return nullptr;
  return std::static_pointer_cast<const config_map>(ptr_);
}

bool operator==(const api_object& x, const api_object& y) {
  if (!x || !y)
    return !x && !y;
  if (x.kind_ != y.kind_)
    return false;
  if (x.kind_ == resource::secrets)
    return *x.as_secret() == *y.as_secret();
  return *x.as_config_map() == *y.as_config_map();
}

bool is_older(const api_object& x, const api_object& y) noexcept {
  return x && y && x.resource_version() < y.resource_version();
}

} // namespace podref
