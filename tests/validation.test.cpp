// Names as the API server validates them: DNS-1123 labels (namespaces) and
// subdomains (object names) at their edges, upstream's exact messages, the
// field-error wording and the checks of a pod before it registers.
#include "podref/messages/validation.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "podref/messages/quoted_part.hpp"
#include "support/pod_builders.hpp"

using namespace podref;

namespace {

using strings = std::vector<std::string>;

const std::string label_rule
  = "a lowercase RFC 1123 label must consist of lower case alphanumeric "
    "characters or '-', and must start and end with an alphanumeric "
    "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const std::string subdomain_rule
  = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const std::string too_long_label = "must be no more than 63 characters";
const std::string too_long_subdomain = "must be no more than 253 characters";

/// `n` characters: "a" repeated, so that the value is otherwise valid.
std::string of_length(std::size_t n) {
  return std::string(n, 'a');
}

} // namespace

// -- labels -------------------------------------------------------------------

TEST_CASE("DNS-1123 labels at their edges") {
  struct case_t {
    const char* desc;
    std::string value;
    strings errors;
  };
  const case_t cases[] = {
    {"one character", "a", {}},
    {"digits only", "123", {}},
    {"inner dashes", "my--name-1", {}},
    {"63 characters", of_length(63), {}},
    {"64 characters", of_length(64), {too_long_label}},
    {"64 characters with a bad end", of_length(63) + "-",
     {too_long_label, label_rule}},
    {"empty", "", {label_rule}},
    {"a leading dash", "-a", {label_rule}},
    {"a trailing dash", "a-", {label_rule}},
    {"uppercase", "Default", {label_rule}},
    {"an underscore", "kube_system", {label_rule}},
    {"a dot", "team.a", {"must not contain dots"}},
    {"dots and too long", of_length(60) + ".aaa", {too_long_label,
                                                   "must not contain dots"}},
    {"a leading dot", ".a", {label_rule}},
    {"a space", "a b", {label_rule}},
    {"unicode", "caf\xC3\xA9", {label_rule}},
    {"a NUL byte", std::string("a\0b", 3), {label_rule}},
  };
  for (const auto& c : cases) {
    SECTION(c.desc) {
      CHECK(dns1123_label_errors(c.value) == c.errors);
      CHECK(is_dns1123_label(c.value) == c.errors.empty());
    }
  }
}

// -- subdomains ---------------------------------------------------------------

TEST_CASE("DNS-1123 subdomains at their edges") {
  struct case_t {
    const char* desc;
    std::string value;
    strings errors;
  };
  // 253 characters made of dot-separated labels.
  std::string dotted;
  while (dotted.size() < 249)
    dotted += "abc.";
  dotted += "abc";
  const case_t cases[] = {
    {"one character", "a", {}},
    {"a dotted name", "web-1.example.com", {}},
    {"labels longer than 63 inside", of_length(100) + ".b", {}},
    {"253 characters", of_length(253), {}},
    {"253 dotted characters", dotted.substr(0, 253), {}},
    {"254 characters", of_length(254), {too_long_subdomain}},
    {"254 characters with a bad end", of_length(253) + ".",
     {too_long_subdomain, subdomain_rule}},
    {"empty", "", {subdomain_rule}},
    {"a leading dot", ".a", {subdomain_rule}},
    {"a trailing dot", "a.", {subdomain_rule}},
    {"two dots in a row", "a..b", {subdomain_rule}},
    {"a dash before a dot", "a-.b", {subdomain_rule}},
    {"a dash after a dot", "a.-b", {subdomain_rule}},
    {"a leading dash", "-a", {subdomain_rule}},
    {"a trailing dash", "a-", {subdomain_rule}},
    {"uppercase", "Web", {subdomain_rule}},
    {"an underscore", "web_1", {subdomain_rule}},
    {"a slash", "a/b", {subdomain_rule}},
    {"unicode", "\xE2\x9C\x93", {subdomain_rule}},
  };
  REQUIRE(dotted.substr(0, 253).size() == 253);
  for (const auto& c : cases) {
    SECTION(c.desc) {
      CHECK(dns1123_subdomain_errors(c.value) == c.errors);
      CHECK(is_dns1123_subdomain(c.value) == c.errors.empty());
    }
  }
}

