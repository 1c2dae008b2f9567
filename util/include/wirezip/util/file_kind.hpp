#pragma once
// What a path that is not a regular file is, for the one line that refuses it ("'x' is a FIFO, not a
// regular file"): readers of named files refuse FIFOs, devices and sockets rather than block on them.
#include <sys/stat.h>

namespace wirezip {

inline const char* file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace wirezip
