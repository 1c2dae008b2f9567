#include "files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "wirezip/util/error.hpp"

namespace wirezip::cli {

Input::Input(const std::string& path) : path_(path) {
  if (path_ == "-") return;
  file_.open(path_, std::ios::binary);
  if (!file_) fail("cannot open '{}': {}", path_, std::strerror(errno));
}

Output::Output(const std::string& path) : path_(path) {
  if (path_ == "-") return;
  // The same directory as the target, so the final rename is atomic and never crosses file systems.
  const std::size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::string pattern = (slash == std::string::npos ? "" : dir) + "." + base + ".wirezip-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) fail("cannot create a temporary file beside '{}': {}", path_, std::strerror(errno));
  temporary_ = name.data();
  // mkstemp makes the file 0600; give it what a plain create would (0666 less the umask).
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  file_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!file_) {
    std::remove(temporary_.c_str());
    fail("cannot open '{}': {}", temporary_, std::strerror(errno));
  }
}

Output::~Output() {
  if (!temporary_.empty() && !committed_) {
    file_.close();
    std::remove(temporary_.c_str());
  }
}

void Output::commit() {
  stream().flush();
  if (!stream()) fail("writing '{}' failed", path_);
  if (path_ == "-") return;
  file_.close();
  if (file_.fail()) fail("writing '{}' failed", path_);
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0)
    fail("cannot rename '{}' to '{}': {}", temporary_, path_, std::strerror(errno));
  committed_ = true;
}

}  // namespace wirezip::cli