TEST_CASE("every byte at every position of short names is classified "
          "as the regexes do") {
  // The checks classify bytes through a table and decide on the or-ed
  // classes: a plain byte-by-byte model must agree for any byte anywhere,
  // next to a dot, and at either end.
  auto alnum = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  auto label = [&](const std::string& v) {
    if (v.empty() || v.size() > 63 || !alnum(v.front()) || !alnum(v.back()))
      return false;
    for (unsigned char c : v)
      if (!alnum(c) && c != '-')
        return false;
    return true;
  };
  auto subdomain = [&](const std::string& v) {
    if (v.empty() || v.size() > 253 || !alnum(v.front()) || !alnum(v.back()))
      return false;
    for (std::size_t i = 0; i < v.size(); ++i) {
      unsigned char c = v[i];
      if (c == '.' ? !alnum(v[i - 1]) || !alnum(v[i + 1])
                   : !alnum(c) && c != '-')
        return false;
    }
    return true;
  };
  std::size_t valid = 0;
  for (std::size_t n = 1; n <= 19; ++n) {
    for (std::size_t at = 0; at < n; ++at) {
      for (int b = 0; b < 256; ++b) {
        auto v = std::string(n, 'a');
        v[at] = static_cast<char>(b);
        INFO("length " << n << ", byte " << b << " at " << at);
        REQUIRE(is_dns1123_label(v) == label(v));
        REQUIRE(is_dns1123_subdomain(v) == subdomain(v));
        // The same byte next to a dot, and a second one at the end.
        if (n >= 3 && at + 1 < n) {
          v[at + 1] = '.';
          REQUIRE(is_dns1123_subdomain(v) == subdomain(v));
          v[n - 1] = static_cast<char>(b);
          REQUIRE(is_dns1123_subdomain(v) == subdomain(v));
          REQUIRE(is_dns1123_label(v) == label(v));
        }
        valid += label(v) ? 1 : 0;
      }
    }
  }
  CHECK(valid > 1000);
}

// -- field errors -------------------------------------------------------------

TEST_CASE("field errors read as the API server words them") {
  CHECK(required_value() == "Required value");
  CHECK(required_value("name or generateName is required")
        == "Required value: name or generateName is required");
  CHECK(invalid_value("Web", {"x"}) == "Invalid value: \"Web\": x");
  CHECK(invalid_value("a", {"x", "y"}) == "Invalid value: \"a\": x; y");
  // Go's %q: quotes, backslashes and control characters are escaped, valid
  // UTF-8 stays, other bytes become \x escapes.
  CHECK(invalid_value("a\"b\\c\n\t\x01\x7f", {"x"})
        == "Invalid value: \"a\\\"b\\\\c\\n\\t\\x01\\x7f\": x");
  CHECK(invalid_value("caf\xC3\xA9 \xF0\x9F\x90\xB3", {"x"})
        == "Invalid value: \"caf\xC3\xA9 \xF0\x9F\x90\xB3\": x");
  CHECK(invalid_value("\xC3 \xED\xA0\x80", {"x"})
        == "Invalid value: \"\\xc3 \\xed\\xa0\\x80\": x");
}

TEST_CASE("an error quotes at most a prefix of a long value") {
  // Up to max_quoted_bytes the whole value, as upstream quotes it.
  std::string edge(max_quoted_bytes, 'd');
  CHECK(invalid_value(edge, {"bad"}) == "Invalid value: \"" + edge + "\": bad");
  // Past it, the prefix and the size: a 15 MiB value is no 15 MB message.
  std::string huge(15u << 20, 'd');
  auto text = invalid_value(huge, {"bad"});
  CHECK(text
        == "Invalid value: \"" + edge + "\"... (15728640 bytes): bad");
  // The cut never splits a UTF-8 sequence: 255 ASCII bytes, then U+00E9.
  std::string accented(max_quoted_bytes - 1, 'a');
  accented += "\xC3\xA9tail";
  CHECK(invalid_value(accented, {"bad"})
        == "Invalid value: \"" + std::string(max_quoted_bytes - 1, 'a')
             + "\"... (" + std::to_string(accented.size()) + " bytes): bad");
  CHECK(object_name_problem(std::string(300, 'n'))->size() < 400);
}

