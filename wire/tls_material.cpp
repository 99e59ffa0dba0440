// Making and loading the HTTP front's CA, serving and client certificates
// with OpenSSL 3 (EVP_PKEY, X509, X509V3 extensions).
#include "podref/wire/tls_material.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace podref::wire {

namespace {

struct bio_free {
  void operator()(BIO* x) const noexcept {
    BIO_free_all(x);
  }
};
struct key_free {
  void operator()(EVP_PKEY* x) const noexcept {
    EVP_PKEY_free(x);
  }
};
struct x509_free {
  void operator()(X509* x) const noexcept {
    X509_free(x);
  }
};
using bio_ptr = std::unique_ptr<BIO, bio_free>;
using key_ptr = std::unique_ptr<EVP_PKEY, key_free>;
using cert_ptr = std::unique_ptr<X509, x509_free>;

error_info fail(const std::string& what) {
  return error_info{errc::invalid_argument, what};
}

/// The reason of OpenSSL's last error (its queue is cleared).
std::string openssl_reason() {
  auto code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

key_ptr make_key() {
  return key_ptr{EVP_EC_gen("P-256")};
}

std::string pem_of(const X509* cert) {
  bio_ptr bio{BIO_new(BIO_s_mem())};
  PEM_write_bio_X509(bio.get(), const_cast<X509*>(cert));
  char* data = nullptr;
  auto n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string pem_of(EVP_PKEY* key) {
  bio_ptr bio{BIO_new(BIO_s_mem())};
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                           nullptr);
  char* data = nullptr;
  auto n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

result<cert_ptr> load_cert(const std::string& path) {
  auto text = read_small_file(path);
  if (!text)
    return text.error();
  bio_ptr bio{BIO_new_mem_buf(text->data(), static_cast<int>(text->size()))};
  cert_ptr cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)};
  if (!cert)
    return fail(path + ": not a PEM certificate (" + openssl_reason() + ")");
  return cert;
}

result<key_ptr> load_key(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return fail(path + ": " + std::strerror(errno));
  if ((st.st_mode & 077) != 0)
    return fail(path + ": a private key readable by group or others (mode 0"
                + std::to_string((st.st_mode >> 6) & 7)
                + std::to_string((st.st_mode >> 3) & 7)
                + std::to_string(st.st_mode & 7) + "); chmod 600 it");
  auto text = read_small_file(path);
  if (!text)
    return text.error();
  bio_ptr bio{BIO_new_mem_buf(text->data(), static_cast<int>(text->size()))};
  key_ptr key{PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)};
  if (!key)
    return fail(path + ": not a PEM private key (" + openssl_reason() + ")");
  return key;
}

bool add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  auto* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr)
    return false;
  auto ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

/// The subject: CN plus one O per entry of `orgs`.
bool set_subject(X509* cert, const std::string& cn,
                 const std::vector<std::string>& orgs) {
  auto* name = X509_get_subject_name(cert);
  for (const auto& o : orgs)
    if (X509_NAME_add_entry_by_txt(
          name, "O", MBSTRING_UTF8,
          reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0)
        != 1)
      return false;
  return X509_NAME_add_entry_by_txt(
           name, "CN", MBSTRING_UTF8,
           reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0)
         == 1;
}

/// A certificate for `key` with a random 128-bit serial, valid from an hour
/// ago (clock skew) for `days`; self-signed when `issuer` is null.
struct cert_request {
  std::string cn;
  std::vector<std::string> orgs;
  int days = 365;
  bool ca = false;
  std::string ext_key_usage; // serverAuth / clientAuth
  std::string alt_names;     // subjectAltName value, or empty
};

