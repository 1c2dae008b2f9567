#pragma once
// A file data set read by range: the bf16 stream of file: and safetensors: specs without holding it
// whole, so a benchmark can walk a checkpoint of any size through a bounded window.
//
// PATH may be a glob (safetensors:DIR/*.safetensors, file:DIR/part-*.bin): its files, in the sorted
// order glob(3) gives, form one stream, each file's selected tensors in file order. Only the headers
// are read when the reader opens (each checked by the one safetensors parser); tensor bytes are read
// with pread(2) into the caller's buffer, converted to bf16 on the way, so the page cache holds the
// file and this process only what it asked for.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/datasets/safetensors.hpp"

namespace wirezip::datasets {

// The window a benchmark reads a file data set through unless told: min(1 GiB, physical memory / 8).
std::uint64_t default_window_bytes();

// A piece of one selected tensor of a safetensors data set, as for_each_tensor hands it over.
struct StreamTensor {
  const std::string& path;          // the file that holds it
  const SafetensorsTensor& entry;   // name, dtype, shape: views valid during the call
  std::span<const std::byte> bf16;  // bytes [offset, offset + size) of the tensor, converted to bf16
  std::uint64_t offset = 0;         // where this piece starts in the tensor's bf16 bytes
  std::uint64_t bf16_bytes = 0;     // the whole tensor's bf16 bytes: the last piece ends there
};
// What a walk saw: files, the tensors it selected and all the tensors of its files.
struct TensorWalk {
  std::size_t files = 0, selected = 0, total = 0;
};
// Visits every tensor that safetensors:PATH[:tensors=REGEX] selects (PATH may be a glob), in the
// order DatasetReader streams them, holding one file's header and one piece at a time: a tensor
// comes in pieces of `piece_bytes` (the last one shorter; an empty tensor as one empty piece), so
// memory is bounded by the piece, not by the largest tensor. `piece_bytes` must be even and > 0.
// Throws wirezip::Error as DatasetReader does (naming the file), and what `visit` throws.
TensorWalk for_each_tensor(std::string_view spec, const std::function<void(const StreamTensor&)>& visit,
                           std::uint64_t piece_bytes = UINT64_MAX -
                                                       1);  // default: the largest even size, whole tensors

class DatasetReader {
 public:
  // file:PATH[:dtype=bf16|f32] or safetensors:PATH[:tensors=REGEX]; is_file_spec tells which specs
  // it takes. Throws wirezip::Error (one line, naming the file and the problem; not the spec).
  explicit DatasetReader(std::string_view spec);
  ~DatasetReader();
  DatasetReader(DatasetReader&&) noexcept;
  DatasetReader& operator=(DatasetReader&&) noexcept;

  static bool is_file_spec(std::string_view spec);

  const std::string& description() const { return description_; }
  std::uint64_t size() const { return size_; }  // bytes of the bf16 stream

  // Stream bytes [offset, offset + out.size()) into `out`, converted to bf16. Safe to call from
  // several threads at once. Throws wirezip::Error past the end or when a file changed under it.
  void read(std::uint64_t offset, std::span<std::byte> out) const;


 private:
  struct Files;
  struct Piece;
  std::unique_ptr<Files> files_;
  std::vector<Piece> pieces_;
  std::string description_;
  std::uint64_t size_ = 0;
};

}  // namespace wirezip::datasets
