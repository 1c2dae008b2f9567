#include "fd_streams.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace wirezip::cli {

Fd::~Fd() { close(); }

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

int Fd::release() noexcept { return std::exchange(fd_, -1); }

int Fd::close() noexcept {
  if (fd_ < 0) return 0;
  // Linux releases the descriptor even when close fails (EINTR included), so it is never retried.
  const int result = ::close(std::exchange(fd_, -1));
  return result == 0 ? 0 : errno;
}

std::streamsize FdReadBuf::read_some(char* out, std::size_t n) {
  while (true) {
    const ssize_t got = ::read(fd_, out, n);
    if (got >= 0) return got;
    if (errno == EINTR) continue;
    error_ = errno;
    return -1;
  }
}

FdReadBuf::int_type FdReadBuf::underflow() {
  const std::streamsize got = read_some(buffer_.data(), buffer_.size());
  if (got <= 0) return traits_type::eof();
  setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
  return traits_type::to_int_type(buffer_[0]);
}

std::streamsize FdReadBuf::xsgetn(char* out, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    if (gptr() < egptr()) {  // what is buffered first
      const std::streamsize step = std::min<std::streamsize>(n - done, egptr() - gptr());
      std::memcpy(out + done, gptr(), static_cast<std::size_t>(step));
      gbump(static_cast<int>(step));
      done += step;
      continue;
    }
    // Large reads go straight into the caller's memory; small ones refill the buffer.
    const std::size_t want = static_cast<std::size_t>(n - done);
    if (want >= buffer_.size()) {
      const std::streamsize got = read_some(out + done, want);
      if (got <= 0) break;
      done += got;
    } else if (traits_type::eq_int_type(underflow(), traits_type::eof())) {
      break;
    }
  }
  return done;
}

FdWriteBuf::FdWriteBuf() : buffer_(1 << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

bool FdWriteBuf::write_all(const char* data, std::size_t n) {
  if (error_ != 0) return false;
  while (n > 0) {
    const ssize_t wrote = ::write(fd_, data, n);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return false;
    }
    data += wrote;
    n -= static_cast<std::size_t>(wrote);
  }
  return true;
}

int FdWriteBuf::sync() {
  const bool ok = write_all(pbase(), static_cast<std::size_t>(pptr() - pbase()));
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return ok ? 0 : -1;
}

FdWriteBuf::int_type FdWriteBuf::overflow(int_type c) {
  if (sync() != 0) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

std::streamsize FdWriteBuf::xsputn(const char* data, std::streamsize n) {
  const auto size = static_cast<std::size_t>(n);
  if (size <= static_cast<std::size_t>(epptr() - pptr())) {
    std::memcpy(pptr(), data, size);
    pbump(static_cast<int>(n));
    return n;
  }
  // Does not fit: what is buffered, then the new bytes straight from the caller's memory.
  if (sync() != 0 || !write_all(data, size)) return 0;
  return n;
}

}  // namespace wirezip::cli
