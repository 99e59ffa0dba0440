#include "podref/messages/validation.hpp"

#include <cstdint>
#include <cstring>

#include "podref/messages/reference_walk.hpp"
#include "podref/messages/quoted_part.hpp"
#include "podref/messages/utf8.hpp"

namespace podref {

namespace {

// -- patterns -------------------------------------------------------------------

constexpr std::string_view label_message
  = "a lowercase RFC 1123 label must consist of lower case alphanumeric "
    "characters or '-', and must start and end with an alphanumeric "
    "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

constexpr std::string_view subdomain_message
  = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

// Names are checked once per registration on the caller's thread: one
// table lookup per byte, instead of a chain of comparisons.

/// Byte classes: the DNS-1123 alphabet, and `other` for any other byte.
enum : std::uint8_t { alnum = 1, dash = 2, dot = 4, other = 8 };

struct class_table {
  std::uint8_t of[256] = {};

  constexpr class_table() {
    for (auto& k : of)
      k = other;
    for (int c = 'a'; c <= 'z'; ++c)
      of[c] = alnum;
    for (int c = '0'; c <= '9'; ++c)
      of[c] = alnum;
    of[static_cast<unsigned char>('-')] = dash;
    of[static_cast<unsigned char>('.')] = dot;
  }

  std::uint8_t operator()(char c) const noexcept {
    return of[static_cast<unsigned char>(c)];
  }
};

constexpr class_table class_of;

/// The classes of the bytes of `v`, or-ed together. (Eight bytes at a time
/// with SWAR costs more: names are short, a word's arithmetic is ~25
/// instructions, a byte here ~4.)
std::uint8_t classes(std::string_view v) noexcept {
  std::uint8_t any = 0;
  for (auto c : v)
    any |= class_of(c);
  return any;
}

/// Not empty, and starts and ends with an alphanumeric.
bool alnum_ends(std::string_view v) noexcept {
  return !v.empty() && class_of(v.front()) == alnum
         && class_of(v.back()) == alnum;
}

/// [a-z0-9]([-a-z0-9]*[a-z0-9])?, without a length limit.
bool matches_label(std::string_view v) noexcept {
  return alnum_ends(v) && (classes(v) & (dot | other)) == 0;
}

/// Labels joined by single dots, without a length limit.
bool matches_subdomain(std::string_view v) noexcept {
  if (!alnum_ends(v))
    return false;
  auto any = classes(v);
  if ((any & other) != 0)
    return false;
  if ((any & dot) == 0)
    return true; // a single label
  // Every dot sits between two alphanumerics (the ends are alphanumeric).
  for (std::size_t i = 1; i + 1 < v.size(); ++i)
    if (v[i] == '.'
        && (class_of(v[i - 1]) != alnum || class_of(v[i + 1]) != alnum))
      return false;
  return true;
}

std::string max_length_error(std::size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

// -- quoting --------------------------------------------------------------------

/// `value` in double quotes with Go's escapes for quotes, backslashes,
/// control characters and bytes that are not UTF-8.
std::string go_quote(std::string_view value) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(value.size() + 2);
  out += '"';
  while (!value.empty()) {
    auto c = static_cast<std::uint8_t>(value.front());
    std::size_t n = 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= 0x20 && c < 0x7F) {
          out += static_cast<char>(c);
        } else if (c >= 0x80 && (n = utf8_sequence_length(value)) > 0) {
          out.append(value.substr(0, n));
        } else {
          n = 1;
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 0xF];
        }
    }
    value.remove_prefix(n);
  }
  out += '"';
  return out;
}

// -- references -----------------------------------------------------------------

using rule = reference_rule;

/// Upstream's maskTrailingDash: a name used as a prefix may end in '-'. It
/// replaces the last two characters with "a"; a lone "-" stays (upstream's
/// slice would panic on it, which rejects the request).
std::string mask_trailing_dash(std::string_view name) {
  if (name.size() > 1 && name.back() == '-')
    return std::string{name.substr(0, name.size() - 2)} + "a";
  return std::string{name};
}