result<cert_ptr> make_cert(const cert_request& req, EVP_PKEY* key,
                           X509* issuer, EVP_PKEY* issuer_key) {
  cert_ptr cert{X509_new()};
  unsigned char serial[16];
  if (!cert || RAND_bytes(serial, sizeof serial) != 1)
    return fail("cannot make a certificate: " + openssl_reason());
  serial[0] &= 0x7f; // positive
  auto* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  auto ok = bn != nullptr
            && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()))
                 != nullptr;
  BN_free(bn);
  ok = ok && X509_set_version(cert.get(), 2) == 1
       && X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr
       && X509_time_adj_ex(X509_getm_notAfter(cert.get()), req.days, 0,
                           nullptr)
            != nullptr
       && X509_set_pubkey(cert.get(), key) == 1
       && set_subject(cert.get(), req.cn, req.orgs);
  if (!ok)
    return fail("cannot make a certificate: " + openssl_reason());
  auto* signer = issuer != nullptr ? issuer : cert.get();
  auto* signer_key = issuer_key != nullptr ? issuer_key : key;
  ok = X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) == 1
       && add_ext(cert.get(), signer, NID_subject_key_identifier, "hash")
       && add_ext(cert.get(), signer, NID_authority_key_identifier,
                  "keyid:always");
  if (req.ca) {
    ok = ok
         && add_ext(cert.get(), signer, NID_basic_constraints,
                    "critical,CA:TRUE,pathlen:0")
         && add_ext(cert.get(), signer, NID_key_usage,
                    "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    ok = ok
         && add_ext(cert.get(), signer, NID_basic_constraints,
                    "critical,CA:FALSE")
         && add_ext(cert.get(), signer, NID_key_usage,
                    "critical,digitalSignature")
         && add_ext(cert.get(), signer, NID_ext_key_usage,
                    req.ext_key_usage.c_str());
  }
  if (ok && !req.alt_names.empty())
    ok = add_ext(cert.get(), signer, NID_subject_alt_name,
                 req.alt_names.c_str());
  if (!ok || X509_sign(cert.get(), signer_key, EVP_sha256()) == 0)
    return fail("cannot make a certificate: " + openssl_reason());
  return cert;
}

bool is_ip(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1
         || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

/// Whether `cert` is signed by `ca`, valid for another day, and names every
/// host.
bool serving_cert_fits(X509* cert, X509* ca,
                       const std::vector<std::string>& hosts) {
  auto* ca_key = X509_get0_pubkey(ca);
  if (ca_key == nullptr || X509_verify(cert, ca_key) != 1) {
    ERR_clear_error();
    return false;
  }
  auto tomorrow = std::time(nullptr) + 24 * 3600;
  if (X509_cmp_time(X509_get0_notAfter(cert), &tomorrow) <= 0)
    return false;
  for (const auto& h : hosts) {
    auto hit = is_ip(h) ? X509_check_ip_asc(cert, h.c_str(), 0)
                        : X509_check_host(cert, h.c_str(), h.size(), 0,
                                          nullptr);
    if (hit != 1)
      return false;
  }
  return true;
}

std::string alt_names_of(const std::vector<std::string>& hosts) {
  std::string out;
  for (const auto& h : hosts) {
    if (!out.empty())
      out += ',';
    out += (is_ip(h) ? "IP:" : "DNS:") + h;
  }
  return out;
}

result<void> write_pair(const X509* cert, EVP_PKEY* key,
                        const std::string& cert_path,
                        const std::string& key_path) {
  // The key first: a certificate on disk always has its key.
  if (auto ok = write_private_file(key_path, pem_of(key), 0600); !ok)
    return ok;
  return write_private_file(cert_path, pem_of(cert), 0644);
}

} // namespace

