#include "wirezip/datasets/safetensors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <nlohmann/json.hpp>
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

// The table's entry for `name`: its name has static storage, so a header's views can point at it.
const Dtype* find_dtype(std::string_view name) {
  for (const Dtype& dtype : kDtypes)
    if (dtype.name == name) return &dtype;
  return nullptr;
}

std::uint64_t dtype_size(std::string_view name) { return find_dtype(name)->size; }

bool convertible(std::string_view dtype) { return dtype == "F32" || dtype == "F16" || dtype == "BF16"; }

std::uint64_t load_le64(const std::byte* p) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | static_cast<std::uint64_t>(p[i]);
  return value;
}

// A string from the file as it may appear in a message: at most 64 bytes and escaped (error.hpp),
// with its length where it was cut.
std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 64;
  std::string out = wirezip::shown(text, kShown);
  if (text.size() > kShown) out += fmt::format(" ({} bytes)", text.size());
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

// The entry being read; once checked it is stored compactly (Entry) and reused for the next.
struct EntryBeingRead {
  std::string name;
  const Dtype* dtype = nullptr;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;
};

// A checked entry: its name and shape are ranges of the header's stores. 32-bit places suffice:
// both stores are smaller than the header, at most kMaxSafetensorsHeader bytes.
struct Entry {
  std::uint64_t begin, end;
  std::uint32_t name_at, name_size, shape_at, rank;
  const Dtype* dtype;
};
static_assert(kMaxSafetensorsHeader < (1ull << 32));

class HeaderReader {
 public:
  using json = nlohmann::json;
  HeaderReader(std::uint64_t data_size, SafetensorsHeader& stores) : data_size_(data_size), stores_(stores) {}
  std::vector<Entry> take_entries() { return std::move(entries_); }

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
  EntryBeingRead tensor_;
  bool has_dtype_ = false, has_shape_ = false;
  std::size_t offsets_read_ = 0;  // how many of [begin, end]
  SafetensorsHeader& stores_;     // names and dimensions go here
  std::vector<Entry> entries_;
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
    tensor_.dtype = find_dtype(value);
    if (!tensor_.dtype) fail("tensor '{}': unknown dtype '{}'", shown(tensor_.name), shown(value));
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
    tensor_.name = key_;
    tensor_.dtype = nullptr;
    tensor_.shape.clear();  // keeps its capacity: one entry's worth, reused
    tensor_.begin = tensor_.end = 0;
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
  const EntryBeingRead& tensor = tensor_;
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
  std::uint64_t expected = tensor.dtype->size;
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
         tensor.end, tensor.end - tensor.begin, tensor.dtype->name, fmt::join(dims, ", "),
         tensor.shape.size() > kShownDims ? ", ..." : "",
         overflow ? std::string("more than 2^64") : std::to_string(expected));
  }
  entries_.push_back({.begin = tensor.begin,
                      .end = tensor.end,
                      .name_at = static_cast<std::uint32_t>(stores_.names.size()),
                      .name_size = static_cast<std::uint32_t>(tensor.name.size()),
                      .shape_at = static_cast<std::uint32_t>(stores_.dimensions.size()),
                      .rank = static_cast<std::uint32_t>(tensor.shape.size()),
                      .dtype = tensor.dtype});
  stores_.names.insert(stores_.names.end(), tensor.name.begin(), tensor.name.end());
  stores_.dimensions.insert(stores_.dimensions.end(), tensor.shape.begin(), tensor.shape.end());
}

// Two tensors sharing bytes would let a small file expand into many copies of its data section
// (2000 tensors over the same 1 MiB of a 1.2 MB file asked for 2 GB); with ranges disjoint, what
// the reader allocates is bounded by the file's size. Also refuses a name given twice. Then puts
// the entries in file order (the name breaks ties between empty tensors, so the order is always
// the same) as the header's views.
void check_disjoint_into_views(std::vector<Entry>& entries, SafetensorsHeader& header) {
  const auto name = [&](const Entry& entry) {
    return std::string_view(header.names.data() + entry.name_at, entry.name_size);
  };
  {
    std::vector<std::string_view> names;
    names.reserve(entries.size());
    for (const Entry& entry : entries) names.push_back(name(entry));
    std::sort(names.begin(), names.end());
    if (auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end())
      fail("tensor '{}' appears twice in the header", shown(*twice));
  }
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end) ||
           (std::tie(a.begin, a.end) == std::tie(b.begin, b.end) && name(a) < name(b));
  });
  for (std::size_t i = 1; i < entries.size(); ++i) {
    const Entry& before = entries[i - 1];
    const Entry& after = entries[i];
    if (after.begin < before.end)
      fail("tensors '{}' (data_offsets [{}, {}]) and '{}' (data_offsets [{}, {}]) overlap", shown(name(before)),
           before.begin, before.end, shown(name(after)), after.begin, after.end);
  }
  header.tensors.reserve(entries.size());
  for (const Entry& entry : entries)
    header.tensors.push_back({.name = name(entry),
                              .dtype = entry.dtype->name,
                              .shape = std::span(header.dimensions).subspan(entry.shape_at, entry.rank),
                              .begin = entry.begin,
                              .end = entry.end});
}

}  // namespace

