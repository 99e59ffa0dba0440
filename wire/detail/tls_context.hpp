// The HTTP front's TLS: the OpenSSL context a server's connections share,
// the ALPN choice, and the user of a verified client certificate. Private
// to wire/; includes Asio's SSL.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include <boost/asio/ssl/context.hpp>

#include "podref/messages/errors.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/http_server.hpp"

namespace podref::wire::detail {

/// The protocols the server speaks after the handshake, most preferred
/// first, in ALPN's wire form (a length byte before each name).
std::string_view server_alpn_protocols();

/// The server's choice among the client's ALPN offer `in`: the first of
/// server_alpn_protocols() the client offers. False when there is none
/// (the handshake goes on without ALPN, and the connection speaks
/// HTTP/1.1).
bool select_alpn(const unsigned char** out, unsigned char* out_len,
                 const unsigned char* in, unsigned int in_len);

/// Whether the handshake of `ssl` chose h2 by ALPN.
bool chose_http2(SSL* ssl);

/// TLS 1.2 or later with the serving certificate and key; when
/// `client_ca_file` is set, asks for (without requiring) a client
/// certificate, which OpenSSL verifies against it for client use: one that
/// fails fails the handshake.
result<std::unique_ptr<boost::asio::ssl::context>>
make_server_tls_context(const http_tls_options& options);

/// The user of the client certificate OpenSSL verified in the handshake of
/// `ssl` (CN, one group per O); nullopt without one.
std::optional<user_info> client_certificate_user(SSL* ssl);

} // namespace podref::wire::detail
