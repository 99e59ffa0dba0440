#include "podref/wire/merge_patch.hpp"

#include <utility>

namespace podref::wire {

nlohmann::ordered_json merge_patch(nlohmann::ordered_json target,
                                   const nlohmann::ordered_json& patch) {
  if (!patch.is_object())
    return patch;
  if (!target.is_object())
    target = nlohmann::ordered_json::object();
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(key);
      continue;
    }
    auto i = target.find(key);
    if (i == target.end())
      target[key] = merge_patch(nlohmann::ordered_json{}, value);
    else
      *i = merge_patch(std::move(*i), value);
  }
  return target;
}

} // namespace podref::wire
