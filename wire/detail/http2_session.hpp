// HTTP/2 for the HTTP front (http2_session.cpp): libnghttp2's server
// session driven by a connection's own reads and writes on the I/O
// threads. Each stream is one request, dispatched as HTTP/1.1 requests are;
// a watch is a long-lived stream of DATA frames. Private to wire/; includes
// Asio and Beast.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "podref/wire/authn.hpp"
#include "podref/wire/detail/http_core.hpp"

namespace podref::wire::detail {

using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

/// What an HTTP/2 client sends first (RFC 9113 3.4); on plain HTTP it
/// marks h2c with prior knowledge.
inline constexpr std::string_view http2_client_preface{
  "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24};

/// Serves HTTP/2 on `stream`, an open byte stream whose first bytes
/// `received` were already read (the client preface on plain HTTP; nothing
/// after a TLS handshake that chose h2); `certificate_user` is the user of
/// the client certificate verified in that handshake. Not yet registered
/// with `core`: the caller registers it (http_server::impl::replace) and
/// starts it. Defined for beast::tcp_stream and tls_stream.
template <class Stream>
std::shared_ptr<served_connection>
make_http2_connection(Stream stream, http_server::impl* core,
                      std::string received,
                      std::optional<user_info> certificate_user);

extern template std::shared_ptr<served_connection>
make_http2_connection<boost::beast::tcp_stream>(boost::beast::tcp_stream,
                                                http_server::impl*,
                                                std::string,
                                                std::optional<user_info>);

extern template std::shared_ptr<served_connection>
make_http2_connection<tls_stream>(tls_stream, http_server::impl*, std::string,
                                  std::optional<user_info>);

} // namespace podref::wire::detail
