// Error values of the podref engine, and result<T>: a value or an error.
//
// Nothing throws across actors or out of the facade: failures travel as
// values. Messages reproduce the kubelet's greppable texts exactly, e.g.
// `object "ns"/"name" not registered` or
// `failed to sync secret cache: timed out waiting for the condition`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/field_problem.hpp"

namespace podref {

/// Error codes; values are stable (they travel inside caf::error).
enum class errc : std::uint8_t {
  /// The object is not referenced by any registered pod.
  not_registered = 1,
  /// The first sync did not complete within the read's wait limit.
  sync_timeout,
  /// The object does not exist (404).
  not_found,
  /// A watch or list resourceVersion is too old (410 Gone).
  expired,
  /// The API server failed the call (e.g. injected fault, 5xx).
  unavailable,
  /// The engine has shut down.
  shut_down,
  /// A caller passed something invalid (empty name, bad strategy, ...).
  invalid_argument,
  /// The object held has the wrong type for the typed manager.
  unexpected_type,
  /// A create found the object already there (409 AlreadyExists).
  already_exists,
  /// An update's resourceVersion precondition failed (409 Conflict).
  conflict,
  /// The credentials do not allow the call (403 Forbidden), e.g. a
  /// namespace-wide list under a kubelet's node authorizer.
  forbidden,
  /// A write the API server's validation refuses (422 Invalid); the
  /// problems are error_info::causes.
  invalid,
};

/// "not_registered", "sync_timeout", ...
std::string to_string(errc x);

/// An error code and its full message.
struct error_info {
  errc code = errc::unavailable;
  std::string message;
  /// errc::invalid: every field the validation refused, in its order.
  std::vector<field_problem> causes = {};
};

inline bool operator==(const error_info& x, const error_info& y) {
  return x.code == y.code && x.message == y.message && x.causes == y.causes;
}

// -- upstream's texts -----------------------------------------------------------

/// `object "<ns>"/"<name>" not registered`
error_info not_registered_error(const std::string& ns, const std::string& name);

/// `failed to sync <secret|configmap> cache: timed out waiting for the
/// condition`
error_info sync_timeout_error(resource r);

/// Watch-store NotFound, singular resource: `secret "<name>" not found`.
error_info watch_not_found_error(resource r, const std::string& name);

/// API-server NotFound, plural resource (group-qualified beyond the core
/// group): `secrets "<name>" not found`, `deployments.apps "<name>" ...`.
error_info api_not_found_error(resource r, const std::string& name);

/// API-server Conflict of a stale resourceVersion: `Operation cannot be
/// fulfilled on secrets "<name>": the object has been modified; please apply
/// your changes to the latest version and try again`.
error_info api_conflict_error(resource r, const std::string& name);

// -- podref's own texts -----------------------------------------------------------

/// errc::shut_down: `podref manager is shut down`.
error_info shut_down_error();

/// errc::invalid_argument for a pod that cannot be registered:
/// `pod "<ns>"/"<name>": <path>: <problem>`, e.g.
/// `pod "shop"/"web": spec.volumes[2].secret.secretName: Required value`.
error_info invalid_pod_error(const std::string& ns, const std::string& name,
                             const std::string& path,
                             const std::string& problem);

/// A value of type T or an error_info.
template <class T>
class result {
public:
  result(T value) : data_(std::move(value)) { // NOLINT(implicit)
    // nop
  }

  result(error_info err) : data_(std::move(err)) { // NOLINT(implicit)
    // nop
  }

  explicit operator bool() const noexcept {
    return data_.index() == 0;
  }

  /// Requires a value.
  const T& value() const& {
    return std::get<0>(data_);
  }

  /// Requires a value.
  T&& value() && {
    return std::get<0>(std::move(data_));
  }

  const T& operator*() const& {
    return value();
  }

  const T* operator->() const {
    return &value();
  }

  /// Requires an error.
  const error_info& error() const {
    return std::get<1>(data_);
  }

private:
  std::variant<T, error_info> data_;
};

/// Success or an error_info: the outcome of a call that returns no value.
/// Not [[nodiscard]]: callers that cannot fail in their setting (valid pods,
/// a live manager) may drop it.
template <>
class result<void> {
public:
  /// Success.
  result() noexcept = default;

  result(error_info err) : err_(std::move(err)) { // NOLINT(implicit)
    // nop
  }

  explicit operator bool() const noexcept {
    return !err_;
  }

  /// Requires an error.
  const error_info& error() const {
    return *err_;
  }

private:
  std::optional<error_info> err_;
};

} // namespace podref
