#include "podref/messages/actor_types.hpp"

#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace podref {

caf::error make_caf_error(const error_info& x) {
  return caf::error{static_cast<uint8_t>(x.code), error_category,
                    caf::make_message(x.message)};
}

error_info from_caf_error(const caf::error& x, const error_info& fallback) {
  if (x.category() == error_category) {
    error_info result{static_cast<errc>(x.code()), std::string{}};
    const auto& ctx = x.context();
    if (ctx.match_elements<std::string>())
      result.message = ctx.get_as<std::string>(0);
    return result;
  }
  if (!fallback.message.empty())
    return fallback;
  return {fallback.code, caf::to_string(x)};
}

} // namespace podref
