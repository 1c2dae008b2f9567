// The one place that finds and reads the link secret (--secret-file or WIREZIP_SECRET_FILE).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "wirezip/rdma/transport.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::rdma {
namespace {

constexpr std::size_t kMaxSecret = 4096;

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

}  // namespace

std::string secret_file_path(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* from_env = std::getenv("WIREZIP_SECRET_FILE");
  if (!from_env) return {};
  // Set but empty is a mistake (a script's unset variable), not a request to run open to anyone.
  if (*from_env == '\0')
    fail("WIREZIP_SECRET_FILE is set but empty: name a secret file, or unset it to run without authentication");
  return from_env;
}

std::string load_secret(const std::string& path) {
  // O_NONBLOCK: a FIFO's open() would wait for a writer; it is refused below as not a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) fail("secret file {}: {}", path, std::strerror(errno));
  const Fd closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) fail("secret file {}: {}", path, std::strerror(errno));
  if (!S_ISREG(info.st_mode)) fail("secret file {}: not a regular file", path);
  if (info.st_mode & 077)
    fail("secret file {}: readable or writable by group or others (mode {:04o}); chmod 600 it", path, info.st_mode & 07777);
  // One byte past a secret and its newline tells a file that is too long (read, not fstat: the
  // file may grow between the two), so it is refused whole, never cut to the limit.
  std::string secret(kMaxSecret + 2, '\0');
  std::size_t got = 0;
  while (got < secret.size()) {
    const ssize_t n = ::read(fd, secret.data() + got, secret.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("secret file {}: {}", path, std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  secret.resize(got);
  if (!secret.empty() && secret.back() == '\n') secret.pop_back();
  if (secret.size() > kMaxSecret)
    fail("secret file {}: {} bytes, over the {}-byte limit of a secret", path,
         std::max<std::uintmax_t>(info.st_size, got), kMaxSecret);
  if (secret.empty()) fail("secret file {}: empty; it must hold 1 to {} bytes", path, kMaxSecret);
  return secret;
}

}  // namespace wirezip::rdma
