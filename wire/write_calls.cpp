// The bridge's create and update, and the stores every write shares
// (write_calls.hpp).
#include "podref/wire/detail/write_calls.hpp"

#include <chrono>
#include <memory>
#include <utility>

#include "podref/messages/object_validation.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/api_bridge_kinds.hpp"
#include "podref/wire/managed_object.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/write_request.hpp"

namespace podref::wire::detail {

namespace {

http_reply object_answer(const api_object& obj, int status) {
  return {status, "application/json", encode_object(obj)};
}

/// `next` as a replace stores it over `found`: uid and creationTimestamp
/// are the stored object's, and so is the version it replaces.
api_object over(const api_object& found, const api_object& next) {
  auto meta = next.meta();
  meta.uid = found.meta().uid;
  meta.creation_timestamp = found.meta().creation_timestamp;
  meta.resource_version = found.meta().resource_version;
  return with_metadata(next, std::move(meta));
}

bool is_error(const caf::error& err, errc code) {
  return from_caf_error(err, error_info{errc::unavailable, ""}).code == code;
}

/// `obj` named from its generateName when it has no name (a Namespace's
/// name label follows), or the 422 for a generateName that cannot prefix a
/// name.
decoded_body named(const api_object& obj) {
  if (!obj.meta().name.empty())
    return {obj, std::nullopt};
  const auto& prefix = obj.meta().server->generate_name;
  if (auto problem = generate_name_problem(obj.kind(), prefix))
    return {{}, invalid_status(obj.kind(), "", *problem)};
  auto meta = obj.meta();
  meta.name = generated_name(prefix);
  if (obj.kind() == resource::namespaces)
    meta.labels["kubernetes.io/metadata.name"] = meta.name;
  return {with_metadata(obj, std::move(meta)), std::nullopt};
}

void create_attempt(caf::event_based_actor* self,
                    const memory_api_server_actor& server,
                    std::shared_ptr<const api_call> call, caf::timespan timeout,
                    reply_function done, int attempts_left) {
  auto obj = named(call->object);
  if (obj.failure) {
    done(reply_of(*obj.failure));
    return;
  }
  auto tracked = tracked_write({}, obj.object, call->write.manager,
                               write_time());
  if (tracked.failure) {
    done(reply_of(*tracked.failure));
    return;
  }
  std::function<void()> on_exists;
  if (call->object.meta().name.empty() && attempts_left > 1)
    on_exists = [self, server, call, timeout, done, attempts_left] {
      create_attempt(self, server, call, timeout, done, attempts_left - 1);
    };
  store_created(self, server, *call, tracked.object, timeout, done,
                std::move(on_exists));
}

} // namespace

std::string write_time() {
  return format_timestamp(std::chrono::system_clock::now());
}

void store_replacing(caf::event_based_actor* self,
                     const memory_api_server_actor& server,
                     const api_call& call, const api_object& found,
                     const api_object& next,
                     const std::optional<std::string>& client_version,
                     caf::timespan timeout, reply_function done,
                     std::function<void()> retry) {
  const auto& r = call.r;
  if (client_version && *client_version != found.meta().resource_version) {
    done(reply_of(status_of(api_conflict_error(r.res, r.name), r.res,
                            r.name)));
    return;
  }
  auto stored = over(found, next);
  // A write that changes nothing is not stored (nor is a dry run).
  if (stored == found) {
    done(object_answer(stored, 200));
    return;
  }
  if (call.write.dry_run) {
    // The update rules the API server actor's replace checks (immutable
    // objects, a Secret's type, a Pod's spec): a dry run is refused as the
    // write would be.
    auto problems = find_update_problems(found, stored);
    if (!problems.empty())
      done(reply_of(invalid_status(r.res, r.name, problems)));
    else
      done(object_answer(stored, 200));
    return;
  }
  bool pinned = client_version.has_value();
  self->request(server, timeout, replace_atom::value, stored)
    .then([done](const api_object& obj) { done(object_answer(obj, 200)); },
          [r, done, retry, pinned](caf::error& err) {
            if (!pinned && is_error(err, errc::conflict) && retry) {
              retry();
              return;
            }
            done(error_reply(err, r));
          });
}

void store_created(caf::event_based_actor* self,
                   const memory_api_server_actor& server, const api_call& call,
                   const api_object& obj, caf::timespan timeout,
                   reply_function done, std::function<void()> on_exists) {
  auto fresh = stamp_new(obj, std::chrono::system_clock::now());
  auto res = obj.kind();
  auto name = obj.meta().name;
  auto exists = [res, name, done, on_exists] {
    if (on_exists) {
      on_exists();
      return;
    }
    done(reply_of(status_of(
      {errc::already_exists,
       std::string{qualified_name(res)} + " \"" + name + "\" already exists"},
      res, name)));
  };
  if (call.write.dry_run) {
    // Validated as a create; the answer has no resourceVersion.
    self->request(server, timeout, peek_atom::value, res, obj.meta().ns, name)
      .then([exists](const api_object&) { exists(); },
            [res, name, fresh, done](caf::error& err) {
              if (is_error(err, errc::not_found))
                done(object_answer(fresh, 201));
              else
                done(error_reply(err, res, name));
            });
    return;
  }
  self->request(server, timeout, create_atom::value, fresh)
    .then([done](const api_object& stored) { done(object_answer(stored, 201)); },
          [res, name, done, exists](caf::error& err) {
            if (is_error(err, errc::already_exists))
              exists();
            else
              done(error_reply(err, res, name));
          });
}

void send_create(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, reply_function done) {
  auto shared = std::make_shared<const api_call>(std::move(call));
  check_namespace(
    self, server, *shared, timeout,
    [self, server, shared, timeout, done] {
      create_attempt(self, server, shared, timeout, done,
                     max_generated_name_attempts);
    },
    done);
}

void send_update(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, reply_function done,
                 int attempts_left) {
  auto shared = std::make_shared<const api_call>(std::move(call));
  const auto& r = shared->r;
  self->request(server, timeout, peek_atom::value, r.res, r.ns, r.name)
    .then(
      [self, server, shared, timeout, done,
       attempts_left](const api_object& found) {
        const auto& next = shared->object;
        auto tracked = tracked_write(found, next, shared->write.manager,
                                     write_time());
        if (tracked.failure) {
          done(reply_of(*tracked.failure));
          return;
        }
        std::optional<std::string> client_version;
        if (!next.meta().resource_version.empty())
          client_version = next.meta().resource_version;
        std::function<void()> retry;
        if (attempts_left > 1)
          retry = [self, server, shared, timeout, done, attempts_left] {
            send_update(self, server, *shared, timeout, done,
                        attempts_left - 1);
          };
        store_replacing(self, server, *shared, found, tracked.object,
                        client_version, timeout, done, std::move(retry));
      },
      [shared, done](caf::error& err) { done(error_reply(err, shared->r)); });
}

} // namespace podref::wire::detail
