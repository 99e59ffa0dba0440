// Protobuf request bodies (wire/detail/protobuf_body.hpp, protobuf_reader.hpp):
// the bodies kubectl 1.32 sent in kube-apiserver-transcripts/kubectl/05 and
// 06, the reader's bounds, and every one-byte change and every cut of real
// bodies, which must each give an error or an object, never a crash.
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/protobuf_body.hpp"
#include "podref/wire/detail/protobuf_reader.hpp"

#include "support/protobuf_bytes.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::wire;
using json = nlohmann::json;
using test::pb_bytes;

namespace {

std::string from_hex(const char* hex) {
  std::string out;
  std::string digits;
  for (const char* p = hex; *p != '\0'; ++p)
    if (*p != ' ' && *p != '\n')
      digits += *p;
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2)
    out += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
  return out;
}

/// kubectl/05-create-secret-generic.json: `create secret generic kx
/// --from-literal=a=fake-a`, the request body.
const std::string secret_request = from_hex(
  "6b 38 73 00 0a 0c 0a 02 76 31 12 06 53 65 63 72 65 74 12 23 0a 12 0a 02"
  "6b 78 12 00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 0b 0a 01 61 12 06 66"
  "61 6b 65 2d 61 1a 00 1a 00 22 00");

/// The same transcript's response body: a stored Secret (uid,
/// resourceVersion, creationTimestamp, managedFields).
const std::string secret_response = from_hex(
  "6b 38 73 00 0a 0c 0a 02 76 31 12 06 53 65 63 72 65 74 12 bd 01 0a a5 01"
  "0a 02 6b 78 12 00 1a 03 6e 73 31 22 00 2a 24 61 33 39 30 65 39 61 61 2d"
  "38 36 39 62 2d 34 36 33 32 2d 38 34 61 38 2d 38 66 33 36 31 30 61 65 39"
  "34 66 32 32 03 33 38 36 38 00 42 08 08 84 f6 bd d8 06 10 00 8a 01 5e 0a"
  "0e 6b 75 62 65 63 74 6c 2d 63 72 65 61 74 65 12 06 55 70 64 61 74 65 1a"
  "02 76 31 22 08 08 84 f6 bd d8 06 10 00 32 08 46 69 65 6c 64 73 56 31 3a"
  "2a 0a 28 7b 22 66 3a 64 61 74 61 22 3a 7b 22 2e 22 3a 7b 7d 2c 22 66 3a"
  "61 22 3a 7b 7d 7d 2c 22 66 3a 74 79 70 65 22 3a 7b 7d 7d 42 00 12 0b 0a"
  "01 61 12 06 66 61 6b 65 2d 61 1a 06 4f 70 61 71 75 65 1a 00 22 00");

/// kubectl/06-create-configmap.json: `create configmap kc
/// --from-literal=a=b`, the request body.
const std::string config_map_request = from_hex(
  "6b 38 73 00 0a 0f 0a 02 76 31 12 09 43 6f 6e 66 69 67 4d 61 70 12 1c 0a"
  "12 0a 02 6b 63 12 00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 06 0a 01 61"
  "12 01 62 1a 00 22 00");

decoded_body post(resource res, const std::string& body) {
  return decode_request_body(res, "application/vnd.kubernetes.protobuf", body,
                             "ns1", "");
}

/// What is wrong with what one mutated body gave (empty: an object, or a
/// 400 or 422 Status, as it must be). One CHECK per body would cost more
/// than the decoding under a sanitizer.
std::string bad_outcome(resource res, const std::string& body) {
  auto converted = detail::json_from_protobuf(res, body);
  if (converted.error.empty()) {
    auto doc = json::parse(converted.json, nullptr, false);
    if (!doc.is_object() || doc["kind"] != std::string{kind_name(res)})
      return "not an object of its kind: " + converted.json;
  } else if (!converted.json.empty()) {
    return "an error with JSON: " + converted.error;
  }
  auto decoded = post(res, body);
  if (!decoded.failure)
    return decoded.object.kind() == res ? std::string{} : "another kind";
  auto code = decoded.failure->code;
  if ((code != 400 && code != 422)
      || json::parse(decoded.failure->body)["kind"] != "Status")
    return "the Status " + decoded.failure->body;
  return {};
}

} // namespace

