#include "podref/wire/label_selector.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <system_error>

#include "podref/messages/object_validation.hpp"
#include "podref/messages/validation.hpp"

namespace podref::wire {

namespace {

// -- tokens ---------------------------------------------------------------------

enum class tok : std::uint8_t {
  identifier,
  bang,         // !
  equals,       // =
  double_equals, // ==
  not_equals,   // !=
  in,           // in
  not_in,       // notin
  open_paren,   // (
  close_paren,  // )
  comma,        // ,
  greater,      // >
  less,         // <
  end,
};

struct token {
  tok kind = tok::end;
  std::string_view text;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'
         || c == '\v';
}

bool is_symbol(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>'
         || c == '<';
}

/// The selector's tokens. Where a value is expected, `in` and `notin` are
/// plain identifiers (the parser asks with `as_value`).
class lexer {
public:
  explicit lexer(std::string_view text) : text_(text) {}

  token peek(bool as_value) {
    auto saved = at_;
    auto t = next(as_value);
    at_ = saved;
    return t;
  }

  token next(bool as_value) {
    while (at_ < text_.size() && is_space(text_[at_]))
      ++at_;
    if (at_ >= text_.size())
      return {tok::end, {}};
    auto start = at_;
    auto c = text_[at_];
    if (is_symbol(c)) {
      ++at_;
      bool two = at_ < text_.size() && text_[at_] == '='
                 && (c == '=' || c == '!');
      if (two)
        ++at_;
      auto s = text_.substr(start, at_ - start);
      switch (c) {
        case '=':
          return {two ? tok::double_equals : tok::equals, s};
        case '!':
          return {two ? tok::not_equals : tok::bang, s};
        case '(':
          return {tok::open_paren, s};
        case ')':
          return {tok::close_paren, s};
        case ',':
          return {tok::comma, s};
        case '>':
          return {tok::greater, s};
        default:
          return {tok::less, s};
      }
    }
    while (at_ < text_.size() && !is_space(text_[at_])
           && !is_symbol(text_[at_]))
      ++at_;
    auto s = text_.substr(start, at_ - start);
    if (!as_value && s == "in")
      return {tok::in, s};
    if (!as_value && s == "notin")
      return {tok::not_in, s};
    return {tok::identifier, s};
  }

private:
  std::string_view text_;
  std::size_t at_ = 0;
};

bool is_integer(std::string_view x) {
  std::int64_t n = 0;
  auto [ptr, ec] = std::from_chars(x.data(), x.data() + x.size(), n);
  return !x.empty() && ec == std::errc{} && ptr == x.data() + x.size();
}

// -- the parser -------------------------------------------------------------------

using op = label_requirement::op;

error_info failure(const std::string& message) {
  return {errc::invalid_argument, message};
}

std::string found(token t, std::string_view expected) {
  return "found '" + std::string{t.text} + "', expected: "
         + std::string{expected};
}

class parser {
public:
  explicit parser(std::string_view text) : lex_(text) {}

  result<std::vector<label_requirement>> all() {
    std::vector<label_requirement> out;
    while (true) {
      auto t = lex_.peek(true);
      if (t.kind == tok::end)
        return out;
      if (t.kind != tok::identifier && t.kind != tok::bang)
        return failure(found(t, "!, identifier, or 'end of string'"));
      if (out.size() >= max_label_requirements)
        return failure("unable to parse requirement: more than "
                       + std::to_string(max_label_requirements)
                       + " requirements");
      auto req = requirement();
      if (!req)
        return failure("unable to parse requirement: "
                       + req.error().message);
      out.push_back(std::move(*req));
      auto after = lex_.next(true);
      if (after.kind == tok::end)
        return out;
      if (after.kind != tok::comma)
        return failure(found(after, "',' or 'end of string'"));
      auto next = lex_.peek(true);
      if (next.kind != tok::identifier && next.kind != tok::bang)
        return failure(found(next, "identifier after ','"));
    }
  }

private:
  result<label_requirement> requirement() {
    label_requirement req;
    auto t = lex_.next(true);
    bool negated = t.kind == tok::bang;
    if (negated)
      t = lex_.next(true);
    if (t.kind != tok::identifier)
      return failure(found(t, "identifier"));
    req.key = std::string{t.text};
    if (auto errs = qualified_name_errors(req.key); !errs.empty())
      return failure("key: " + invalid_value(req.key, errs));
    auto ahead = lex_.peek(true);
    if (negated || ahead.kind == tok::end || ahead.kind == tok::comma) {
      req.kind = negated ? op::not_exists : op::exists;
      return req;
    }
    auto o = lex_.next(false);
    switch (o.kind) {
      case tok::in:
      case tok::not_in:
        req.kind = o.kind == tok::in ? op::in : op::not_in;
        if (auto err = set_values(req))
          return *err;
        break;
      case tok::equals:
      case tok::double_equals:
      case tok::not_equals:
      case tok::greater:
      case tok::less: {
        req.kind = o.kind == tok::not_equals ? op::not_equals
                   : o.kind == tok::greater  ? op::greater_than
                   : o.kind == tok::less     ? op::less_than
                                             : op::equals;
        auto v = lex_.peek(true);
        if (v.kind != tok::end && v.kind != tok::comma) {
          v = lex_.next(true);
          if (v.kind != tok::identifier)
            return failure(found(v, "identifier"));
          req.value = std::string{v.text};
        }
        break;
      }
      default:
        return failure(found(o, "in, notin, =, ==, !=, gt, lt"));
    }
    return check_values(std::move(req));
  }

