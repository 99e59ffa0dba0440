#include "podref/runtime/typed_managers.hpp"

namespace podref {

namespace {

error_info unexpected_type(const api_object& x) {
  std::string what = !x ? "<nil>"
                        : std::string{singular_name(x.kind())} + " \""
                            + x.meta().ns + "/" + x.meta().name + "\"";
  return {errc::unexpected_type, "unexpected object type: " + what};
}

/// mgr.get(ns, name) as the object type `as` extracts, or the error.
template <class Ptr, class As>
result<Ptr> typed_get(object_manager& mgr, const std::string& ns,
                      const std::string& name, As as) {
  auto x = mgr.get(ns, name);
  if (!x)
    return x.error();
  if (auto obj = as(*x))
    return obj;
  return unexpected_type(*x);
}

} // namespace

result<secret_ptr> secret_manager::get_secret(const std::string& ns,
                                              const std::string& name) {
  return typed_get<secret_ptr>(mgr_, ns, name, [](const api_object& x) {
    return x.as_secret();
  });
}

result<config_map_ptr>
configmap_manager::get_configmap(const std::string& ns,
                                 const std::string& name) {
  return typed_get<config_map_ptr>(mgr_, ns, name, [](const api_object& x) {
    return x.as_config_map();
  });
}

} // namespace podref
