#include "wirezip/datasets/safetensors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <tuple>

#include "name_filter.hpp"
#include "wirezip/datasets/bf16.hpp"
#include "wirezip/datasets/mapped_file.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::datasets {
namespace {

using nlohmann::json;

struct Dtype {
  std::string_view name;
  std::uint64_t size;
};
// The dtypes the safetensors format defines. A name outside this list makes the file malformed;
// a listed one that is not a float we convert is only an error when the selection includes it.
constexpr std::array<Dtype, 15> kDtypes{{{"BOOL", 1},
                                         {"U8", 1},
                                         {"I8", 1},
                                         {"F8_E5M2", 1},
                                         {"F8_E4M3", 1},
                                         {"I16", 2},
                                         {"U16", 2},
                                         {"F16", 2},
                                         {"BF16", 2},
                                         {"I32", 4},
                                         {"U32", 4},
                                         {"F32", 4},
                                         {"I64", 8},
                                         {"U64", 8},
                                         {"F64", 8}}};

std::optional<std::uint64_t> dtype_size(std::string_view name) {
  for (const Dtype& dtype : kDtypes)
    if (dtype.name == name) return dtype.size;
  return std::nullopt;
}

bool convertible(std::string_view dtype) { return dtype == "F32" || dtype == "F16" || dtype == "BF16"; }

std::uint64_t load_le64(const std::byte* p) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | static_cast<std::uint64_t>(p[i]);
  return value;
}

std::uint64_t unsigned_field(const json& value, const std::string& tensor, std::string_view field) {
  if (!value.is_number_unsigned())
    fail("tensor '{}': \"{}\" must hold non-negative integers, found {}", tensor, field, value.dump());
  return value.get<std::uint64_t>();
}

const json& field(const json& entry, const std::string& tensor, const char* name) {
  auto it = entry.find(name);
  if (it == entry.end()) fail("tensor '{}': missing \"{}\"", tensor, name);
  return *it;
}

SafetensorsTensor parse_entry(const std::string& name, const json& entry, std::uint64_t data_size) {
  if (!entry.is_object()) fail("tensor '{}': entry is not a JSON object", name);
  SafetensorsTensor tensor;
  tensor.name = name;

  const json& dtype = field(entry, name, "dtype");
  if (!dtype.is_string()) fail("tensor '{}': \"dtype\" must be a string, found {}", name, dtype.dump());
  tensor.dtype = dtype.get<std::string>();
  std::optional<std::uint64_t> width = dtype_size(tensor.dtype);
  if (!width) fail("tensor '{}': unknown dtype '{}'", name, tensor.dtype);

  const json& shape = field(entry, name, "shape");
  if (!shape.is_array()) fail("tensor '{}': \"shape\" must be an array, found {}", name, shape.dump());
  for (const json& dim : shape) tensor.shape.push_back(unsigned_field(dim, name, "shape"));

  const json& offsets = field(entry, name, "data_offsets");
  if (!offsets.is_array() || offsets.size() != 2)
    fail("tensor '{}': \"data_offsets\" must be [begin, end], found {}", name, offsets.dump());
  tensor.begin = unsigned_field(offsets[0], name, "data_offsets");
  tensor.end = unsigned_field(offsets[1], name, "data_offsets");
  if (tensor.end < tensor.begin)
    fail("tensor '{}': data_offsets [{}, {}] end before begin", name, tensor.begin, tensor.end);
  if (tensor.end > data_size)
    fail("tensor '{}': data_offsets [{}, {}] past the end of the {}-byte data section", name, tensor.begin, tensor.end,
         data_size);

  // dtype size x product(shape), refusing overflow; a zero dimension makes it 0 whatever the rest.
  std::uint64_t expected = *width;
  bool overflow = false;
  if (std::find(tensor.shape.begin(), tensor.shape.end(), 0) != tensor.shape.end()) {
    expected = 0;
  } else {
    for (std::uint64_t dim : tensor.shape) overflow = overflow || __builtin_mul_overflow(expected, dim, &expected);
  }
  if (overflow || expected != tensor.end - tensor.begin)
    fail("tensor '{}': data_offsets [{}, {}] hold {} bytes but dtype {} x shape {} needs {}", name, tensor.begin,
         tensor.end, tensor.end - tensor.begin, tensor.dtype, tensor.shape,
         overflow ? std::string("more than 2^64") : std::to_string(expected));
  return tensor;
}

}  // namespace

SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file) {
  if (file.size() < 8) fail("{} bytes is too short for a safetensors file (8-byte header length)", file.size());
  std::uint64_t length = load_le64(file.data());
  if (length > kMaxSafetensorsHeader)
    fail("header length {} is over the format's limit of {} bytes (not a safetensors file?)", length,
         kMaxSafetensorsHeader);
  if (length > file.size() - 8)
    fail("header length {} runs past the end of the file ({} bytes follow the length; truncated?)", length,
         file.size() - 8);

  const char* text = reinterpret_cast<const char*>(file.data() + 8);
  json header;
  try {
    header = json::parse(text, text + length);
  } catch (const json::exception& error) {
    fail("header is not valid JSON: {}", error.what());
  }
  if (!header.is_object()) fail("header is not a JSON object but {}", header.type_name());

  SafetensorsHeader result;
  result.data_start = 8 + length;
  std::uint64_t data_size = file.size() - result.data_start;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;  // free-form string map: nothing we need
    result.tensors.push_back(parse_entry(name, entry, data_size));
  }
  // File order; the name breaks ties between empty tensors so the order is always the same.
  std::sort(result.tensors.begin(), result.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  return result;
}

SafetensorsSelection read_safetensors_bf16(const std::string& path, const std::string& tensor_regex) {
  MappedFile file(path);
  SafetensorsHeader header;
  try {
    header = parse_safetensors_header(file.bytes());
  } catch (const Error& error) {
    fail("safetensors '{}': {}", path, error.what());
  }

  std::vector<std::string> names;
  for (const SafetensorsTensor& tensor : header.tensors) names.push_back(tensor.name);
  std::vector<const SafetensorsTensor*> selected;
  try {
    for (std::size_t i : detail::matching_names(names, tensor_regex)) selected.push_back(&header.tensors[i]);
  } catch (const Error& error) {
    fail("safetensors '{}': {}", path, error.what());
  }
  if (selected.empty()) {
    std::vector<std::string> some;
    for (std::size_t i = 0; i < header.tensors.size() && i < 5; ++i) some.push_back(header.tensors[i].name);
    fail("safetensors '{}': tensor regex '{}' matches none of its {} tensors (first: {})", path, tensor_regex,
         header.tensors.size(), fmt::join(some, ", "));
  }

  SafetensorsSelection result;
  result.tensors_in_file = header.tensors.size();
  std::uint64_t elements = 0;
  for (const SafetensorsTensor* tensor : selected) {
    if (!convertible(tensor->dtype))
      fail(
          "safetensors '{}': tensor '{}' has dtype {}, which is not supported (only F32, F16, BF16 convert to "
          "bf16); narrow the selection with tensors=REGEX",
          path, tensor->name, tensor->dtype);
    elements += (tensor->end - tensor->begin) / *dtype_size(tensor->dtype);
    result.names.push_back(tensor->name);
    result.dtypes.push_back(tensor->dtype);
  }
  if (elements == 0) fail("safetensors '{}': the selected tensors hold no elements", path);

  result.bf16.resize(elements * 2);
  std::span<const std::byte> data = file.bytes().subspan(header.data_start);
  std::size_t out = 0;
  for (const SafetensorsTensor* tensor : selected) {
    std::span<const std::byte> src = data.subspan(tensor->begin, tensor->end - tensor->begin);
    std::size_t count = src.size() / *dtype_size(tensor->dtype);
    std::span<std::byte> dst(result.bf16.data() + out, count * 2);
    if (tensor->dtype == "F32") {
      f32_le_to_bf16_le(src, dst);
    } else if (tensor->dtype == "F16") {
      f16_le_to_bf16_le(src, dst);
    } else if (!src.empty()) {
      std::memcpy(dst.data(), src.data(), src.size());  // BF16: already the bytes we want
    }
    out += count * 2;
  }
  return result;
}

}  // namespace wirezip::datasets
