#include "podref/manifest/detail/yaml_scalar.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <system_error>
#include <utility>

namespace podref::detail {

namespace {

using json = nlohmann::json;

constexpr std::string_view core_tag_prefix = "tag:yaml.org,2002:";

bool is_null_text(std::string_view s) noexcept {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> parse_bool(std::string_view s) noexcept {
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  return std::nullopt;
}

int digit_value(char c, unsigned base) noexcept {
  int value = -1;
  if (c >= '0' && c <= '9')
    value = c - '0';
  else if (c >= 'a' && c <= 'f')
    value = c - 'a' + 10;
  else if (c >= 'A' && c <= 'F')
    value = c - 'A' + 10;
  return value >= 0 && static_cast<unsigned>(value) < base ? value : -1;
}

/// Core schema integers: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+. Values past
/// 64 bits become floating point rather than wrapping.
std::optional<json> parse_int(std::string_view s) {
  unsigned base = 10;
  bool negative = false;
  auto digits = s;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    base = s[1] == 'o' ? 8 : 16;
    digits.remove_prefix(2);
  } else if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty())
    return std::nullopt;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t magnitude = 0;
  double approx = 0;
  bool overflow = false;
  for (char c : digits) {
    int d = digit_value(c, base);
    if (d < 0)
      return std::nullopt;
    auto digit = static_cast<std::uint64_t>(d);
    approx = approx * base + d;
    if (magnitude > (max - digit) / base)
      overflow = true;
    else if (!overflow)
      magnitude = magnitude * base + digit;
  }
  if (overflow)
    return json(negative ? -approx : approx);
  constexpr auto int_max
    = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!negative)
    return magnitude <= int_max ? json(static_cast<std::int64_t>(magnitude))
                                : json(magnitude);
  if (magnitude <= int_max)
    return json(-static_cast<std::int64_t>(magnitude));
  if (magnitude == int_max + 1)
    return json(std::numeric_limits<std::int64_t>::min());
  return json(-static_cast<double>(magnitude));
}

/// Core schema floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?,
/// [-+]?\.(inf|Inf|INF) and \.(nan|NaN|NAN).
std::optional<double> parse_float(std::string_view s) {
  if (s == ".nan" || s == ".NaN" || s == ".NAN")
    return std::numeric_limits<double>::quiet_NaN();
  bool negative = false;
  auto body = s;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  double sign = negative ? -1.0 : 1.0;
  if (body == ".inf" || body == ".Inf" || body == ".INF")
    return sign * std::numeric_limits<double>::infinity();
  auto is_digit = [&](std::size_t i) {
    return i < body.size() && body[i] >= '0' && body[i] <= '9';
  };
  std::size_t i = 0;
  std::size_t mantissa_digits = 0;
  for (; is_digit(i); ++i)
    ++mantissa_digits;
  if (i < body.size() && body[i] == '.')
    for (++i; is_digit(i); ++i)
      ++mantissa_digits;
  if (mantissa_digits == 0)
    return std::nullopt;
  bool tiny = false;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+'))
      tiny = body[i++] == '-';
    if (!is_digit(i))
      return std::nullopt;
    while (is_digit(i))
      ++i;
  }
  if (i != body.size())
    return std::nullopt;
  double value = 0;
  const auto* end = body.data() + body.size();
  auto [ptr, ec] = std::from_chars(body.data(), end, value);
  if (ec == std::errc::result_out_of_range)
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  else if (ec != std::errc{} || ptr != end)
    return std::nullopt;
  return sign * value;
}

} // namespace

std::optional<bool> yaml11_boolean(std::string_view text) noexcept {
  for (std::string_view x : {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"})
    if (text == x)
      return true;
  for (std::string_view x : {"n", "N", "no", "No", "NO", "off", "Off", "OFF"})
    if (text == x)
      return false;
  return std::nullopt;
}

json resolve_plain_scalar(const std::string& text) {
  if (is_null_text(text))
    return nullptr;
  if (auto value = parse_bool(text))
    return *value;
  if (auto value = parse_int(text))
    return std::move(*value);
  if (auto value = parse_float(text))
    return *value;
  return text;
}

std::optional<json> resolve_tagged_scalar(std::string_view tag,
                                          const std::string& text) {
  if (tag.substr(0, core_tag_prefix.size()) != core_tag_prefix)
    return json(text);
  auto name = tag.substr(core_tag_prefix.size());
  if (name == "null")
    return is_null_text(text) ? std::optional<json>{json(nullptr)}
                              : std::nullopt;
  if (name == "bool") {
    if (auto value = parse_bool(text))
      return json(*value);
    return std::nullopt;
  }
  if (name == "int")
    return parse_int(text);
  if (name == "float") {
    if (auto value = parse_float(text))
      return json(*value);
    if (auto value = parse_int(text))
      return json(value->get<double>());
    return std::nullopt;
  }
  return json(text);
}

} // namespace podref::detail
