#include "bench/gnuplot.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <unistd.h>

namespace podref::bench {

namespace {

/// Whether `s` can stand between the quotes of the gnuplot command line.
bool is_plain_word(const std::string& s) {
  for (auto c : s)
    if (c == '"' || c == '\\' || c == '\n' || c == '\'' || c == '$'
        || c == '`')
      return false;
  return true;
}

} // namespace

std::string run_gnuplot(const std::string& script, const std::string& data,
                        const std::string& png, const std::string& variables) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "gnuplot not found: install gnuplot-nox (tools/setup.sh deps)";
  if (!is_plain_word(png) || !is_plain_word(variables))
    return "unsupported character in the plot file name";
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path()
             / ("podref-plot-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto dat = dir / "plot.dat";
  auto gp = dir / "plot.gp";
  {
    std::ofstream out{dat};
    out << data;
    std::ofstream out_script{gp};
    out_script << script;
  }
  auto cmd = fmt::format("gnuplot -e \"datafile='{}'; outfile='{}'; {}\" "
                         "'{}' 2>&1",
                         dat.string(), png, variables, gp.string());
  std::string output;
  auto* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr)
    return "cannot run gnuplot";
  char buf[256];
  while (std::fgets(buf, sizeof(buf), pipe))
    output += buf;
  auto status = ::pclose(pipe);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status == 0 ? std::string{} : "gnuplot failed: " + output;
}

} // namespace podref::bench
