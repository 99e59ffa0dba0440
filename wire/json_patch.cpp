#include "podref/wire/json_patch.hpp"

#include <string>
#include <utility>
#include <vector>

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

/// A JSON pointer split into its unescaped tokens; false when malformed.
bool parse_pointer(const std::string& text, std::vector<std::string>& out) {
  out.clear();
  if (text.empty())
    return true;
  if (text.front() != '/')
    return false;
  std::string token;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '/') {
      out.push_back(std::move(token));
      token.clear();
      continue;
    }
    if (text[i] == '~') {
      if (i + 1 >= text.size() || (text[i + 1] != '0' && text[i + 1] != '1'))
        return false;
      token.push_back(text[i + 1] == '0' ? '~' : '/');
      ++i;
      continue;
    }
    token.push_back(text[i]);
  }
  return true;
}

/// An array index token: digits without a leading zero (or "0").
bool array_index(const std::string& token, std::size_t size, bool allow_end,
                 std::size_t& index) {
  if (allow_end && token == "-") {
    index = size;
    return true;
  }
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0'))
    return false;
  std::size_t n = 0;
  for (auto c : token) {
    if (c < '0' || c > '9')
      return false;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  if (n > size || (!allow_end && n == size))
    return false;
  index = n;
  return true;
}

/// The value at `tokens` in `doc`, or nullptr when there is none.
json* resolve(json& doc, const std::vector<std::string>& tokens,
              std::size_t count) {
  json* at = &doc;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& token = tokens[i];
    if (at->is_object()) {
      auto it = at->find(token);
      if (it == at->end())
        return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      std::size_t index = 0;
      if (!array_index(token, at->size(), false, index))
        return nullptr;
      at = &(*at)[index];
    } else {
      return nullptr;
    }
  }
  return at;
}

/// Applies one operation; an error message, empty on success.
class operation_runner {
public:
  explicit operation_runner(json& doc) : doc_(doc) {
    // nop
  }

  std::string add(const std::vector<std::string>& path, json value) {
    if (path.empty()) {
      doc_ = std::move(value);
      return {};
    }
    auto* parent = resolve(doc_, path, path.size() - 1);
    if (!parent)
      return "missing path";
    const auto& last = path.back();
    if (parent->is_object()) {
      (*parent)[last] = std::move(value);
      return {};
    }
    if (parent->is_array()) {
      std::size_t index = 0;
      if (!array_index(last, parent->size(), true, index))
        return "index out of range";
      parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(index),
                     std::move(value));
      return {};
    }
    return "missing path";
  }

  std::string remove(const std::vector<std::string>& path, json* taken) {
    if (path.empty())
      return "cannot remove the whole document";
    auto* parent = resolve(doc_, path, path.size() - 1);
    if (!parent)
      return "missing path";
    const auto& last = path.back();
    if (parent->is_object()) {
      auto it = parent->find(last);
      if (it == parent->end())
        return "missing path";
      if (taken)
        *taken = std::move(*it);
      parent->erase(it);
      return {};
    }
    if (parent->is_array()) {
      std::size_t index = 0;
      if (!array_index(last, parent->size(), false, index))
        return "missing path";
      if (taken)
        *taken = std::move((*parent)[index]);
      parent->erase(parent->begin() + static_cast<std::ptrdiff_t>(index));
      return {};
    }
    return "missing path";
  }

  json* find(const std::vector<std::string>& path) {
    return resolve(doc_, path, path.size());
  }

private:
  json& doc_;
};

bool is_prefix(const std::vector<std::string>& prefix,
               const std::vector<std::string>& path) {
  if (prefix.size() > path.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (prefix[i] != path[i])
      return false;
  return true;
}

/// One operation of the patch; an error message, empty on success.
std::string apply_one(json& doc, const json& op) {
  if (!op.is_object())
    return "an operation must be an object";
  auto op_it = op.find("op");
  if (op_it == op.end() || !op_it->is_string())
    return "missing \"op\"";
  auto name = op_it->get<std::string>();
  auto path_it = op.find("path");
  if (path_it == op.end() || !path_it->is_string())
    return name + ": missing \"path\"";
  std::vector<std::string> path;
  if (!parse_pointer(path_it->get<std::string>(), path))
    return name + ": malformed path";
  auto value_it = op.find("value");
  bool has_value = value_it != op.end();
  std::vector<std::string> from;
  if (name == "move" || name == "copy") {
    auto from_it = op.find("from");
    if (from_it == op.end() || !from_it->is_string())
      return name + ": missing \"from\"";
    if (!parse_pointer(from_it->get<std::string>(), from))
      return name + ": malformed from";
  }
  operation_runner run{doc};
  std::string err;
  if (name == "add") {
    if (!has_value)
      return "add: missing \"value\"";
    err = run.add(path, *value_it);
  } else if (name == "remove") {
    err = run.remove(path, nullptr);
  } else if (name == "replace") {
    if (!has_value)
      return "replace: missing \"value\"";
    auto* at = run.find(path);
    if (!at)
      return "replace: missing path";
    *at = *value_it;
  } else if (name == "move") {
    if (from == path)
      return {};
    if (is_prefix(from, path))
      return "move: a value cannot move into itself";
    json taken;
    err = run.remove(from, &taken);
    if (err.empty())
      err = run.add(path, std::move(taken));
  } else if (name == "copy") {
    auto* at = run.find(from);
    if (!at)
      return "copy: missing from";
    err = run.add(path, json(*at));
  } else if (name == "test") {
    if (!has_value)
      return "test: missing \"value\"";
    auto* at = run.find(path);
    if (!at)
      return "test: missing path";
    if (*at != *value_it)
      return "test: failed";
  } else {
    return "unknown op \"" + name + "\"";
  }
  if (!err.empty())
    return name + ": " + err;
  return {};
}

} // namespace

patch_result json_patch(json target, const json& patch,
                        std::size_t max_operations) {
  using reason = patch_failure::reason;
  if (!patch.is_array())
    return patch_result::fail(reason::bad_request,
                              "a JSON patch must be an array of operations");
  if (patch.size() > max_operations)
    return patch_result::fail(
      reason::too_large, "The allowed maximum operations in a JSON patch is "
                           + std::to_string(max_operations) + ", got "
                           + std::to_string(patch.size()));
  for (std::size_t i = 0; i < patch.size(); ++i) {
    auto err = apply_one(target, patch[i]);
    if (!err.empty())
      return patch_result::fail(reason::invalid, "operation "
                                                   + std::to_string(i) + ": "
                                                   + err);
  }
  return patch_result::success(std::move(target));
}

} // namespace podref::wire
