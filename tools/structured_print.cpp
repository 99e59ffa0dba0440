// kubectl-style -o json / -o yaml (structured_print.hpp).
#include "structured_print.hpp"

#include <ostream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace podref::cli {

namespace {

void emit(const nlohmann::json& x, YAML::Emitter& out) {
  if (x.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, v] : x.items())
    {
      out << YAML::Key << k << YAML::Value;
      emit(v, out);
    }
    out << YAML::EndMap;
  } else if (x.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& v : x)
      emit(v, out);
    out << YAML::EndSeq;
  } else if (x.is_string()) {
    out << x.get<std::string>();
  } else if (x.is_null()) {
    out << YAML::Null;
  } else {
    out << x.dump(); // numbers and booleans as JSON writes them
  }
}

} // namespace

void print_structured(std::string_view json, bool yaml, std::ostream& out) {
  auto doc = nlohmann::json::parse(json.begin(), json.end());
  if (!yaml) {
    out << doc.dump(4) << '\n';
    return;
  }
  YAML::Emitter em;
  em.SetIndent(2);
  em.SetSeqFormat(YAML::Block);
  emit(doc, em);
  out << em.c_str() << '\n';
}

} // namespace podref::cli
