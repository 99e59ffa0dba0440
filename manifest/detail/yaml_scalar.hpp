// YAML scalar typing by the YAML 1.2 core schema, for the YAML to JSON
// conversion.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace podref::detail {

/// The JSON value of a plain (unquoted, untagged) scalar: true/True/TRUE and
/// false/False/FALSE are booleans; null/Null/NULL/~ and the empty scalar are
/// null; decimal, 0o octal and 0x hex integers and floats (.inf, .nan
/// included) are numbers (integers past 64 bits become floating point);
/// anything else is a string.
nlohmann::json resolve_plain_scalar(const std::string& text);

/// The booleans YAML 1.1 adds to true/false: y/Y/yes/Yes/YES/on/On/ON and
/// n/N/no/No/NO/off/Off/OFF (kubectl's YAML reader, go-yaml v2, takes them
/// for booleans); nullopt for any other text. The conversion keeps them as
/// text, and fields that take a boolean accept them (so `optional: no`
/// reads as kubectl reads it, while `name: n` stays a name).
std::optional<bool> yaml11_boolean(std::string_view text) noexcept;

/// The JSON value of a scalar with the explicit tag `tag`, as libyaml spells
/// it (`!!int` is "tag:yaml.org,2002:int"): !!null, !!bool, !!int and !!float
/// force that type and yield nullopt for text that is not of it; every other
/// tag (!!str, !!binary, application tags, the "!" of quoted scalars) yields
/// the text as a string.
std::optional<nlohmann::json> resolve_tagged_scalar(std::string_view tag,
                                                    const std::string& text);

} // namespace podref::detail