  /// `( v1, v2, ... )` into req.values.
  std::optional<error_info> set_values(label_requirement& req) {
    auto t = lex_.next(true);
    if (t.kind != tok::open_paren)
      return failure("found '" + std::string{t.text} + "' expected: '('");
    auto first = lex_.peek(true);
    if (first.kind == tok::close_paren) {
      lex_.next(true);
      req.values.emplace_back();
      return std::nullopt;
    }
    if (first.kind != tok::identifier && first.kind != tok::comma)
      return failure(found(first, "',', ')' or identifier"));
    // Identifiers separated by commas; an empty place is the empty value.
    bool want_value = true;
    while (true) {
      auto x = lex_.next(true);
      if (x.kind == tok::identifier && want_value) {
        req.values.emplace_back(x.text);
        want_value = false;
      } else if (x.kind == tok::comma) {
        if (want_value)
          req.values.emplace_back();
        want_value = true;
      } else if (x.kind == tok::close_paren) {
        if (want_value)
          req.values.emplace_back();
        break;
      } else {
        return failure(found(x, want_value ? "',', or identifier"
                                           : "',' or ')'"));
      }
      if (req.values.size() > max_set_values)
        return failure("more than " + std::to_string(max_set_values)
                       + " values in a set");
    }
    std::sort(req.values.begin(), req.values.end());
    req.values.erase(std::unique(req.values.begin(), req.values.end()),
                     req.values.end());
    return std::nullopt;
  }

  result<label_requirement> check_values(label_requirement req) {
    if (req.kind == op::in || req.kind == op::not_in) {
      for (std::size_t i = 0; i < req.values.size(); ++i)
        if (auto errs = label_value_errors(req.values[i]); !errs.empty())
          return failure("values[" + std::to_string(i) + "][" + req.key
                         + "]: " + invalid_value(req.values[i], errs));
      return req;
    }
    if (req.kind == op::greater_than || req.kind == op::less_than) {
      if (!is_integer(req.value))
        return failure("values[0]: Invalid value: \"" + req.value
                       + "\": for 'Gt', 'Lt' operators, the value must be "
                         "an integer");
      return req;
    }
    if (auto errs = label_value_errors(req.value); !errs.empty())
      return failure("values[0][" + req.key + "]: "
                     + invalid_value(req.value, errs));
    return req;
  }

  lexer lex_;
};

std::int64_t integer_of(const std::string& x) {
  std::int64_t n = 0;
  std::from_chars(x.data(), x.data() + x.size(), n);
  return n;
}

} // namespace

result<std::vector<label_requirement>>
parse_label_selector(const std::string& text) {
  if (text.size() > max_selector_bytes)
    return failure("unable to parse requirement: the selector is longer "
                   "than "
                   + std::to_string(max_selector_bytes) + " bytes");
  return parser{text}.all();
}

bool matches_labels(const std::vector<label_requirement>& labels,
                    const api_object& obj) {
  const auto& have = obj.meta().labels;
  for (const auto& req : labels) {
    auto i = have.find(req.key);
    bool found = i != have.end();
    auto in_set = [&] {
      return found
             && std::binary_search(req.values.begin(), req.values.end(),
                                   i->second);
    };
    switch (req.kind) {
      case op::equals:
        if (!found || i->second != req.value)
          return false;
        break;
      case op::not_equals:
        if (found && i->second == req.value)
          return false;
        break;
      case op::in:
        if (!in_set())
          return false;
        break;
      case op::not_in:
        if (in_set())
          return false;
        break;
      case op::exists:
        if (!found)
          return false;
        break;
      case op::not_exists:
        if (found)
          return false;
        break;
      case op::greater_than:
      case op::less_than: {
        if (!found || !is_integer(i->second))
          return false;
        auto have_n = integer_of(i->second);
        auto want_n = integer_of(req.value);
        if (req.kind == op::greater_than ? have_n <= want_n
                                         : have_n >= want_n)
          return false;
        break;
      }
    }
  }
  return true;
}

} // namespace podref::wire
