// What the kit's tests share: the action log as text. Public headers only,
// as an embedder's test would have them.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "podref/messages/object_status.hpp"
#include "podref/runtime/api_server.hpp"

namespace podref::kit_test {

using strings = std::vector<std::string>;

/// The API server's action log as "verb resource ns/name rv=\"...\"" lines.
inline strings action_log(api_server& api) {
  strings out;
  auto log = api.actions();
  if (!log)
    return {"no action log: " + log.error().message};
  for (const auto& a : *log)
    out.push_back(std::string{to_string(a.verb)} + " "
                  + (a.res == resource::secrets ? "secrets" : "configmaps")
                  + " " + a.ns + "/" + a.name + " rv=\"" + a.rv + "\"");
  return out;
}

/// How many references the registered pods hold on the object in all.
inline int reference_count(const object_status& st) {
  int n = 0;
  for (const auto& [uid, count] : st.references)
    n += count;
  return n;
}

} // namespace podref::kit_test

/// Failed checks name the phase ("idle-stopped"), not its number.
template <>
struct Catch::StringMaker<podref::object_phase> {
  static std::string convert(podref::object_phase x) {
    return podref::to_string(x);
  }
};
