#include "podref/messages/api_object.hpp"

#include "podref/messages/resource_kinds.hpp"

namespace podref {

std::string_view singular_name(resource r) noexcept {
  return kind_of(r).singular;
}

std::string_view plural_name(resource r) noexcept {
  return kind_of(r).plural;
}

std::string_view qualified_name(resource r) noexcept {
  return kind_of(r).qualified_plural;
}

std::string_view kind_name(resource r) noexcept {
  return kind_of(r).kind;
}

bool is_namespaced(resource r) noexcept {
  return kind_of(r).namespaced;
}

api_object::api_object(resource r, opaque_object_ptr x) noexcept {
  if (x && r != resource::secrets && r != resource::config_maps) {
    meta_ = &x->metadata;
    kind_ = r;
    ptr_ = std::move(x);
  }
}

opaque_object_ptr api_object::as_opaque() const noexcept {
  if (!meta_ || kind_ == resource::secrets || kind_ == resource::config_maps)
    return nullptr;
  return std::static_pointer_cast<const opaque_object>(ptr_);
}

api_object with_metadata(const api_object& x, object_meta meta) {
  if (auto s = x.as_secret()) {
    auto copy = std::make_shared<secret>(*s);
    copy->metadata = std::move(meta);
    return api_object{secret_ptr{std::move(copy)}};
  }
  if (auto c = x.as_config_map()) {
    auto copy = std::make_shared<config_map>(*c);
    copy->metadata = std::move(meta);
    return api_object{config_map_ptr{std::move(copy)}};
  }
  if (auto o = x.as_opaque()) {
    auto copy = std::make_shared<opaque_object>(*o);
    copy->metadata = std::move(meta);
    return api_object{x.kind(), opaque_object_ptr{std::move(copy)}};
  }
  return {};
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
  if (x.kind_ == resource::config_maps)
    return *x.as_config_map() == *y.as_config_map();
  return *x.as_opaque() == *y.as_opaque();
}

bool is_older(const api_object& x, const api_object& y) noexcept {
  return x && y && x.resource_version() < y.resource_version();
}

} // namespace podref
