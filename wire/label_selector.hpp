// A list's or watch's labelSelector, in the API server's grammar:
// comma-separated requirements `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
// `k notin (a,b)`, `k`, `!k`, `k>N`, `k<N`. Parse errors carry the real
// server's text (`unable to parse requirement: found '=', expected:
// identifier`). What a client sends is bounded: the selector's length, its
// requirements and the values of a set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"

namespace podref::wire {

/// One requirement of a label selector.
struct label_requirement {
  enum class op : std::uint8_t {
    equals,
    not_equals,
    in,
    not_in,
    exists,
    not_exists,
    greater_than,
    less_than,
  };
  std::string key;
  op kind = op::equals;
  /// equals, not_equals, greater_than, less_than: the one value.
  std::string value;
  /// in, not_in: the set (sorted, unique).
  std::vector<std::string> values;
};

/// Bounds on a client's selector (the real server has none but its request
/// size; these are far above what kubectl and the kubelet send).
constexpr std::size_t max_selector_bytes = 16 * 1024;
constexpr std::size_t max_label_requirements = 100;
constexpr std::size_t max_set_values = 256;

/// Parses `text` ("" selects everything); errc::invalid_argument with the
/// 400 message otherwise.
result<std::vector<label_requirement>>
parse_label_selector(const std::string& text);

/// Whether `obj` has every label requirement of `labels`.
bool matches_labels(const std::vector<label_requirement>& labels,
                    const api_object& obj);

} // namespace podref::wire
