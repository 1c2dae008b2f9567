#pragma once
// iostreams over a file descriptor the CLI opened itself: the descriptor is what lets it open with
// O_NONBLOCK, check what the path is, and fchmod/fchown a temporary file; the streams are what the
// container reader and writer take. A failed read(2) or write(2) keeps its errno for the message.
#include <cstddef>
#include <istream>
#include <ostream>
#include <streambuf>
#include <vector>

namespace wirezip::cli {

// Owns a descriptor (closes it unless release()d); -1 is empty.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() noexcept;
  // close(2) now; the errno of a failed close (NFS and some file systems report write errors only here), else 0.
  int close() noexcept;

 private:
  int fd_;
};

class FdReadBuf : public std::streambuf {
 public:
  FdReadBuf() : buffer_(1 << 16) {}
  void attach(int fd) { fd_ = fd; }  // a descriptor someone else owns
  int error() const { return error_; }  // errno of the failed read, 0 if none failed

 protected:
  int_type underflow() override;
  std::streamsize xsgetn(char* out, std::streamsize n) override;

 private:
  std::streamsize read_some(char* out, std::size_t n);
  int fd_ = -1, error_ = 0;
  std::vector<char> buffer_;
};

class FdWriteBuf : public std::streambuf {
 public:
  FdWriteBuf();
  void attach(int fd) { fd_ = fd; }  // a descriptor someone else owns
  int error() const { return error_; }  // errno of the failed write, 0 if none failed

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* data, std::streamsize n) override;
  int sync() override;

 private:
  bool write_all(const char* data, std::size_t n);
  int fd_ = -1, error_ = 0;
  std::vector<char> buffer_;
};

}  // namespace wirezip::cli
