#include "podref/wire/continue_token.hpp"
#include "podref/wire/detail/json_object.hpp"

#include <utility>

#include <nlohmann/json.hpp>

#include "podref/messages/base64.hpp"

namespace podref::wire {

namespace {

constexpr const char* token_version = "meta.k8s.io/v1";

error_info invalid(const std::string& why) {
  return {errc::invalid_argument,
          "invalid continue token: continue key is not valid" + why};
}

bool url_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
         || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/// The start key as a path below the list's prefix must not leave it: the
/// real server refuses a key that path cleaning would change.
bool clean_key(const std::string& key) {
  auto path = key.front() == '/' ? key : "/" + key;
  if (path.size() > 1 && path.back() == '/')
    return false;
  std::size_t start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos)
      end = path.size();
    auto part = path.substr(start, end - start);
    if ((part.empty() && end != path.size()) || part == "." || part == "..")
      return false;
    start = end + 1;
  }
  return true;
}

} // namespace

std::string encode_continue(const continue_token& token) {
  nlohmann::ordered_json x;
  x["v"] = token_version;
  x["rv"] = token.rv;
  x["start"] = token.start;
  auto text = encode_base64(detail::json_text(x));
  while (!text.empty() && text.back() == '=')
    text.pop_back();
  for (auto& c : text)
    c = c == '+' ? '-' : c == '/' ? '_' : c;
  return text;
}

result<continue_token> decode_continue(const std::string& text) {
  if (text.size() > max_continue_bytes)
    return invalid(": longer than " + std::to_string(max_continue_bytes)
                   + " bytes");
  // Unpadded URL-safe base64, as Go's RawURLEncoding.
  std::string std_text;
  std_text.reserve(text.size() + 3);
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = text[i];
    if (!url_alphabet(c))
      return invalid(": illegal base64 data at input byte "
                     + std::to_string(i));
    std_text.push_back(c == '-' ? '+' : c == '_' ? '/' : c);
  }
  if (std_text.size() % 4 == 1)
    return invalid(": illegal base64 data at input byte "
                   + std::to_string(text.size() - 1));
  while (std_text.size() % 4 != 0)
    std_text.push_back('=');
  auto bytes = decode_base64(std_text);
  if (!bytes)
    return invalid(": illegal base64 data");
  auto x = nlohmann::json::parse(*bytes, nullptr, false);
  if (x.is_discarded() || !x.is_object())
    return invalid(": the token is not a JSON object");
  auto v = x.find("v");
  if (v == x.end() || !v->is_string() || *v != token_version)
    return invalid(": server does not recognize this encoded version \""
                   + (v != x.end() && v->is_string() ? v->get<std::string>()
                                                     : std::string{})
                   + "\"");
  auto rv = x.find("rv");
  if (rv == x.end() || !rv->is_number_integer() || *rv == 0)
    return invalid(": incorrect encoded start resourceVersion (version "
                   "meta.k8s.io/v1)");
  auto start = x.find("start");
  if (start == x.end() || !start->is_string()
      || start->get_ref<const std::string&>().empty())
    return invalid(": encoded start key empty");
  auto key = start->get<std::string>();
  if (!clean_key(key))
    return invalid(": " + key);
  return continue_token{rv->get<std::int64_t>(), std::move(key)};
}

} // namespace podref::wire
