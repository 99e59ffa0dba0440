// Who a request of the HTTP front comes from: a bearer token from a static
// token file (kube-apiserver's --token-auth-file format), or a client
// certificate the server's CA signed (user = CN, groups = O, checked by
// OpenSSL in the handshake; see detail/tls_context.hpp).
//
// Token file: one `token,user,uid[,"group1,group2,..."]` per line, CSV
// quoting (a field in double quotes may hold commas; "" is a quote); blank
// lines are skipped; further columns are ignored. A bad line is an error
// naming FILE:LINE and what is wrong; no error or log quotes a token.
//
// Tokens are held as SHA-256 digests, so a lookup's timing says nothing of
// the tokens held.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "podref/messages/errors.hpp"

namespace podref::wire {

/// An authenticated user.
struct user_info {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
};

/// The users of a token file, by token.
class token_table {
public:
  /// Parses the text of a token file; `origin` names it in errors.
  static result<token_table> parse(std::string_view text,
                                   const std::string& origin);

  /// Reads and parses `path`.
  static result<token_table> load(const std::string& path);

  /// The user of `token`, if any.
  const user_info* find(std::string_view token) const;

  /// The token of the file's first line (for a kubeconfig), empty when the
  /// file has none.
  const std::string& first_token() const noexcept {
    return first_;
  }

  std::size_t size() const noexcept {
    return users_.size();
  }

private:
  std::unordered_map<std::string, user_info> users_; // by SHA-256 of token
  std::string first_;
};

/// The token of an `Authorization: Bearer TOKEN` header value ("bearer" in
/// any case); nullopt for no header, another scheme, or an empty token.
std::optional<std::string_view> bearer_token(std::string_view authorization);

/// A fresh random token (32 bytes, hex).
result<std::string> random_token();

} // namespace podref::wire
