// Token files and bearer headers of the HTTP front.
#include "podref/wire/authn.hpp"

#include <cctype>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "podref/wire/tls_material.hpp"

namespace podref::wire {

namespace {

std::string digest(std::string_view token) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(token.data(), token.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), n);
}

std::string_view trim(std::string_view x) {
  while (!x.empty() && std::isspace(static_cast<unsigned char>(x.front())))
    x.remove_prefix(1);
  while (!x.empty() && std::isspace(static_cast<unsigned char>(x.back())))
    x.remove_suffix(1);
  return x;
}

/// Splits one CSV record; false (with `why`) on a bad quote.
bool split_csv(std::string_view line, std::vector<std::string>& fields,
               std::string& why) {
  fields.clear();
  std::size_t i = 0;
  for (;;) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i; // leading space, as kube-apiserver's reader trims it
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i == line.size()) {
          why = "a quoted field does not end";
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') {
        why = "text after a quoted field";
        return false;
      }
    } else {
      while (i < line.size() && line[i] != ',') {
        if (line[i] == '"') {
          why = "a quote inside an unquoted field";
          return false;
        }
        field += line[i++];
      }
    }
    fields.push_back(std::move(field));
    if (i == line.size())
      return true;
    ++i; // the comma
  }
}

} // namespace

result<token_table> token_table::parse(std::string_view text,
                                       const std::string& origin) {
  token_table out;
  std::unordered_map<std::string, std::size_t> line_of;
  std::vector<std::string> fields;
  std::string why;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{}
                                         : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (trim(line).empty())
      continue;
    auto where = origin + ":" + std::to_string(number) + ": ";
    if (!split_csv(line, fields, why))
      return error_info{errc::invalid_argument, where + why};
    if (fields.size() < 3)
      return error_info{errc::invalid_argument,
                        where + "expected token,user,uid[,\"groups\"], found "
                          + std::to_string(fields.size()) + " column"
                          + (fields.size() == 1 ? "" : "s")};
    if (fields[0].empty())
      return error_info{errc::invalid_argument, where + "empty token"};
    if (fields[1].empty())
      return error_info{errc::invalid_argument, where + "empty user name"};
    user_info user;
    user.name = fields[1];
    user.uid = fields[2];
    if (fields.size() > 3) {
      std::string_view groups = fields[3];
      while (!groups.empty()) {
        auto comma = groups.find(',');
        auto g = trim(groups.substr(0, comma));
        if (!g.empty())
          user.groups.emplace_back(g);
        groups = comma == std::string_view::npos ? std::string_view{}
                                                 : groups.substr(comma + 1);
      }
    }
    auto key = digest(fields[0]);
    auto [at, fresh] = line_of.emplace(key, number);
    if (!fresh)
      return error_info{errc::invalid_argument,
                        where + "the token of line "
                          + std::to_string(at->second) + " again"};
    if (out.first_.empty())
      out.first_ = fields[0];
    out.users_.emplace(std::move(key), std::move(user));
  }
  return out;
}

result<token_table> token_table::load(const std::string& path) {
  auto text = read_small_file(path, 16u << 20);
  if (!text)
    return text.error();
  return parse(*text, path);
}

const user_info* token_table::find(std::string_view token) const {
  auto i = users_.find(digest(token));
  return i == users_.end() ? nullptr : &i->second;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  auto x = trim(authorization);
  constexpr std::string_view scheme = "bearer";
  if (x.size() <= scheme.size()
      || !std::isspace(static_cast<unsigned char>(x[scheme.size()])))
    return std::nullopt;
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(x[i])) != scheme[i])
      return std::nullopt;
  auto token = trim(x.substr(scheme.size()));
  if (token.empty())
    return std::nullopt;
  return token;
}

result<std::string> random_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    return error_info{errc::unavailable, "no random bytes for a token"};
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (auto b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

} // namespace podref::wire