TEST_CASE("kubectl 1.32's protobuf Secret decodes as its JSON would") {
  auto converted = detail::json_from_protobuf(resource::secrets,
                                              secret_request);
  REQUIRE(converted.error.empty());
  CHECK(json::parse(converted.json)
        == json::parse(R"({"apiVersion":"v1","kind":"Secret",
             "metadata":{"name":"kx","generateName":"","namespace":"",
               "uid":"","resourceVersion":""},
             "data":{"a":"ZmFrZS1h"},"type":""})"));
  auto decoded = post(resource::secrets, secret_request);
  REQUIRE_FALSE(decoded.failure);
  auto s = decoded.object.as_secret();
  REQUIRE(s);
  CHECK(s->metadata.name == "kx");
  CHECK(s->metadata.ns == "ns1");
  CHECK(s->data == std::map<std::string, std::string>{{"a", "fake-a"}});
  CHECK(s->type == "Opaque");
  // A stored Secret as the server answered it decodes too.
  auto stored = post(resource::secrets, secret_response);
  REQUIRE_FALSE(stored.failure);
  CHECK(stored.object.meta().uid == "a390e9aa-869b-4632-84a8-8f3610ae94f2");
}

TEST_CASE("kubectl 1.32's protobuf ConfigMap decodes, binaryData and "
          "immutable too") {
  auto decoded = post(resource::config_maps, config_map_request);
  REQUIRE_FALSE(decoded.failure);
  auto c = decoded.object.as_config_map();
  REQUIRE(c);
  CHECK(c->metadata.name == "kc");
  CHECK(c->data == std::map<std::string, std::string>{{"a", "b"}});
  std::string raw = pb_bytes(1, pb_bytes(1, "c2")
                                  + pb_bytes(11, pb_bytes(1, "app")
                                                   + pb_bytes(2, "x")))
                    + pb_bytes(3, pb_bytes(1, "bin")
                                  + pb_bytes(2, std::string{"\xff\x00", 2}))
                    + std::string{"\x20\x01", 2}; // immutable 4: true
  auto full = post(resource::config_maps, test::pb_envelope("ConfigMap", raw));
  REQUIRE_FALSE(full.failure);
  c = full.object.as_config_map();
  CHECK(c->metadata.labels.at("app") == "x");
  CHECK(c->binary_data.at("bin") == std::string{"\xff\x00", 2});
  CHECK(c->is_immutable());
}

TEST_CASE("a protobuf body that is not its kind or not well formed is a 400 "
          "naming the field") {
  struct case_t {
    const char* desc;
    resource res;
    std::string body;
    const char* message;
  };
  const case_t cases[] = {
    {"another kind", resource::secrets, config_map_request,
     "the protobuf body is not a v1 Secret: its type is v1/ConfigMap"},
    {"no magic", resource::secrets, "{}",
     "the protobuf body is not a v1 Secret: it does not start with the magic "
     "\"k8s\\x00\""},
    {"a cut body", resource::config_maps,
     config_map_request.substr(0, config_map_request.size() - 10),
     "the protobuf body is not a v1 ConfigMap: field 2 is truncated"},
    {"a label of the wrong wire type", resource::secrets,
     test::pb_envelope("Secret", pb_bytes(1, std::string{"\x58\x01", 2})),
     "the protobuf body is not a v1 Secret: metadata.labels: has wire type "
     "0, not 2"},
    {"data entries that are not messages", resource::secrets,
     test::pb_envelope("Secret", pb_bytes(2, "\x0a\x05")),
     "the protobuf body is not a v1 Secret: data: field 1 is truncated"},
    {"an encoded content", resource::config_maps,
     test::pb_envelope("ConfigMap", "") + pb_bytes(3, "gzip"),
     "the protobuf body is not a v1 ConfigMap: its content encoding gzip is "
     "not supported"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.desc) {
      auto decoded = post(c.res, c.body);
      REQUIRE(decoded.failure);
      CHECK(decoded.failure->code == 400);
      auto status = json::parse(decoded.failure->body);
      CHECK(status["reason"] == "BadRequest");
      CHECK(status["message"] == c.message);
    }
  }
  // Pods and Nodes take no protobuf: the 415 lists what they take.
  auto pod = decode_request_body(resource::pods,
                                 "application/vnd.kubernetes.protobuf",
                                 secret_request, "ns1", "");
  REQUIRE(pod.failure);
  CHECK(pod.failure->code == 415);
  // Secrets take it: their 415 lists it, as the real server's
  // (secrets/create-unsupported-media.json).
  auto text = decode_request_body(resource::secrets, "text/plain", "x", "ns1",
                                  "");
  REQUIRE(text.failure);
  CHECK(json::parse(text.failure->body)["message"]
        == "the body of the request was in an unknown format - accepted "
           "media types include: application/json, application/yaml, "
           "application/vnd.kubernetes.protobuf");
}