result<std::string> read_small_file(const std::string& path,
                                    std::size_t limit) {
  auto fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail("cannot read " + path + ": " + std::strerror(errno));
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      auto err = errno;
      ::close(fd);
      return fail("cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > limit) {
      ::close(fd);
      return fail(path + ": larger than " + std::to_string(limit) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

result<void> write_private_file(const std::string& path,
                                const std::string& data, unsigned mode) {
  auto tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  auto fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                   static_cast<mode_t>(mode));
  if (fd < 0)
    return fail("cannot write " + path + ": " + std::strerror(errno));
  auto ok = ::fchmod(fd, static_cast<mode_t>(mode)) == 0; // despite umask
  std::size_t done = 0;
  while (ok && done < data.size()) {
    auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    ok = n > 0;
    if (ok)
      done += static_cast<std::size_t>(n);
  }
  auto err = errno;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0)
    return {};
  err = errno != 0 ? errno : err;
  ::unlink(tmp.c_str());
  return fail("cannot write " + path + ": " + std::strerror(err));
}

result<tls_files> ensure_tls_dir(const std::string& dir,
                                 const std::vector<std::string>& hosts) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fail("cannot create " + dir + ": " + std::strerror(errno));
  tls_files files;
  files.ca_cert = dir + "/ca.crt";
  files.ca_key = dir + "/ca.key";
  files.cert = dir + "/server.crt";
  files.key = dir + "/server.key";
  auto has_cert = exists(files.ca_cert);
  auto has_key = exists(files.ca_key);
  if (has_cert != has_key)
    return fail(dir + ": has " + (has_cert ? "ca.crt" : "ca.key")
                + " without " + (has_cert ? "ca.key" : "ca.crt")
                + "; remove it to make a new CA");
  cert_ptr ca;
  key_ptr ca_key;
  if (has_cert) {
    auto c = load_cert(files.ca_cert);
    if (!c)
      return c.error();
    auto k = load_key(files.ca_key);
    if (!k)
      return k.error();
    ca = std::move(c).value();
    ca_key = std::move(k).value();
    if (X509_check_private_key(ca.get(), ca_key.get()) != 1) {
      ERR_clear_error();
      return fail(files.ca_key + ": not the key of " + files.ca_cert);
    }
  } else {
    ca_key = make_key();
    if (!ca_key)
      return fail("cannot make a key: " + openssl_reason());
    cert_request req;
    req.cn = "podref-ca";
    req.days = 3650;
    req.ca = true;
    auto c = make_cert(req, ca_key.get(), nullptr, nullptr);
    if (!c)
      return c.error();
    ca = std::move(c).value();
    if (auto ok = write_pair(ca.get(), ca_key.get(), files.ca_cert,
                             files.ca_key);
        !ok)
      return ok.error();
    files.made_ca = true;
  }
  if (exists(files.cert) && exists(files.key)) {
    auto c = load_cert(files.cert);
    auto k = load_key(files.key);
    if (c && k && serving_cert_fits(c->get(), ca.get(), hosts)
        && X509_check_private_key(c->get(), k->get()) == 1)
      return files;
    ERR_clear_error();
    if (!k && exists(files.key) && k.error().message.find("readable by")
                                     != std::string::npos)
      return k.error();
  }
  auto key = make_key();
  if (!key)
    return fail("cannot make a key: " + openssl_reason());
  cert_request req;
  req.cn = "podref-apiserver";
  req.days = 365;
  req.ext_key_usage = "serverAuth";
  req.alt_names = alt_names_of(hosts);
  auto cert = make_cert(req, key.get(), ca.get(), ca_key.get());
  if (!cert)
    return cert.error();
  if (auto ok = write_pair(cert->get(), key.get(), files.cert, files.key); !ok)
    return ok.error();
  return files;
}

result<void> issue_client_certificate(const std::string& ca_cert,
                                      const std::string& ca_key,
                                      const std::string& user,
                                      const std::vector<std::string>& groups,
                                      const std::string& cert_out,
                                      const std::string& key_out, int days) {
  auto ca = load_cert(ca_cert);
  if (!ca)
    return ca.error();
  auto signer = load_key(ca_key);
  if (!signer)
    return signer.error();
  auto key = make_key();
  if (!key)
    return fail("cannot make a key: " + openssl_reason());
  cert_request req;
  req.cn = user;
  req.orgs = groups;
  req.days = days;
  req.ext_key_usage = "clientAuth";
  auto cert = make_cert(req, key.get(), ca->get(), signer->get());
  if (!cert)
    return cert.error();
  return write_pair(cert->get(), key.get(), cert_out, key_out);
}

} // namespace podref::wire
