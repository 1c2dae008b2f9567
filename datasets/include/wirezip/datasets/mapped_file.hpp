#pragma once
// A read-only memory mapping of a whole file, owned RAII-style with its descriptor.
//
// Why mmap: model files are gigabytes and we usually want a few tensors of them; mapping lets the
// kernel page in only what is read, and spares a full copy before the bf16 conversion.
// Caveat: if another process truncates the file while it is mapped, reading the lost pages raises
// SIGBUS; that cannot be checked for in advance.
#include <cstddef>
#include <span>
#include <string>

namespace wirezip::datasets {

class MappedFile {
 public:
  // Throws wirezip::Error naming the path and strerror when the file cannot be opened, is not a
  // regular file, or cannot be mapped. An empty file maps to an empty span.
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  void release() noexcept;

  std::string path_;
  int fd_ = -1;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace wirezip::datasets
