#pragma once
// A strict reader for safetensors files (https://huggingface.co/docs/safetensors):
//   8 bytes   little-endian u64 N, the header length
//   N bytes   JSON object: name -> {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//             plus an optional "__metadata__" entry (string -> string), which is skipped
//   rest      the data section; offsets are relative to its start
// Every length and offset is checked against the file before a byte of data is read, so a
// malformed or hostile file gives a wirezip::Error, never a crash or an out-of-bounds read; tensor
// ranges must not overlap, so what the reader allocates is bounded by the file's size.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::datasets {

// One tensor's entry: a view into the header that holds it, valid while that header lives.
struct SafetensorsTensor {
  std::string_view name;
  std::string_view dtype;  // as in the file: "F32", "F16", "BF16", "I8", ...
  std::span<const std::uint64_t> shape;
  std::uint64_t begin = 0;  // byte offsets into the data section, end exclusive
  std::uint64_t end = 0;
};

// The entries are held once and compactly: every name in one character store, every dimension in
// one array, and a 64-byte view per tensor. A header of N tensors whose names take B bytes and
// shapes D dimensions holds 64 N + B + 8 D bytes (parsing briefly adds 48 N), whatever the JSON's
// spacing; B and D are below the header's length, itself at most kMaxSafetensorsHeader. A header
// moves (the views stay valid) but is never copied.
struct SafetensorsHeader {
  std::uint64_t data_start = 0;            // 8 + N: where the data section starts in the file
  std::vector<SafetensorsTensor> tensors;  // in file order (by data offset, then name)
  std::vector<char> names;                 // what the views' names point into
  std::vector<std::uint64_t> dimensions;   // what the views' shapes point into

  SafetensorsHeader() = default;
  SafetensorsHeader(SafetensorsHeader&&) = default;
  SafetensorsHeader& operator=(SafetensorsHeader&&) = default;
  SafetensorsHeader(const SafetensorsHeader&) = delete;
  SafetensorsHeader& operator=(const SafetensorsHeader&) = delete;
};

// The header format allows at most 100 MB; anything larger is not a safetensors file.
inline constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

// Parses and validates the header of a whole file's bytes: header length, JSON (nesting at most 16
// deep), each entry's fields and their JSON types, dtype (one the format defines), offsets inside
// the data section, byte length equal to dtype size x product(shape) (overflow-checked), no name
// twice and no two tensors sharing a byte. Throws wirezip::Error naming the tensor and field that
// are wrong (without the path); untrusted text in messages is shortened and escaped.
SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file);

// The same checks on a file read, not mapped (dataset_reader.hpp): safetensors_head_size checks the
// 8-byte length at the start of a file of `file_size` bytes and returns how many bytes the length
// and header take; parse_safetensors_header(head, file_size) then parses `head`, which holds them.
std::uint64_t safetensors_head_size(std::span<const std::byte> first, std::uint64_t file_size);
SafetensorsHeader parse_safetensors_header(std::span<const std::byte> head, std::uint64_t file_size);

struct SafetensorsSelection {
  std::vector<std::byte> bf16;        // the selected tensors converted and concatenated
  SafetensorsHeader header;           // the whole file's
  std::vector<std::size_t> selected;  // indices into header.tensors, in file order
};

// Converts the tensors whose name matches tensor_regex (RE2 syntax, found anywhere in the name, so
// "q_proj" matches "layers.0.q_proj.weight"; linear time in the name) to bf16, in file order. Only
// F32, F16 and BF16 can be selected. Throws wirezip::Error (without the path) on any problem,
// including a regex matching no tensor, or tensors holding no elements at all.
SafetensorsSelection select_safetensors_bf16(std::span<const std::byte> file, const std::string& tensor_regex);

// select_safetensors_bf16 on the mapped file; every error names the path.
SafetensorsSelection read_safetensors_bf16(const std::string& path, const std::string& tensor_regex);

}  // namespace wirezip::datasets
