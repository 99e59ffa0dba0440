// The bridge's PATCH (write_calls.hpp): a merge, JSON or strategic patch of
// the stored object, or a server-side apply, which also creates.
#include "podref/wire/detail/write_calls.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "podref/wire/detail/api_bridge_kinds.hpp"
#include "podref/wire/detail/request_dispatch.hpp"
#include "podref/wire/managed_object.hpp"
#include "podref/wire/patch_request.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

namespace {

/// What the request makes of `found` (empty: the object is missing, which
/// only an apply turns into a create).
decoded_body patched(const api_call& call, patch_type type,
                     const apply_config& config, const api_object& found) {
  const auto& r = call.r;
  const auto& w = call.write;
  if (type == patch_type::apply)
    return applied_object(r.res, found, config.doc, w.manager, w.force,
                          write_time(), r.ns, r.name);
  auto result = apply_patch(found, type, call.patch_body, r.ns, r.name,
                            r.field_validation);
  if (result.failure)
    return result;
  auto tracked = tracked_write(found, result.object, w.manager, write_time());
  tracked.unknown_fields = std::move(result.unknown_fields);
  return tracked;
}

/// `done`, whose reply also carries a Warning for each of `unknown`
/// (fieldValidation Warn, the default).
reply_function warning_of_unknown(reply_function done,
                                  const std::vector<std::string>& unknown) {
  if (unknown.empty())
    return done;
  return [done = std::move(done), warnings = unknown_field_warnings(unknown)](
           http_reply rep) {
    rep.warnings.insert(rep.warnings.end(), warnings.begin(), warnings.end());
    done(std::move(rep));
  };
}

} // namespace

void send_patch(caf::event_based_actor* self,
                const memory_api_server_actor& server, api_call call,
                caf::timespan timeout, reply_function done,
                int attempts_left) {
  // The router let only the types patch_type_of knows through.
  auto type = *patch_type_of(call.patch_content_type);
  auto config = std::make_shared<apply_config>();
  if (type == patch_type::apply) {
    *config = parse_apply_config(call.r.res, call.patch_body);
    if (config->failure) {
      done(reply_of(*config->failure));
      return;
    }
  }
  auto shared = std::make_shared<const api_call>(std::move(call));
  // Another write raced this one: start over on the newer object.
  std::function<void()> retry_if_left;
  if (attempts_left > 1)
    retry_if_left = [self, server, shared, timeout, done, attempts_left] {
      send_patch(self, server, *shared, timeout, done, attempts_left - 1);
    };
  const auto& r = shared->r;
  self->request(server, timeout, peek_atom::value, r.res, r.ns, r.name)
    .then(
      [self, server, shared, type, config, timeout, done,
       retry_if_left](const api_object& found) {
        auto result = patched(*shared, type, *config, found);
        if (result.failure) {
          done(reply_of(*result.failure));
          return;
        }
        // A resourceVersion the patch set is a precondition of its own.
        std::optional<std::string> client_version;
        const auto& rv = result.object.meta().resource_version;
        if (rv != found.meta().resource_version)
          client_version = rv;
        store_replacing(self, server, *shared, found, result.object,
                        client_version, timeout,
                        warning_of_unknown(done, result.unknown_fields),
                        retry_if_left);
      },
      [self, server, shared, type, config, timeout, done,
       retry_if_left](caf::error& err) {
        auto info = from_caf_error(err, error_info{errc::unavailable, ""});
        if (type != patch_type::apply || info.code != errc::not_found) {
          done(error_reply(err, shared->r));
          return;
        }
        auto result = patched(*shared, type, *config, api_object{});
        if (result.failure) {
          done(reply_of(*result.failure));
          return;
        }
        check_namespace(
          self, server, *shared, timeout,
          [self, server, shared, result, timeout, done, retry_if_left] {
            store_created(self, server, *shared, result.object, timeout, done,
                          retry_if_left);
          },
          done);
      });
}

} // namespace podref::wire::detail
