// A fresh directory under /tmp for a test, removed with what is in it.
#pragma once

#include <cstdlib>
#include <string>

#include <unistd.h>

namespace podref::test {

struct temp_dir {
  std::string path;

  temp_dir() {
    char tmpl[] = "/tmp/podref-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }

  ~temp_dir() {
    std::string cmd = "rm -rf '" + path + "'";
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }

  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

} // namespace podref::test
