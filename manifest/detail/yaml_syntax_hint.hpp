// Clearer messages for two YAML mistakes that libyaml reports by what it
// found rather than by their cause: a tab in the indentation ("found
// character that cannot start any token", or "found a tab character that
// violates indentation"), and an implicit key longer than the 1024
// characters YAML allows ("could not find expected ':'", or "mapping values
// are not allowed in this context"). Both are recognised from the line of
// libyaml's error.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace podref::detail {

/// The most characters YAML (1.1 and 1.2) and libyaml accept in an
/// implicit (not `? `) key, from the key's first character to its ':'.
inline constexpr std::size_t max_implicit_key_characters = 1024;

/// A clearer message for libyaml's error `message` (its problem and
/// context) at byte `offset` of `text`, if the line there shows its cause:
/// - `a tab indents this line; YAML indents with spaces` when a tab is in
///   the line's indentation (not for errors in flow collections, where tabs
///   may separate values);
/// - `a key longer than 1024 characters must be written as an explicit key
///   ("? key")` when a ':' at `offset` ends a key longer than
///   max_implicit_key_characters.
/// Nothing otherwise. A UTF-8 byte order mark before line 1 is skipped.
std::optional<std::string> yaml_syntax_hint(std::string_view text,
                                            std::size_t offset,
                                            std::string_view message);

} // namespace podref::detail