/// dns1123_subdomain_errors(mask_trailing_dash(name)).empty(), without
/// allocating: the good path runs once per envFrom reference.
bool masked_is_subdomain(std::string_view name) noexcept {
  if (name.size() <= 1 || name.back() != '-')
    return is_dns1123_subdomain(name);
  auto head = name.substr(0, name.size() - 2);
  char masked[dns1123_subdomain_max_length];
  if (head.size() + 1 > sizeof masked)
    return false;
  std::memcpy(masked, head.data(), head.size());
  masked[head.size()] = 'a';
  return is_dns1123_subdomain({masked, head.size() + 1});
}

std::optional<std::string> check(std::string_view name, rule r) {
  switch (r) {
    case rule::any:
      return std::nullopt;
    case rule::required:
      if (name.empty())
        return required_value();
      return std::nullopt;
    case rule::required_subdomain:
      if (name.empty())
        return required_value();
      break;
    case rule::required_subdomain_prefix:
      if (name.empty())
        return required_value();
      if (masked_is_subdomain(name))
        return std::nullopt;
      return invalid_value(name,
                           dns1123_subdomain_errors(mask_trailing_dash(name)));
    case rule::subdomain:
      break;
  }
  if (is_dns1123_subdomain(name))
    return std::nullopt;
  return invalid_value(name, dns1123_subdomain_errors(name));
}

/// True iff check(name, r) finds no problem.
bool acceptable(std::string_view name, rule r) noexcept {
  switch (r) {
    case rule::any:
      return true;
    case rule::required:
      return !name.empty();
    case rule::required_subdomain:
    case rule::subdomain:
      return is_dns1123_subdomain(name); // false for empty
    case rule::required_subdomain_prefix:
      return !name.empty() && masked_is_subdomain(name);
  }
  return false;
}

/// Checks the reference fields of a pod spec (walk_references in
/// validation order), counting them against a limit; stops at the first
/// problem. Given a sink, it also collects the names of one resource that
/// the reference visitors yield: every field they read is one validation
/// looks at, so one walk serves both.
class reference_check {
public:
  explicit reference_check(std::size_t max_references,
                           reference_views* sink = nullptr) noexcept
    : max_(max_references),
      sink_(sink),
      secrets_(sink != nullptr && sink->of == resource::secrets),
      config_maps_(sink != nullptr && sink->of == resource::config_maps) {
    // nop
  }

  [[gnu::always_inline]] std::optional<field_problem>
  run(const pod_spec& spec) {
    walk_references<reference_order::validation>(spec, *this);
    return std::move(found_);
  }

  /// Checks one field; false once it has a problem. Inlined into every
  /// field of the walk, where the field's resource is a constant.
  [[gnu::always_inline]] bool operator()(const reference_field& field) {
    // The good path decides without building check()'s optional string.
    if (++seen_ <= max_ && acceptable(field.name, field.rule)) {
      bool keep = field.of == resource::secrets ? secrets_ : config_maps_;
      if (keep && field.visited && !field.name.empty()) {
        if (sink_->count < sink_->capacity)
          sink_->out[sink_->count] = field.name;
        ++sink_->count;
      }
      return true;
    }
    const auto& at = field.path;
    reject(field.name, field.rule, at.list, at.i, at.rest, at.nested, at.j);
    return false;
  }

private:
  /// The rest of operator(), off the good path: records the problem. Takes
  /// the path's scalars, so that the good path never stores the path.
  [[gnu::noinline, gnu::cold]] void
  reject(const std::string& name, rule r, const char* list, std::size_t i,
         const char* rest, const char* nested, std::size_t j) {
    field_path path{list, i, rest, nested, j};
    if (seen_ > max_) {
      found_ = field_problem{path.render(),
                             "more Secret and ConfigMap references than the "
                             "limit of "
                               + std::to_string(max_) + " per pod"};
      return;
    }
    if (auto problem = check(name, r))
      found_ = field_problem{path.render(), std::move(*problem)};
  }

