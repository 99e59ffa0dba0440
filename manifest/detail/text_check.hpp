// Character-level checks of manifest text before any parser sees it:
// yaml-cpp would otherwise pass broken UTF-8 through into names and keys.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace podref::detail {

/// A byte that makes the text unacceptable, and why.
struct invalid_character {
  std::size_t offset;
  std::string problem;
};

/// The first byte that is not part of well-formed UTF-8 (no overlong forms,
/// surrogates or code points above U+10FFFF), or that is a C0 control
/// character other than tab, line feed and carriage return (neither JSON nor
/// YAML allows those unescaped), if any. UTF-16 input (with or without a
/// byte order mark) is reported as such, at offset 0.
std::optional<invalid_character> find_invalid_character(std::string_view text);

} // namespace podref::detail