TEST_CASE("object names and namespaces: empty is required, else checked") {
  CHECK(object_name_problem("web") == std::nullopt);
  CHECK(object_name_problem("")
        == "Required value: name or generateName is required");
  CHECK(object_name_problem("Web")
        == "Invalid value: \"Web\": " + subdomain_rule);
  CHECK(namespace_problem("default") == std::nullopt);
  CHECK(namespace_problem("") == "Required value");
  CHECK(namespace_problem("a.b")
        == "Invalid value: \"a.b\": must not contain dots");
}

// -- pods ---------------------------------------------------------------------

TEST_CASE("a registrable pod has a namespace, a name, a uid and valid refs") {
  using podref::test::pod_with_secrets;
  auto problem = [](const pod& p) {
    auto x = find_pod_problem(p);
    return x ? x->path + ": " + x->problem : std::string{};
  };
  CHECK(problem(pod_with_secrets("ns", "web", "uid", {"a"}, {{{"b"}, {"c"}}}))
        == "");
  CHECK(problem(pod_with_secrets("", "web", "uid", {}, {}))
        == "metadata.namespace: Required value");
  CHECK(problem(pod_with_secrets("Ns", "web", "uid", {}, {}))
        == "metadata.namespace: Invalid value: \"Ns\": " + label_rule);
  CHECK(problem(pod_with_secrets("ns", "", "uid", {}, {}))
        == "metadata.name: Required value: name or generateName is required");
  CHECK(problem(pod_with_secrets("ns", "web_1", "uid", {}, {}))
        == "metadata.name: Invalid value: \"web_1\": " + subdomain_rule);
  CHECK(problem(pod_with_secrets("ns", "web", "", {}, {}))
        == "metadata.uid: Required value");
  // env secretKeyRef names must be subdomains; imagePullSecrets are free.
  CHECK(problem(pod_with_secrets("ns", "web", "uid", {"", "Any_Text"},
                                 {{{"Bad"}, {"ok"}}}))
        == "spec.containers[0].env[0].valueFrom.secretKeyRef.name: Invalid "
           "value: \"Bad\": "
             + subdomain_rule);
  CHECK(problem(pod_with_secrets("ns", "web", "uid", {}, {{{}, {""}}}))
        == "spec.containers[0].envFrom[0].secretRef.name: Required value");
}

TEST_CASE("envFrom names are checked as prefixes, as upstream does") {
  using podref::test::pod_with_config_maps;
  auto problem = [](const std::string& name) {
    auto p = pod_with_config_maps("ns", "web", "uid", {{{}, {name}}});
    auto x = find_reference_problem(p.spec);
    return x ? x->problem : std::string{};
  };
  // A trailing '-' is masked: the last two characters become "a".
  CHECK(problem("app-") == "");
  CHECK(problem("a-") == "");
  CHECK(problem("a.-") == ""); // masked to "aa", upstream's quirk
  CHECK(problem("-") == "Invalid value: \"-\": " + subdomain_rule);
  CHECK(problem("-a-") == "Invalid value: \"-a-\": " + subdomain_rule);
  CHECK(problem("App") == "Invalid value: \"App\": " + subdomain_rule);
}

TEST_CASE("the reference limit stops at the first reference past it") {
  using podref::test::pod_with_secrets;
  auto p = pod_with_secrets("ns", "web", "uid", {"a", "b"}, {{{"c"}, {"d"}}});
  CHECK_FALSE(find_reference_problem(p.spec, 4));
  auto x = find_reference_problem(p.spec, 3);
  REQUIRE(x);
  // Containers come before imagePullSecrets, env before envFrom.
  CHECK(x->path == "imagePullSecrets[1].name");
  CHECK(x->problem
        == "more Secret and ConfigMap references than the limit of 3 per pod");
  x = find_reference_problem(p.spec, 0);
  REQUIRE(x);
  CHECK(x->path == "containers[0].env[0].valueFrom.secretKeyRef.name");
}
