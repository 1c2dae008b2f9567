// libFuzzer target: the safetensors reader on arbitrary file bytes, through the entry point
// read_safetensors_bf16 uses once it has mapped the file, and through the one DatasetReader uses on
// a file it reads (the length, then only the header's bytes), which must agree with it. It must convert or throw wirezip::Error,
// and what it accepts must keep the reader's promises: tensor ranges in file order, disjoint and
// inside the data section, and an output no larger than the file (its memory bound).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>

#include "wirezip/datasets/safetensors.hpp"
#include "wirezip/util/error.hpp"

namespace {

// The header parsed from its own bytes and the file's size; nullopt where it is refused.
std::optional<wirezip::datasets::SafetensorsHeader> parse_read(std::span<const std::byte> file) {
  try {
    const std::uint64_t head = wirezip::datasets::safetensors_head_size(file.first(std::min<std::size_t>(8, file.size())), file.size());
    return wirezip::datasets::parse_safetensors_header(file.first(head), file.size());
  } catch (const wirezip::Error&) {
    return std::nullopt;
  }
}

void check_header(std::span<const std::byte> file) {
  wirezip::datasets::SafetensorsHeader header;
  const auto read = parse_read(file);
  try {
    header = wirezip::datasets::parse_safetensors_header(file);
  } catch (const wirezip::Error&) {
    if (read) __builtin_trap();  // the two entry points must refuse the same files
    return;
  }
  if (!read || read->data_start != header.data_start || read->tensors.size() != header.tensors.size())
    __builtin_trap();
  std::uint64_t previous_end = 0;
  for (const auto& tensor : header.tensors) {
    if (tensor.begin < previous_end || tensor.end < tensor.begin || tensor.end > file.size() - header.data_start)
      __builtin_trap();
    previous_end = tensor.end;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  check_header(file);
  // Every tensor; then a pattern that sent std::regex into deep recursion on long names.
  for (const char* regex : {"", "^(a|b|_|[0-9])*$"}) {
    try {
      if (wirezip::datasets::select_safetensors_bf16(file, regex).bf16.size() > size) __builtin_trap();
    } catch (const wirezip::Error&) {
    }
  }
  return 0;
}
