#include "wirezip/datasets/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "wirezip/util/error.hpp"
#include "wirezip/util/file_kind.hpp"

namespace wirezip::datasets {
namespace {

// std::system_category().message is the thread-safe strerror.
std::string errno_text(int error) { return std::system_category().message(error); }

}  // namespace

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it is refused below.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) fail("cannot open '{}': {}", path_, errno_text(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    int error = errno;
    release();
    fail("cannot stat '{}': {}", path_, errno_text(error));
  }
  if (!S_ISREG(info.st_mode)) {
    release();
    fail("'{}' is {}, not a regular file", path_, file_kind(info.st_mode));
  }
  size_ = static_cast<std::size_t>(info.st_size);
  if (size_ == 0) return;  // mmap rejects length 0; an empty span says it all
  void* address = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (address == MAP_FAILED) {
    int error = errno;
    release();
    fail("cannot map '{}': {}", path_, errno_text(error));
  }
  data_ = static_cast<const std::byte*>(address);
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

}  // namespace wirezip::datasets
