// The HTTP front's TLS material on disk: a CA of its own and a serving
// certificate it signs, made at first start and reused after, and client
// certificates the CA signs (user = CN, groups = O). ECDSA P-256 keys,
// SHA-256 signatures; private keys are written mode 0600, atomically.
//
// Every error names the file and what is wrong with it; none quotes a key.
#pragma once

#include <string>
#include <vector>

#include "podref/messages/errors.hpp"

namespace podref::wire {

/// The PEM files of one TLS directory.
struct tls_files {
  std::string ca_cert; // DIR/ca.crt
  std::string ca_key;  // DIR/ca.key
  std::string cert;    // DIR/server.crt, signed by the CA
  std::string key;     // DIR/server.key
  /// Whether this call made the CA (first start).
  bool made_ca = false;
};

/// Loads the material of `dir` (created 0700 if missing), making what is
/// missing: the CA when ca.crt and ca.key are both absent (one without the
/// other is an error), and the serving certificate when it is absent, not
/// signed by the CA, expires within a day, or does not name every one of
/// `hosts` (IP addresses or DNS names) as a subjectAltName. A key readable
/// by group or others is refused.
result<tls_files> ensure_tls_dir(const std::string& dir,
                                 const std::vector<std::string>& hosts);

/// Writes a client certificate for `user` in `groups` (CN and one O per
/// group, extended key usage clientAuth) signed by the CA in
/// `ca_cert`/`ca_key`, valid for `days`, to `cert_out` and its key to
/// `key_out` (0600).
result<void> issue_client_certificate(const std::string& ca_cert,
                                      const std::string& ca_key,
                                      const std::string& user,
                                      const std::vector<std::string>& groups,
                                      const std::string& cert_out,
                                      const std::string& key_out,
                                      int days = 365);

/// The whole text of `path`, at most `limit` bytes.
result<std::string> read_small_file(const std::string& path,
                                    std::size_t limit = 1u << 20);

/// Writes `data` to `path` with `mode` (through a temporary file and a
/// rename, so a reader never sees half of it).
result<void> write_private_file(const std::string& path,
                                const std::string& data, unsigned mode = 0600);

} // namespace podref::wire