  std::size_t max_;
  std::size_t seen_ = 0;
  reference_views* sink_;
  /// The sink's resource; both false without a sink.
  bool secrets_;
  bool config_maps_;
  std::optional<field_problem> found_;
};

} // namespace

// -- DNS-1123 names -------------------------------------------------------------

bool is_dns1123_label(std::string_view value) noexcept {
  return value.size() <= dns1123_label_max_length && matches_label(value);
}

bool is_dns1123_subdomain(std::string_view value) noexcept {
  return value.size() <= dns1123_subdomain_max_length
         && matches_subdomain(value);
}

std::vector<std::string> dns1123_label_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > dns1123_label_max_length)
    errs.push_back(max_length_error(dns1123_label_max_length));
  if (!matches_label(value)) {
    // A valid subdomain within the length limit fails only by its dots.
    if (matches_subdomain(value))
      errs.emplace_back("must not contain dots");
    else
      errs.emplace_back(label_message);
  }
  return errs;
}

std::vector<std::string> dns1123_subdomain_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > dns1123_subdomain_max_length)
    errs.push_back(max_length_error(dns1123_subdomain_max_length));
  if (!matches_subdomain(value))
    errs.emplace_back(subdomain_message);
  return errs;
}

std::vector<std::string> path_segment_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value == "." || value == "..")
    errs.push_back("may not be '" + std::string{value} + "'");
  for (const char* bad : {"/", "%"})
    if (value.find(bad) != std::string_view::npos)
      errs.push_back("may not contain '" + std::string{bad} + "'");
  return errs;
}

// -- field errors ---------------------------------------------------------------

std::string required_value(std::string_view detail) {
  std::string out = "Required value";
  if (!detail.empty())
    out.append(": ").append(detail);
  return out;
}

std::string go_quoted(std::string_view value) {
  return go_quote(quoted_part(value)) + omitted_note(value);
}

std::string invalid_value(std::string_view value,
                          const std::vector<std::string>& details) {
  auto out = "Invalid value: " + go_quoted(value);
  for (std::size_t i = 0; i < details.size(); ++i)
    out.append(i == 0 ? ": " : "; ").append(details[i]);
  return out;
}

std::optional<std::string> object_name_problem(std::string_view name) {
  if (name.empty())
    return required_value("name or generateName is required");
  if (is_dns1123_subdomain(name))
    return std::nullopt;
  return invalid_value(name, dns1123_subdomain_errors(name));
}

std::optional<std::string> namespace_problem(std::string_view ns) {
  if (ns.empty())
    return required_value();
  if (is_dns1123_label(ns))
    return std::nullopt;
  return invalid_value(ns, dns1123_label_errors(ns));
}

// -- pods -----------------------------------------------------------------------

std::optional<field_problem> find_reference_problem(const pod_spec& spec,
                                                    std::size_t max_references) {
  return reference_check{max_references}.run(spec);
}

namespace {

std::optional<field_problem> find_pod_problem(const pod& p,
                                              reference_views* sink) {
  const auto& meta = p.metadata;
  // The checks first: the *_problem texts only once one fails (an empty
  // text fails them too).
  if (!is_dns1123_label(meta.ns))
    return field_problem{"metadata.namespace", *namespace_problem(meta.ns)};
  if (!is_dns1123_subdomain(meta.name))
    return field_problem{"metadata.name", *object_name_problem(meta.name)};
  // The API server sets the uid; the managers key registrations by it.
  if (meta.uid.empty())
    return field_problem{"metadata.uid", required_value()};
  auto bad = reference_check{max_references_per_pod, sink}
               .run(p.spec);
  if (bad)
    bad->path.insert(0, "spec.");
  return bad;
}

} // namespace

std::optional<field_problem> find_pod_problem(const pod& p) {
  return find_pod_problem(p, nullptr);
}

std::optional<field_problem> find_pod_problem(const pod& p,
                                              reference_views& names) {
  return find_pod_problem(p, &names);
}

} // namespace podref
