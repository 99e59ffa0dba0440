#include "podref/manifest/objects_of.hpp"

#include <type_traits>
#include <variant>

namespace podref {

namespace {

void append_objects(const manifest_result& decoded,
                    std::vector<api_object>& out) {
  for (const auto& entry : decoded.objects) {
    std::visit(
      [&out](const auto& ptr) {
        using ptr_type = std::decay_t<decltype(ptr)>;
        if constexpr (std::is_same_v<ptr_type, secret_ptr>
                      || std::is_same_v<ptr_type, config_map_ptr>) {
          if (ptr)
            out.emplace_back(ptr);
        }
      },
      entry.object);
  }
}

} // namespace

std::vector<api_object> objects_of(const manifest_result& decoded) {
  std::vector<api_object> result;
  append_objects(decoded, result);
  return result;
}

std::vector<api_object>
objects_of(const std::vector<manifest_result>& decoded) {
  std::vector<api_object> result;
  for (const auto& x : decoded)
    append_objects(x, result);
  return result;
}

} // namespace podref
