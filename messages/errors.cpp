#include "podref/messages/errors.hpp"

namespace podref {

std::string to_string(errc x) {
  switch (x) {
    case errc::not_registered:
      return "not_registered";
    case errc::sync_timeout:
      return "sync_timeout";
    case errc::not_found:
      return "not_found";
    case errc::expired:
      return "expired";
    case errc::unavailable:
      return "unavailable";
    case errc::shut_down:
      return "shut_down";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::unexpected_type:
      return "unexpected_type";
    case errc::already_exists:
      return "already_exists";
    case errc::conflict:
      return "conflict";
    case errc::forbidden:
      return "forbidden";
    case errc::invalid:
      return "invalid";
  }
  return "unknown";
}

error_info not_registered_error(const std::string& ns,
                                const std::string& name) {
  return {errc::not_registered,
          "object \"" + ns + "\"/\"" + name + "\" not registered"};
}

error_info sync_timeout_error(resource r) {
  return {errc::sync_timeout, "failed to sync " + std::string{singular_name(r)}
                                + " cache: timed out waiting for the condition"};
}

error_info watch_not_found_error(resource r, const std::string& name) {
  return {errc::not_found,
          std::string{singular_name(r)} + " \"" + name + "\" not found"};
}

error_info api_not_found_error(resource r, const std::string& name) {
  return {errc::not_found,
          std::string{qualified_name(r)} + " \"" + name + "\" not found"};
}

error_info api_conflict_error(resource r, const std::string& name) {
  return {errc::conflict,
          "Operation cannot be fulfilled on " + std::string{qualified_name(r)}
            + " \"" + name
            + "\": the object has been modified; please apply your changes to "
              "the latest version and try again"};
}

error_info shut_down_error() {
  return {errc::shut_down, "podref manager is shut down"};
}

error_info invalid_pod_error(const std::string& ns, const std::string& name,
                             const std::string& path,
                             const std::string& problem) {
  return {errc::invalid_argument, "pod \"" + ns + "\"/\"" + name + "\": " + path
                                    + ": " + problem};
}

} // namespace podref
