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

// A string from the file as it may appear in a message: at most 64 bytes, anything outside
// printable ASCII escaped, so a hostile name can neither flood the log nor drive the terminal.
std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 64;
  std::string out;
  for (char c : text.substr(0, kShown)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '\\')
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  if (text.size() > kShown) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

// The header is parsed by events (nlohmann's SAX interface), not into a JSON tree: each value is
// checked against what its place in the header must hold the moment it is read, so no tree of
// untrusted JSON is ever built, printed or walked recursively, memory stays a small multiple of
// what is kept (the tensor entries), and an error can name the tensor, the field and the JSON type
// it found. Values the reader does not use (__metadata__, unknown fields) are skipped, with their
// nesting bounded by kMaxHeaderDepth.
constexpr std::size_t kMaxHeaderDepth = 16;

// What a value must be, given where it stands.
enum class Slot { header, entry, dtype, shape, dimension, offsets, offset, skipped };

class HeaderReader {
 public:
  using json = nlohmann::json;
  explicit HeaderReader(std::uint64_t data_size) : data_size_(data_size) {}
  std::vector<SafetensorsTensor> take_tensors() { return std::move(tensors_); }

  // The SAX interface: every call either accepts the value or throws wirezip::Error.
  bool null() { return scalar("null"); }
  bool boolean(bool value) { return scalar(value ? "true" : "false"); }
  bool number_integer(json::number_integer_t value) { return scalar(std::to_string(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return scalar(fmt::format("{}", value)); }
  bool binary(json::binary_t&) { return scalar("binary"); }  // JSON text has none; here for the interface
  bool number_unsigned(json::number_unsigned_t value);
  bool string(json::string_t& value);
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool key(json::string_t& key);
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) {
    // what() quotes the last token read, which can be megabytes of the file: keep the start.
    fail("header is not valid JSON at byte {}: {}", position, shown_error(error.what()));
  }

 private:
  static std::string shown_error(std::string_view what) {
    constexpr std::size_t kShown = 200;
    return what.size() <= kShown ? std::string(what) : fmt::format("{}...", what.substr(0, kShown));
  }
  Slot next_slot() const;
  bool scalar(std::string_view found);
  bool open(bool object);
  bool close();
  [[noreturn]] void wrong(Slot slot, std::string_view found) const;
  void finish_entry();

  std::uint64_t data_size_;
  std::vector<Slot> open_;    // the containers the parser is inside, outermost first
  std::string key_;           // the last key read in the header object (a tensor name) ...
  std::string field_;         // ... and in a tensor entry
  SafetensorsTensor tensor_;  // the entry being read
  bool has_dtype_ = false, has_shape_ = false;
  std::size_t offsets_read_ = 0;  // how many of [begin, end]
  std::vector<SafetensorsTensor> tensors_;
};

Slot HeaderReader::next_slot() const {
  if (open_.empty()) return Slot::header;
  switch (open_.back()) {
    case Slot::header:
      return key_ == "__metadata__" ? Slot::skipped : Slot::entry;
    case Slot::entry:
      return field_ == "dtype"          ? Slot::dtype
             : field_ == "shape"        ? Slot::shape
             : field_ == "data_offsets" ? Slot::offsets
                                        : Slot::skipped;  // a field this reader does not use
    case Slot::shape:
      return Slot::dimension;
    case Slot::offsets:
      return Slot::offset;
    default:
      return Slot::skipped;
  }
}

void HeaderReader::wrong(Slot slot, std::string_view found) const {
  const std::string tensor = shown(tensor_.name);
  switch (slot) {
    case Slot::header:
      fail("header is not a JSON object but {}", found);
    case Slot::entry:
      fail("tensor '{}': entry is not a JSON object but {}", shown(key_), found);
    case Slot::dtype:
      fail("tensor '{}': \"dtype\" must be a string, found {}", tensor, found);
    case Slot::shape:
      fail("tensor '{}': \"shape\" must be an array, found {}", tensor, found);
    case Slot::dimension:
      fail("tensor '{}': \"shape\" must hold non-negative integers, found {}", tensor, found);
    case Slot::offsets:
      fail("tensor '{}': \"data_offsets\" must be [begin, end], found {}", tensor, found);
    case Slot::offset:
      fail("tensor '{}': \"data_offsets\" must hold non-negative integers, found {}", tensor, found);
    case Slot::skipped:
      break;
  }
  fail("internal error: value {} accepted nowhere", found);
}

bool HeaderReader::scalar(std::string_view found) {
  if (Slot slot = next_slot(); slot != Slot::skipped) wrong(slot, found);
  return true;
}

bool HeaderReader::number_unsigned(json::number_unsigned_t value) {
  Slot slot = next_slot();
  if (slot == Slot::dimension) {
    tensor_.shape.push_back(value);
  } else if (slot == Slot::offset) {
    if (offsets_read_ == 2) wrong(Slot::offsets, "more than 2 numbers");
    (offsets_read_++ == 0 ? tensor_.begin : tensor_.end) = value;
  } else if (slot != Slot::skipped) {
    wrong(slot, std::to_string(value));
  }
  return true;
}

bool HeaderReader::string(json::string_t& value) {
  Slot slot = next_slot();
  if (slot == Slot::dtype) {
    if (!dtype_size(value)) fail("tensor '{}': unknown dtype '{}'", shown(tensor_.name), shown(value));
    tensor_.dtype = std::move(value);
    has_dtype_ = true;
  } else if (slot != Slot::skipped) {
    wrong(slot, "string");
  }
  return true;
}

bool HeaderReader::open(bool object) {
  Slot slot = next_slot();
  const bool fits = slot == Slot::skipped || (object ? slot == Slot::header || slot == Slot::entry
                                                     : slot == Slot::shape || slot == Slot::offsets);
  if (!fits) wrong(slot, object ? "object" : "array");
  if (open_.size() == kMaxHeaderDepth) {
    std::string where = open_.size() > 1 && open_[1] == Slot::entry
                            ? fmt::format("tensor '{}': \"{}\"", shown(tensor_.name), shown(field_))
                            : fmt::format("\"{}\"", shown(key_));
    fail("{} nests deeper than {} levels (the header needs 3)", where, kMaxHeaderDepth);
  }
  if (slot == Slot::entry) {
    tensor_ = SafetensorsTensor{};
    tensor_.name = key_;
    has_dtype_ = has_shape_ = false;
    offsets_read_ = 0;
    field_.clear();
  }
  if (slot == Slot::shape) has_shape_ = true;
  open_.push_back(slot);
  return true;
}

bool HeaderReader::key(json::string_t& key) {
  if (open_.back() == Slot::header) {
    key_ = std::move(key);
  } else if (open_.back() == Slot::entry) {
    // JSON allows a key twice and parsers disagree on which wins: take neither.
    if ((key == "dtype" && has_dtype_) || (key == "shape" && has_shape_) || (key == "data_offsets" && offsets_read_))
      fail("tensor '{}': \"{}\" appears twice", shown(tensor_.name), key);
    field_ = std::move(key);
  }
  return true;
}

bool HeaderReader::close() {
  const Slot closed = open_.back();
  open_.pop_back();
  if (closed == Slot::entry) finish_entry();
  if (closed == Slot::offsets && offsets_read_ != 2)
    wrong(Slot::offsets, fmt::format("{} number{}", offsets_read_, offsets_read_ == 1 ? "" : "s"));
  return true;
}

void HeaderReader::finish_entry() {
  SafetensorsTensor& tensor = tensor_;
  const std::string name = shown(tensor.name);
  if (!has_dtype_) fail("tensor '{}': missing \"dtype\"", name);
  if (!has_shape_) fail("tensor '{}': missing \"shape\"", name);
  if (offsets_read_ == 0) fail("tensor '{}': missing \"data_offsets\"", name);
  if (tensor.end < tensor.begin)
    fail("tensor '{}': data_offsets [{}, {}] end before begin", name, tensor.begin, tensor.end);
  if (tensor.end > data_size_)
    fail("tensor '{}': data_offsets [{}, {}] past the end of the {}-byte data section", name, tensor.begin, tensor.end,
         data_size_);

  // dtype size x product(shape), refusing overflow; a zero dimension makes it 0 whatever the rest.
  std::uint64_t expected = *dtype_size(tensor.dtype);
  bool overflow = false;
  if (std::find(tensor.shape.begin(), tensor.shape.end(), 0) != tensor.shape.end()) {
    expected = 0;
  } else {
    for (std::uint64_t dim : tensor.shape) overflow = overflow || __builtin_mul_overflow(expected, dim, &expected);
  }
  if (overflow || expected != tensor.end - tensor.begin) {
    constexpr std::size_t kShownDims = 8;  // a shape can have millions of dimensions
    std::span<const std::uint64_t> dims(tensor.shape.data(), std::min(tensor.shape.size(), kShownDims));
    fail("tensor '{}': data_offsets [{}, {}] hold {} bytes but dtype {} x shape [{}{}] needs {}", name, tensor.begin,
         tensor.end, tensor.end - tensor.begin, tensor.dtype, fmt::join(dims, ", "),
         tensor.shape.size() > kShownDims ? ", ..." : "",
         overflow ? std::string("more than 2^64") : std::to_string(expected));
  }
  tensors_.push_back(std::move(tensor));
}

// Two tensors sharing bytes would let a small file expand into many copies of its data section
// (2000 tensors over the same 1 MiB of a 1.2 MB file asked for 2 GB); with ranges disjoint, what
// the reader allocates is bounded by the file's size. Also refuses a name given twice.
void check_disjoint(std::vector<SafetensorsTensor>& tensors) {
  std::vector<std::string_view> names;
  for (const SafetensorsTensor& tensor : tensors) names.push_back(tensor.name);
  std::sort(names.begin(), names.end());
  if (auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end())
    fail("tensor '{}' appears twice in the header", shown(*twice));

  // File order; the name breaks ties between empty tensors so the order is always the same.
  std::sort(tensors.begin(), tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    const SafetensorsTensor& before = tensors[i - 1];
    const SafetensorsTensor& after = tensors[i];
    if (after.begin < before.end)
      fail("tensors '{}' (data_offsets [{}, {}]) and '{}' (data_offsets [{}, {}]) overlap", shown(before.name),
           before.begin, before.end, shown(after.name), after.begin, after.end);
  }
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

  SafetensorsHeader result;
  result.data_start = 8 + length;
  HeaderReader reader(file.size() - result.data_start);
  const char* text = reinterpret_cast<const char*>(file.data() + 8);
  if (!nlohmann::json::sax_parse(text, text + length, &reader)) fail("header is not valid JSON");
  result.tensors = reader.take_tensors();
  check_disjoint(result.tensors);
  return result;
}

SafetensorsSelection select_safetensors_bf16(std::span<const std::byte> file, const std::string& tensor_regex) {
  SafetensorsHeader header = parse_safetensors_header(file);
  std::vector<std::string> names;
  for (const SafetensorsTensor& tensor : header.tensors) names.push_back(tensor.name);
  std::vector<const SafetensorsTensor*> selected;
  for (std::size_t i : detail::matching_names(names, tensor_regex)) selected.push_back(&header.tensors[i]);
  if (selected.empty()) {
    std::vector<std::string> some;
    for (std::size_t i = 0; i < header.tensors.size() && i < 5; ++i) some.push_back(shown(header.tensors[i].name));
    fail("tensor regex '{}' matches none of its {} tensors (first: {})", tensor_regex, header.tensors.size(),
         fmt::join(some, ", "));
  }

  SafetensorsSelection result;
  result.tensors_in_file = header.tensors.size();
  // Ranges are disjoint and inside the data section (checked above), so this sum, and the output
  // (at most as large as the bytes it comes from), are bounded by the file's size.
  std::uint64_t elements = 0;
  for (const SafetensorsTensor* tensor : selected) {
    if (!convertible(tensor->dtype))
      fail(
          "tensor '{}' has dtype {}, which is not supported (only F32, F16, BF16 convert to bf16); narrow the "
          "selection with tensors=REGEX",
          shown(tensor->name), tensor->dtype);
    elements += (tensor->end - tensor->begin) / *dtype_size(tensor->dtype);
    result.names.push_back(tensor->name);
    result.dtypes.push_back(tensor->dtype);
  }
  if (elements == 0) fail("the selected tensors hold no elements");

  result.bf16.resize(elements * 2);
  std::span<const std::byte> data = file.subspan(header.data_start);
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

SafetensorsSelection read_safetensors_bf16(const std::string& path, const std::string& tensor_regex) {
  MappedFile file(path);
  try {
    return select_safetensors_bf16(file.bytes(), tensor_regex);
  } catch (const Error& error) {
    fail("safetensors '{}': {}", path, error.what());
  }
}

}  // namespace wirezip::datasets
