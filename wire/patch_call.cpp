#include "podref/wire/detail/patch_call.hpp"

#include <chrono>
#include <memory>
#include <utility>

#include "podref/wire/codec.hpp"
#include "podref/wire/patch_request.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

void send_patch(caf::event_based_actor* self,
                const memory_api_server_actor& server, api_call call,
                caf::timespan timeout, std::function<void(http_reply)> done,
                int attempts_left) {
  auto shared = std::make_shared<api_call>(std::move(call));
  const auto& r = shared->r;
  self->request(server, timeout, peek_atom::value, r.res, r.ns, r.name)
    .then(
      [self, server, shared, timeout, done,
       attempts_left](const api_object& found) {
        const auto& r = shared->r;
        // The router let only the types patch_type_of knows through.
        auto type = *patch_type_of(shared->patch_content_type);
        auto patched = apply_patch(found, type, shared->patch_body, r.ns,
                                   r.name);
        if (patched.failure) {
          done(reply_of(*patched.failure));
          return;
        }
        bool own_precondition = patched.object.meta().resource_version
                                != found.meta().resource_version;
        self->request(server, timeout, replace_atom::value, patched.object)
          .then(
            [done](const api_object& stored) {
              done({200, "application/json", encode_object(stored)});
            },
            [self, server, shared, timeout, done, attempts_left,
             own_precondition](caf::error& err) {
              auto info = from_caf_error(err, error_info{errc::unavailable,
                                                         ""});
              if (info.code == errc::conflict && !own_precondition
                  && attempts_left > 1) {
                send_patch(self, server, std::move(*shared), timeout, done,
                           attempts_left - 1);
                return;
              }
              done(error_reply(err, shared->r));
            });
      },
      [shared, done](caf::error& err) { done(error_reply(err, shared->r)); });
}

} // namespace podref::wire::detail
