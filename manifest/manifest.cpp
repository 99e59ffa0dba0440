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

#include "podref/manifest/detail/documents.hpp"
#include "podref/manifest/detail/error_list.hpp"
#include "podref/manifest/detail/json_fields.hpp"
#include "podref/manifest/detail/object_decoder.hpp"
#include "podref/manifest/detail/text_input.hpp"

namespace podref {

namespace {

/// A result with the one error `<file>: <message>`.
manifest_result failed(std::string_view file,
                       std::string_view message) noexcept {
  manifest_result result;
  detail::error_list errors{file, 1, result.errors};
  errors.add(message);
  errors.finish();
  return result;
}

/// Adds the error that ended decoding. Only formatting it can throw, for
/// lack of memory.
template <class... Ts>
void add_last(detail::error_list& errors, fmt::format_string<Ts...> format,
              const Ts&... xs) noexcept {
  try {
    errors.add(fmt::format(format, xs...));
  } catch (...) {
    errors.add("out of memory");
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
  detail::error_list errors{file_name, limits.max_errors, result.errors};
  std::size_t doc = 0; // the document being decoded, for object_limit_error
  try {
    if (text.size() > limits.max_bytes)
      throw detail::input_error(
        0, over_limit(fmt::format("{} bytes", text.size()), limits.max_bytes));
    detail::object_decoder decoder{limits, result.objects, errors};
    detail::document_handler on_document = [&](std::size_t index,
                                               nlohmann::json&& document) {
      doc = index;
      if (limits.keep_documents)
        result.documents.push_back(document.dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace));
      decoder.decode_document(index, document);
    };
    detail::for_each_document(text, limits, on_document);
  } catch (const detail::object_limit_error& e) {
    add_last(errors, "document {}: {}", doc, e.what());
  } catch (const detail::input_error& e) {
    if (e.line() == 0)
      errors.add(e.what());
    else
      add_last(errors, "line {}: {}", e.line(), e.what());
  } catch (const std::bad_alloc&) {
    errors.add("out of memory");
  } catch (const std::exception& e) {
    errors.add(e.what());
  } catch (...) {
    errors.add("unknown error");
  }
  errors.finish();
  return result;
}

manifest_result load_manifest_file(const std::string& path,
                                   const manifest_limits& limits) {
  const bool from_stdin = path == "-";
  const auto label = from_stdin ? std::string_view{"<stdin>"}
                                : std::string_view{path};
  try {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned{nullptr,
                                                          std::fclose};
    std::FILE* file = stdin;
    if (!from_stdin) {
      errno = 0;
      owned.reset(std::fopen(path.c_str(), "rb"));
      if (!owned)
        return failed(label, "cannot read: " + error_text(errno));
      file = owned.get();
    }
    std::string text;
    if (auto code = read_all(file, limits.max_bytes, text); code != 0)
      return failed(label, "cannot read: " + error_text(code));
    if (text.size() > limits.max_bytes) {
      // Reading stopped past the limit; a regular file knows its full size.
      struct stat info {};
      if (fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode))
        return failed(label,
                      over_limit(fmt::format("{} bytes", info.st_size),
                                 limits.max_bytes));
      return failed(label,
                    over_limit(fmt::format("more than {} bytes",
                                           limits.max_bytes),
                               limits.max_bytes));
    }
    return decode_manifest(text, label, limits);
  } catch (...) {
    // Only allocations can throw here; decode_manifest itself does not.
    return failed(label, "out of memory");
  }
}

} // namespace podref
