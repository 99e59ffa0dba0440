#include "podref/manifest/manifest.hpp"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <utility>

#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "podref/manifest/detail/json_documents.hpp"
#include "podref/manifest/detail/json_fields.hpp"
#include "podref/manifest/detail/object_decoder.hpp"
#include "podref/manifest/detail/text_check.hpp"
#include "podref/manifest/detail/text_input.hpp"
#include "podref/manifest/detail/yaml_json.hpp"

namespace podref {

namespace {

/// JSON iff the first non-blank character (after a UTF-8 byte order mark)
/// opens a map or a list.
bool is_json(std::string_view text) {
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  if (text.substr(0, bom.size()) == bom)
    text.remove_prefix(bom.size());
  auto pos = text.find_first_not_of(" \t\r\n");
  return pos != std::string_view::npos
         && (text[pos] == '{' || text[pos] == '[');
}

/// Replaces the result with `<file>: <message>` and no objects. Building the
/// message can only fail for lack of memory; the fallback text fits the
/// small-string buffer and needs no allocation.
void set_error(manifest_result& result, std::string_view file,
               std::string_view message) noexcept {
  std::vector<manifest_object>{}.swap(result.objects);
  try {
    result.error = fmt::format("{}: {}", file, message);
  } catch (...) {
    result.error = "out of memory";
  }
}

std::string over_limit(std::string_view what, std::size_t limit) {
  return fmt::format("input is {}, over the limit of {}", what, limit);
}

std::string error_text(int code) {
  return std::error_code{code, std::generic_category()}.message();
}

/// Reads `file` to its end, or until `out` holds more than `max_bytes`.
/// Returns the errno of a failed read, or 0.
int read_all(std::FILE* file, std::size_t max_bytes, std::string& out) {
  constexpr std::size_t chunk = 64 * 1024;
  for (;;) {
    auto old_size = out.size();
    out.resize(old_size + chunk);
    errno = 0;
    auto n = std::fread(out.data() + old_size, 1, chunk, file);
    out.resize(old_size + n);
    if (out.size() > max_bytes)
      return 0;
    if (n < chunk)
      return std::ferror(file) ? (errno != 0 ? errno : EIO) : 0;
  }
}

} // namespace

manifest_result decode_manifest(std::string_view text,
                                std::string_view file_name,
                                const manifest_limits& limits) {
  manifest_result result;
  std::size_t doc = 0; // the document being decoded, for field errors
  try {
    if (text.size() > limits.max_bytes)
      throw detail::input_error(
        0, over_limit(fmt::format("{} bytes", text.size()), limits.max_bytes));
    if (auto bad = detail::find_invalid_character(text))
      throw detail::input_error(detail::line_at(text, bad->offset),
                                bad->problem);
    detail::object_decoder decoder{limits, result.objects};
    detail::document_handler on_document = [&](std::size_t index,
                                               nlohmann::json&& document) {
      doc = index;
      decoder.decode_document(index, document);
    };
    if (is_json(text))
      detail::for_each_json_document(text, limits, on_document);
    else
      detail::for_each_yaml_document(text, limits, on_document);
  } catch (const detail::field_error& e) {
    set_error(result, file_name, fmt::format("document {}: {}", doc, e.what()));
  } catch (const detail::input_error& e) {
    if (e.line() == 0)
      set_error(result, file_name, e.what());
    else
      set_error(result, file_name,
                fmt::format("line {}: {}", e.line(), e.what()));
  } catch (const std::bad_alloc&) {
    set_error(result, file_name, "out of memory");
  } catch (const std::exception& e) {
    set_error(result, file_name, e.what());
  } catch (...) {
    set_error(result, file_name, "unknown error");
  }
  return result;
}

manifest_result load_manifest_file(const std::string& path,
                                   const manifest_limits& limits) {
  const bool from_stdin = path == "-";
  manifest_result result;
  std::string text;
  try {
    const std::string label = from_stdin ? std::string{"<stdin>"} : path;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned{nullptr,
                                                          std::fclose};
    std::FILE* file = stdin;
    if (!from_stdin) {
      errno = 0;
      owned.reset(std::fopen(path.c_str(), "rb"));
      if (!owned) {
        set_error(result, label, "cannot read: " + error_text(errno));
        return result;
      }
      file = owned.get();
    }
    if (auto code = read_all(file, limits.max_bytes, text); code != 0) {
      set_error(result, label, "cannot read: " + error_text(code));
      return result;
    }
    if (text.size() > limits.max_bytes) {
      // Reading stopped past the limit; a regular file knows its full size.
      struct stat info {};
      if (fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode))
        set_error(result, label,
                  over_limit(fmt::format("{} bytes", info.st_size),
                             limits.max_bytes));
      else
        set_error(result, label,
                  over_limit(fmt::format("more than {} bytes",
                                         limits.max_bytes),
                             limits.max_bytes));
      return result;
    }
    return decode_manifest(text, label, limits);
  } catch (...) {
    // Only allocations can throw here; decode_manifest itself does not.
    set_error(result,
              from_stdin ? std::string_view{"<stdin>"} : std::string_view{path},
              "out of memory");
    return result;
  }
}

} // namespace podref