TEST_CASE("the protobuf reader checks every bound") {
  using detail::protobuf_reader;
  auto error_of = [](const std::string& in, std::size_t depth = 0) {
    protobuf_reader r{in, depth};
    while (r.next()) {
      // read to the end
    }
    return r.error();
  };
  CHECK(error_of(std::string(11, '\xff')) == "a field tag is not a valid varint");
  // A varint whose tenth byte sets more than bit 63.
  CHECK(error_of("\x08" + std::string(9, '\xff') + "\x02")
        == "field 1 is not a valid varint");
  CHECK(error_of("\x08" + std::string(9, '\xff') + "\x01").empty());
  CHECK(error_of(std::string{"\x00\x00", 2}) == "field number 0 is out of range");
  CHECK(error_of("\x0b") == "field 1 is a group (not used by Kubernetes)");
  CHECK(error_of("\x0e") == "field 1 has the invalid wire type 6");
  CHECK(error_of("\x09\x01\x02") == "field 1 is truncated");
  CHECK(error_of("\x0a\xff\xff\xff\xff\x0f") == "field 1 is truncated");
  CHECK(error_of("\x0a\x00", protobuf_reader::max_depth + 1)
        == "messages nest deeper than 16");
  CHECK(error_of(std::string(protobuf_reader::max_message_bytes + 1, '\0'))
        == "a message is larger than 3145728 bytes");
  // Fixed values read little-endian.
  const std::string fixed32{"\x0d\x01\x02\x03\x04", 5};
  protobuf_reader fixed{fixed32};
  auto f = fixed.next();
  REQUIRE(f);
  CHECK(f->number_value == 0x04030201u);
}

TEST_CASE("every one-byte change and every cut of a real protobuf body is "
          "an error or an object") {
  struct seed_t {
    resource res;
    const std::string* body;
  };
  // kubectl 1.32's `create namespace x` body, with a label.
  const auto namespace_request = test::pb_envelope(
    "Namespace", pb_bytes(1, pb_bytes(1, "x")
                               + pb_bytes(11, pb_bytes(1, "team")
                                                + pb_bytes(2, "a")))
                   + pb_bytes(2, pb_bytes(1, "kubernetes")));
  const seed_t seeds[] = {{resource::secrets, &secret_request},
                          {resource::secrets, &secret_response},
                          {resource::config_maps, &config_map_request},
                          {resource::namespaces, &namespace_request}};
  std::size_t objects = 0;
  std::size_t errors = 0;
  std::string first_bad;
  auto note = [&first_bad](const std::string& bad, const std::string& body) {
    if (!bad.empty() && first_bad.empty())
      first_bad = bad + " (body of " + std::to_string(body.size())
                  + " bytes)";
  };
  for (const auto& seed : seeds) {
    const auto& body = *seed.body;
    for (std::size_t cut = 0; cut <= body.size(); ++cut)
      note(bad_outcome(seed.res, body.substr(0, cut)), body);
    for (std::size_t i = 0; i < body.size(); ++i) {
      auto mutated = body;
      for (int v = 0; v < 256; ++v) {
        mutated[i] = static_cast<char>(v);
        auto converted = detail::json_from_protobuf(seed.res, mutated);
        ++(converted.error.empty() ? objects : errors);
      }
      // The whole decoding path (JSON checks, the manifest decoder) on a
      // few values per byte: zero and the sign bit flipped.
      auto b = static_cast<unsigned char>(body[i]);
      for (unsigned v : {0u, b ^ 0x80u}) {
        mutated[i] = static_cast<char>(v & 0xff);
        note(bad_outcome(seed.res, mutated), mutated);
      }
    }
  }
  INFO(first_bad);
  CHECK(first_bad.empty());
  // Both outcomes occur: the changes reach the decoders' checks.
  CHECK(objects > 0);
  CHECK(errors > 0);
}
