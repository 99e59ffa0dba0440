#include "podref/messages/strategy.hpp"

#include <string>

namespace podref {

const char* to_string(strategy x) noexcept {
  switch (x) {
    case strategy::get:
      return "Get";
    case strategy::cache:
      return "Cache";
    case strategy::watch:
      break;
  }
  return "Watch";
}

result<strategy> parse_strategy(std::string_view name) {
  for (auto x : {strategy::get, strategy::cache, strategy::watch})
    if (name == to_string(x))
      return x;
  return error_info{errc::invalid_argument,
                    "unknown configmap and secret manager mode: "
                      + std::string{name}};
}

} // namespace podref
