#pragma once
// The CLI's input and output: a path or "-" (stdin, stdout), handled as zstd and lz4 handle theirs.
//
// Input: a named input must be a regular file; it is opened with O_NONBLOCK first, so a FIFO is
// refused with one line instead of waiting for a writer ("-" reads any stream).
//
// Output, by what the path is now:
//   "-"                      stdout, written straight (nothing can be taken back)
//   absent                   a temporary file beside it (mode 0666 less the umask), renamed over the
//                            path only on success: a failed run leaves nothing behind
//   device, FIFO, socket     written straight: /dev/null stays /dev/null
//   regular file             refused unless `force`; with it, a temporary file given the old file's
//                            mode and (as far as the user may) ownership, renamed over it on success;
//                            a file with other hard links is rewritten in place instead, so every link
//                            sees the new bytes (a failed run then leaves it partly written)
//   symbolic link            refused unless `force`; with it, the rules above apply to its target
//   directory                refused
// The temporary file is removed on failure and on SIGINT, SIGTERM and SIGHUP (temporary_cleanup.hpp).
#include <sys/stat.h>
#include <sys/types.h>

#include <istream>
#include <ostream>
#include <span>
#include <string>

#include "fd_streams.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::cli {

// A failed write or close of the output: its message names the output, not the input being read.
class OutputError : public Error {
 public:
  using Error::Error;
};

class Input {
 public:
  // Throws wirezip::Error naming the path: cannot open, or not a regular file.
  explicit Input(const std::string& path);
  std::istream& stream() { return stream_; }
  // The errno of a failed read, 0 if none failed (a failed read looks like the end of the file).
  int read_error() const { return buffer_.error(); }
  const std::string& name() const { return path_; }
  // The file's identity, so that an output can refuse to overwrite its own input; 0, 0 for stdin.
  dev_t device() const { return device_; }
  ino_t inode() const { return inode_; }

 private:
  std::string path_;
  Fd fd_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  FdReadBuf buffer_;
  std::istream stream_{&buffer_};
};

class Output {
 public:
  // Throws wirezip::Error with one line when the path is refused (see above) or cannot be opened.
  Output(const std::string& path, bool force, const Input& input);
  ~Output();  // removes the temporary file unless commit() ran
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  std::ostream& stream() { return stream_; }
  // Writes all of `bytes`; throws OutputError naming the path and the reason when a write fails.
  void write(std::span<const std::byte> bytes);
  // The errno of a failed write, 0 if none failed (the stream only says that one failed).
  int write_error() const { return buffer_.error(); }
  const std::string& shown() const { return shown_; }  // 'path' or stdout
  // Flushes and closes (every write and the close checked), then renames a temporary file over the
  // path; throws wirezip::Error naming the path and the reason on failure.
  void commit();

 private:
  void open_direct(const std::string& target, int flags);
  void open_temporary(const std::string& target, const struct stat* replaced);
  void remove_temporary() noexcept;

  std::string path_, shown_, target_, temporary_;  // shown_: how messages name it ('path' or stdout)
  Fd fd_;
  FdWriteBuf buffer_;
  std::ostream stream_{&buffer_};
  bool committed_ = false;
};

// Flushes std::cout and C stdout and closes stdout, so that a full disk or a closed pipe there
// (`inspect > /dev/full`) is an error; throws wirezip::Error.
void finish_stdout();

}  // namespace wirezip::cli
