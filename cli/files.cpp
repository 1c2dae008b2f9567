#include "files.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

#include "temporary_cleanup.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/file_kind.hpp"

namespace wirezip::cli {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

}  // namespace

Input::Input(const std::string& path) : path_(path) {
  if (path_ == "-") {
    // What stdin is, so that an output naming the same file (stdin redirected from it) is refused.
    struct stat info {};
    if (::fstat(STDIN_FILENO, &info) == 0 && S_ISREG(info.st_mode)) device_ = info.st_dev, inode_ = info.st_ino;
    buffer_.attach(STDIN_FILENO);
    return;
  }
  // O_NONBLOCK only so that open() of a FIFO returns at once; it is refused below, and a regular
  // file's reads ignore the flag.
  fd_ = Fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd_.get() < 0) fail("cannot open '{}': {}", path_, errno_text(errno));
  struct stat info {};
  if (::fstat(fd_.get(), &info) != 0) fail("cannot stat '{}': {}", path_, errno_text(errno));
  if (!S_ISREG(info.st_mode))
    fail("'{}' is {}, not a regular file (use - to read a stream from stdin)", path_, file_kind(info.st_mode));
  device_ = info.st_dev;
  inode_ = info.st_ino;
  buffer_.attach(fd_.get());
}

Output::Output(const std::string& path, bool force, const Input& input)
    : path_(path), shown_(path == "-" ? "stdout" : "'" + path + "'"), target_(path) {
  if (path_ == "-") {
    buffer_.attach(STDOUT_FILENO);
    return;
  }
  struct stat info {};
  if (::lstat(path_.c_str(), &info) != 0) {
    if (errno != ENOENT) fail("cannot stat '{}': {}", path_, errno_text(errno));
    open_temporary(target_, nullptr);
    return;
  }
  if (S_ISLNK(info.st_mode)) {
    if (!force) fail("'{}' is a symbolic link; use -f/--force to write to its target", path_);
    const std::unique_ptr<char, decltype(&::free)> real(::realpath(path_.c_str(), nullptr), &::free);
    if (!real) fail("cannot follow the symbolic link '{}': {}", path_, errno_text(errno));
    target_ = real.get();
    if (::stat(target_.c_str(), &info) != 0) fail("cannot stat '{}': {}", target_, errno_text(errno));
  }
  if (S_ISDIR(info.st_mode)) fail("'{}' is a directory", path_);
  if (!S_ISREG(info.st_mode)) {
    open_direct(target_, O_WRONLY);  // a device or a FIFO: the bytes go to it, it stays what it is
    return;
  }
  if (info.st_dev == input.device() && info.st_ino == input.inode())
    fail("'{}' is the input file; write the output elsewhere", path_);
  if (!force) fail("'{}' exists; use -f/--force to replace it", path_);
  if (info.st_nlink > 1) {
    open_direct(target_, O_WRONLY | O_TRUNC);  // a new file would break the other links
    return;
  }
  open_temporary(target_, &info);
}

void Output::open_direct(const std::string& target, int flags) {
  // O_NOFOLLOW: target_ is a path whose last part was checked not to be a symbolic link (or was resolved).
  fd_ = Fd(::open(target.c_str(), flags | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW));
  if (fd_.get() < 0) fail("cannot open '{}': {}", path_, errno_text(errno));
  buffer_.attach(fd_.get());
}

void Output::open_temporary(const std::string& target, const struct stat* replaced) {
  // The same directory as the target, so the final rename is atomic and never crosses file systems.
  const std::size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  std::string pattern = dir + "." + base + ".wirezip-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  {
    const BlockedSignals blocked;  // created and registered as one step: a signal cannot fall between
    fd_ = Fd(::mkostemp(name.data(), O_CLOEXEC));
    if (fd_.get() < 0) fail("cannot create a temporary file beside '{}': {}", path_, errno_text(errno));
    temporary_ = name.data();
    try {
      remove_on_signal(temporary_);
    } catch (...) {
      remove_temporary();
      throw;
    }
  }
  buffer_.attach(fd_.get());
  mode_t mode = 0;
  if (replaced != nullptr) {
    // Owner first: chown clears the set-user-ID and set-group-ID bits. A user who may not give the
    // file away keeps it (as cp does); those two bits are then dropped rather than granted to them.
    mode = replaced->st_mode & 07777;
    if (::fchown(fd_.get(), replaced->st_uid, replaced->st_gid) != 0) mode &= ~mode_t{S_ISUID | S_ISGID};
  } else {
    // mkstemp makes the file 0600; give it what a plain create would (0666 less the umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd_.get(), mode) != 0) {
    const int error = errno;
    remove_temporary();
    fail("cannot set the mode of '{}': {}", temporary_, errno_text(error));
  }
}

void Output::remove_temporary() noexcept {
  if (temporary_.empty()) return;
  fd_.close();
  const BlockedSignals blocked;
  ::unlink(temporary_.c_str());
  forget_on_signal();
}

Output::~Output() {
  if (!committed_) remove_temporary();
}

void Output::write(std::span<const std::byte> bytes) {
  stream_.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (const int error = buffer_.error(); error != 0)
    throw OutputError(fmt::format("writing {} failed: {}", shown_, errno_text(error)));
  if (!stream_) throw OutputError(fmt::format("writing {} failed", shown_));
}

void Output::commit() {
  stream_.flush();
  if (buffer_.error() != 0) fail("writing {} failed: {}", shown_, errno_text(buffer_.error()));
  if (!stream_) fail("writing {} failed", shown_);
  if (const int error = fd_.close(); error != 0) fail("closing {} failed: {}", shown_, errno_text(error));
  if (!temporary_.empty()) {
    const BlockedSignals blocked;  // the handler must not remove what the rename made the output
    if (std::rename(temporary_.c_str(), target_.c_str()) != 0)
      fail("cannot rename '{}' to '{}': {}", temporary_, target_, errno_text(errno));
    forget_on_signal();
  }
  committed_ = true;
}

void finish_stdout() {
  std::cout.flush();
  const bool stream_failed = !std::cout;
  int error = stream_failed ? errno : 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) error = errno;
  if (std::fclose(stdout) != 0 && error == 0) error = errno;
  if (stream_failed || error != 0) fail("writing stdout failed: {}", errno_text(error == 0 ? EIO : error));
}

}  // namespace wirezip::cli
