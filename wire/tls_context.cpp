// The HTTP front's OpenSSL server context (see detail/tls_context.hpp).
#include "podref/wire/detail/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace podref::wire::detail {

namespace ssl = boost::asio::ssl;

namespace {

error_info tls_error(const std::string& what, const std::string& file,
                     const boost::system::error_code& ec) {
  ERR_clear_error();
  return error_info{errc::invalid_argument,
                    what + " " + file + ": " + ec.message()};
}

int on_alpn(SSL*, const unsigned char** out, unsigned char* out_len,
            const unsigned char* in, unsigned int in_len, void*) {
  return select_alpn(out, out_len, in, in_len) ? SSL_TLSEXT_ERR_OK
                                               : SSL_TLSEXT_ERR_NOACK;
}

std::string entry_text(X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  auto n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (n < 0)
    return {};
  std::string out(reinterpret_cast<const char*>(utf8),
                  static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

} // namespace

std::string_view server_alpn_protocols() {
  static constexpr char protocols[] = "\x02h2\x08http/1.1";
  return {protocols, sizeof protocols - 1};
}

bool select_alpn(const unsigned char** out, unsigned char* out_len,
                 const unsigned char* in, unsigned int in_len) {
  auto ours = server_alpn_protocols();
  unsigned char* chosen = nullptr;
  auto rc = SSL_select_next_proto(
    &chosen, out_len, reinterpret_cast<const unsigned char*>(ours.data()),
    static_cast<unsigned int>(ours.size()), in, in_len);
  if (rc != OPENSSL_NPN_NEGOTIATED)
    return false;
  *out = chosen;
  return true;
}

bool chose_http2(SSL* ssl) {
  const unsigned char* name = nullptr;
  unsigned int size = 0;
  SSL_get0_alpn_selected(ssl, &name, &size);
  return std::string_view{reinterpret_cast<const char*>(name), size} == "h2";
}

result<std::unique_ptr<ssl::context>>
make_server_tls_context(const http_tls_options& options) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                     | ssl::context::no_sslv3 | ssl::context::no_tlsv1
                     | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                   ec);
  auto* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ctx->use_certificate_chain_file(options.cert_file, ec);
  if (ec)
    return tls_error("cannot use the certificate", options.cert_file, ec);
  ctx->use_private_key_file(options.key_file, ssl::context::pem, ec);
  if (ec)
    return tls_error("cannot use the key", options.key_file, ec);
  if (SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return error_info{errc::invalid_argument,
                      options.key_file + ": not the key of "
                        + options.cert_file};
  }
  SSL_CTX_set_alpn_select_cb(native, on_alpn, nullptr);
  // Resumed sessions keep their client certificate; OpenSSL refuses to
  // resume a verified session without a context id.
  static constexpr unsigned char session_id[] = "podref-apiserver";
  SSL_CTX_set_session_id_context(native, session_id, sizeof session_id - 1);
  if (!options.client_ca_file.empty()) {
    ctx->load_verify_file(options.client_ca_file, ec);
    if (ec)
      return tls_error("cannot use the client CA", options.client_ca_file, ec);
    auto* names = SSL_load_client_CA_file(options.client_ca_file.c_str());
    if (names == nullptr) {
      ERR_clear_error();
      return error_info{errc::invalid_argument,
                        options.client_ca_file + ": no CA certificate"};
    }
    SSL_CTX_set_client_CA_list(native, names);
    SSL_CTX_set_purpose(native, X509_PURPOSE_SSL_CLIENT);
    SSL_CTX_set_verify_depth(native, 4);
    ctx->set_verify_mode(ssl::verify_peer, ec);
  }
  return ctx;
}

std::optional<user_info> client_certificate_user(SSL* ssl) {
  auto* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr || SSL_get_verify_result(ssl) != X509_V_OK)
    return std::nullopt;
  auto* name = X509_get_subject_name(cert);
  user_info user;
  for (int i = -1;
       (i = X509_NAME_get_index_by_NID(name, NID_commonName, i)) >= 0;)
    user.name = entry_text(X509_NAME_get_entry(name, i)); // the last CN
  if (user.name.empty())
    return std::nullopt;
  for (int i = -1;
       (i = X509_NAME_get_index_by_NID(name, NID_organizationName, i)) >= 0;)
    user.groups.push_back(entry_text(X509_NAME_get_entry(name, i)));
  return user;
}

} // namespace podref::wire::detail
