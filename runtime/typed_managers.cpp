#include "podref/runtime/typed_managers.hpp"

namespace podref {

namespace {

error_info unexpected_type(const api_object& x) {
  std::string what = !x ? "<nil>"
                        : std::string{singular_name(x.kind())} + " \""
                            + x.meta().ns + "/" + x.meta().name + "\"";
  return {errc::unexpected_type, "unexpected object type: " + what};
}

} // namespace

result<secret_ptr> secret_manager::get_secret(const std::string& ns,
                                              const std::string& name) {
  auto x = mgr_.get(ns, name);
  if (!x)
    return x.error();
  if (auto s = x->as_secret())
    return s;
  return unexpected_type(*x);
}

result<config_map_ptr>
configmap_manager::get_configmap(const std::string& ns,
                                 const std::string& name) {
  auto x = mgr_.get(ns, name);
  if (!x)
    return x.error();
  if (auto c = x->as_config_map())
    return c;
  return unexpected_type(*x);
}

} // namespace podref
