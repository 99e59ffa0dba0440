// The bridge's DELETE of one object and of a collection (write_calls.hpp).
#include "podref/wire/detail/write_calls.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "podref/wire/codec.hpp"
#include "podref/wire/detail/api_bridge_kinds.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"
#include "podref/wire/write_request.hpp"

namespace podref::wire::detail {

std::optional<api_status> failed_precondition(const api_call& call,
                                              const api_object& found) {
  const auto& w = call.write;
  const auto& meta = found.meta();
  if (w.uid_precondition && *w.uid_precondition != meta.uid)
    return precondition_failed_status(found.kind(), meta.name, true,
                                      *w.uid_precondition, meta.uid);
  if (w.rv_precondition && *w.rv_precondition != meta.resource_version)
    return precondition_failed_status(found.kind(), meta.name, false,
                                      *w.rv_precondition,
                                      meta.resource_version);
  return std::nullopt;
}

void send_delete(caf::event_based_actor* self,
                 const memory_api_server_actor& server, const api_call& call,
                 caf::timespan timeout, reply_function done) {
  auto shared = std::make_shared<const api_call>(call);
  const auto& r = shared->r;
  self->request(server, timeout, peek_atom::value, r.res, r.ns, r.name)
    .then(
      [self, server, shared, timeout, done](const api_object& found) {
        const auto& r = shared->r;
        if (auto failed = failed_precondition(*shared, found)) {
          done(reply_of(*failed));
          return;
        }
        // Some kinds answer the deleted object, the others a Status.
        auto answer = [found, done](resource res, const std::string& name) {
          if (delete_answers_object(res))
            done({200, "application/json", encode_object(found)});
          else
            done(reply_of(delete_success_status(res, name, found.meta().uid)));
        };
        if (shared->write.dry_run) {
          answer(r.res, r.name);
          return;
        }
        self
          ->request(server, timeout, caf::delete_atom::value, r.res, r.ns,
                    r.name)
          .then(
            [shared, answer](caf::ok_atom) {
              answer(shared->r.res, shared->r.name);
            },
            [shared, done](caf::error& err) {
              done(error_reply(err, shared->r));
            });
      },
      [shared, done](caf::error& err) { done(error_reply(err, shared->r)); });
}

void send_object_delete(caf::event_based_actor* self,
                        const memory_api_server_actor& server,
                        const api_call& call, caf::timespan timeout,
                        reply_function done) {
  if (call.r.res == resource::pods)
    send_pod_delete(self, server, call, timeout, std::move(done));
  else if (call.r.res == resource::namespaces)
    send_namespace_delete(self, server, call, timeout, std::move(done));
  else
    send_delete(self, server, call, timeout, std::move(done));
}

namespace {

/// Where the deletes of one collection report.
struct collection_delete {
  list_result listed;
  std::size_t pending = 0;
  std::optional<http_reply> failure;
};

} // namespace

void send_delete_collection(caf::event_based_actor* self,
                            const memory_api_server_actor& server,
                            const api_call& call, caf::timespan timeout,
                            reply_function done) {
  auto shared = std::make_shared<const api_call>(call);
  const auto& r = shared->r;
  auto name = r.field_name ? *r.field_name : std::string{};
  self
    ->request(server, timeout, list_at_atom::value, r.res, r.ns, name,
              std::string{}, false)
    .then(
      [self, server, shared, timeout, done](list_result& listed) {
        const auto& r = shared->r;
        auto state = std::make_shared<collection_delete>();
        state->listed.resource_version = listed.resource_version;
        for (auto& x : listed.items)
          if (selected(r, x))
            state->listed.items.push_back(std::move(x));
        auto finish = [state, shared, done] {
          if (state->failure)
            done(std::move(*state->failure));
          else
            done({200, "application/json",
                  encode_list(shared->r.res, state->listed.items,
                              state->listed.resource_version)});
        };
        state->pending = state->listed.items.size();
        if (state->pending == 0) {
          finish();
          return;
        }
        for (const auto& x : state->listed.items) {
          auto one = *shared;
          one.r.kind = route_kind::remove;
          one.r.name = x.meta().name;
          send_object_delete(self, server, one, timeout,
                             [state, finish](http_reply reply) {
                               // One that is gone already is not a failure.
                               if (reply.status >= 300 && reply.status != 404
                                   && !state->failure)
                                 state->failure = std::move(reply);
                               if (--state->pending == 0)
                                 finish();
                             });
        }
      },
      [shared, done](caf::error& err) { done(error_reply(err, shared->r)); });
}

} // namespace podref::wire::detail
