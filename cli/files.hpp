#pragma once
// The CLI's input and output: a path or "-" (stdin, stdout). An output file is written to a
// temporary file in the same directory and renamed over the path only on success, so a failed run
// (bad input, a full disk) leaves no partial file behind, and never half of an old one.
#include <fstream>
#include <iostream>
#include <string>

namespace wirezip::cli {

class Input {
 public:
  // Throws wirezip::Error naming the path and strerror when it cannot be opened.
  explicit Input(const std::string& path);
  std::istream& stream() { return path_ == "-" ? static_cast<std::istream&>(std::cin) : file_; }
  const std::string& name() const { return path_; }

 private:
  std::string path_;
  std::ifstream file_;
};

class Output {
 public:
  // "-" writes to stdout (where nothing can be taken back); a path gets a temporary file beside it.
  explicit Output(const std::string& path);
  ~Output();  // removes the temporary file unless commit() ran
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  std::ostream& stream() { return path_ == "-" ? static_cast<std::ostream&>(std::cout) : file_; }
  // Flushes, closes and renames the temporary file over the path; throws wirezip::Error on failure.
  void commit();

 private:
  std::string path_, temporary_;
  std::ofstream file_;
  bool committed_ = false;
};

}  // namespace wirezip::cli