std::uint64_t safetensors_head_size(std::span<const std::byte> first, std::uint64_t file_size) {
  if (file_size < 8 || first.size() < 8)
    fail("{} bytes is too short for a safetensors file (8-byte header length)", file_size);
  std::uint64_t length = load_le64(first.data());
  if (length > kMaxSafetensorsHeader)
    fail("header length {} is over the format's limit of {} bytes (not a safetensors file?)", length,
         kMaxSafetensorsHeader);
  if (length > file_size - 8)
    fail("header length {} runs past the end of the file ({} bytes follow the length; truncated?)", length,
         file_size - 8);
  return 8 + length;
}

SafetensorsHeader parse_safetensors_header(std::span<const std::byte> head, std::uint64_t file_size) {
  SafetensorsHeader result;
  result.data_start = safetensors_head_size(head, file_size);
  if (head.size() < result.data_start)
    fail("internal error: {} bytes given of a {}-byte header", head.size(), result.data_start);
  std::vector<Entry> entries;
  {
    HeaderReader reader(file_size - result.data_start, result);
    const char* text = reinterpret_cast<const char*>(head.data() + 8);
    if (!nlohmann::json::sax_parse(text, text + (result.data_start - 8), &reader)) fail("header is not valid JSON");
    entries = reader.take_entries();
  }
  // The stores are complete: the views made now point into buffers that no longer move.
  result.names.shrink_to_fit();
  result.dimensions.shrink_to_fit();
  check_disjoint_into_views(entries, result);
  return result;
}

SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file) {
  return parse_safetensors_header(file, file.size());
}

SafetensorsSelection select_safetensors_bf16(std::span<const std::byte> file, const std::string& tensor_regex) {
  SafetensorsSelection result;
  result.header = parse_safetensors_header(file);
  const std::vector<SafetensorsTensor>& tensors = result.header.tensors;
  {
    std::vector<std::string_view> names;
    names.reserve(tensors.size());
    for (const SafetensorsTensor& tensor : tensors) names.push_back(tensor.name);
    result.selected = detail::matching_names(names, tensor_regex);
  }
  if (result.selected.empty()) {
    std::vector<std::string> some;
    for (std::size_t i = 0; i < tensors.size() && i < 5; ++i) some.push_back(shown(tensors[i].name));
    fail("tensor regex '{}' matches none of its {} tensors (first: {})", tensor_regex, tensors.size(),
         fmt::join(some, ", "));
  }

  // Ranges are disjoint and inside the data section (checked above), so this sum, and the output
  // (at most as large as the bytes it comes from), are bounded by the file's size.
  std::uint64_t elements = 0;
  for (std::size_t i : result.selected) {
    const SafetensorsTensor& tensor = tensors[i];
    if (!convertible(tensor.dtype))
      fail(
          "tensor '{}' has dtype {}, which is not supported (only F32, F16, BF16 convert to bf16); narrow the "
          "selection with tensors=REGEX",
          shown(tensor.name), tensor.dtype);
    elements += (tensor.end - tensor.begin) / dtype_size(tensor.dtype);
  }
  if (elements == 0) fail("the selected tensors hold no elements");

  result.bf16.resize(elements * 2);
  std::span<const std::byte> data = file.subspan(result.header.data_start);
  std::size_t out = 0;
  for (std::size_t i : result.selected) {
    const SafetensorsTensor& tensor = tensors[i];
    std::span<const std::byte> src = data.subspan(tensor.begin, tensor.end - tensor.begin);
    std::size_t count = src.size() / dtype_size(tensor.dtype);
    std::span<std::byte> dst(result.bf16.data() + out, count * 2);
    if (tensor.dtype == "F32") {
      f32_le_to_bf16_le(src, dst);
    } else if (tensor.dtype == "F16") {
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
