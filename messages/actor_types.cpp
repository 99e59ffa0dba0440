#include "podref/messages/actor_types.hpp"

#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace podref {

caf::error make_caf_error(const error_info& x) {
  if (x.causes.empty())
    return caf::error{static_cast<uint8_t>(x.code), error_category,
                      caf::make_message(x.message)};
  // The causes travel flat, path then problem: CAF knows string lists.
  std::vector<std::string> causes;
  causes.reserve(x.causes.size() * 2);
  for (const auto& c : x.causes) {
    causes.push_back(c.path);
    causes.push_back(c.problem);
  }
  return caf::error{static_cast<uint8_t>(x.code), error_category,
                    caf::make_message(x.message, std::move(causes))};
}

error_info from_caf_error(const caf::error& x, const error_info& fallback) {
  if (x.category() == error_category) {
    error_info result{static_cast<errc>(x.code()), std::string{}};
    const auto& ctx = x.context();
    if (ctx.match_elements<std::string>()) {
      result.message = ctx.get_as<std::string>(0);
    } else if (ctx.match_elements<std::string, std::vector<std::string>>()) {
      result.message = ctx.get_as<std::string>(0);
      const auto& causes = ctx.get_as<std::vector<std::string>>(1);
      for (std::size_t i = 0; i + 1 < causes.size(); i += 2)
        result.causes.push_back({causes[i], causes[i + 1]});
    }
    return result;
  }
  if (!fallback.message.empty())
    return fallback;
  return {fallback.code, caf::to_string(x)};
}

} // namespace podref
