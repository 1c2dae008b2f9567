#include "wirezip/datasets/dataset_reader.hpp"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "name_filter.hpp"
#include "wirezip/datasets/bf16.hpp"
#include "wirezip/datasets/safetensors.hpp"
#include "wirezip/util/checked.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/file_kind.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip::datasets {
namespace {

std::string errno_text(int error) { return std::system_category().message(error); }

// A regular file open for pread, closed on destruction.
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(std::string path) : path_(std::move(path)) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it is refused below.
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) fail("cannot open '{}': {}", path_, errno_text(errno));
    fd_ = fd;
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      const int error = errno;
      close_fd();
      fail("cannot stat '{}': {}", path_, errno_text(error));
    }
    if (!S_ISREG(info.st_mode)) {
      close_fd();
      fail("'{}' is {}, not a regular file", path_, file_kind(info.st_mode));
    }
    size_ = static_cast<std::uint64_t>(info.st_size);
  }
  ~ReadOnlyFile() { close_fd(); }
  ReadOnlyFile(ReadOnlyFile&& other) noexcept
      : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(ReadOnlyFile&&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }

  // Exactly out.size() bytes at `offset`; a file that shrank since it was opened is an error.
  void read_exactly(std::uint64_t offset, std::span<std::byte> out) const {
    while (!out.empty()) {
      const ssize_t got = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("cannot read '{}' at byte {}: {}", path_, offset, errno_text(errno));
      if (got == 0) fail("'{}' ends at byte {}: it shrank while being read", path_, offset);
      out = out.subspan(static_cast<std::size_t>(got));
      offset += static_cast<std::uint64_t>(got);
    }
  }

 private:
  void close_fd() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// The files a PATH names: itself, or what a pattern with * ? [ matches, sorted.
std::vector<std::string> expand(const std::string& path) {
  if (path.find_first_of("*?[") == std::string::npos) return {path};
  glob_t found{};
  const int status = ::glob(path.c_str(), 0, nullptr, &found);
  std::unique_ptr<glob_t, decltype(&::globfree)> owner(&found, &::globfree);
  if (status == GLOB_NOMATCH) fail("'{}' matches no file", path);
  if (status != 0) fail("cannot expand '{}' (glob error {})", path, status);
  return {found.gl_pathv, found.gl_pathv + found.gl_pathc};
}

enum class Source : std::uint8_t { bf16, f16, f32 };

std::uint64_t source_width(Source source) { return source == Source::f32 ? 4 : 2; }

}  // namespace

struct DatasetReader::Files {
  std::vector<ReadOnlyFile> files;
};

// A run of the stream that one file holds contiguously, in one source dtype.
struct DatasetReader::Piece {
  std::uint64_t stream_offset = 0, stream_bytes = 0;  // bf16 bytes
  std::uint64_t file_offset = 0;                      // where its source elements start
  std::uint32_t file = 0;
  Source source = Source::bf16;
};

namespace {

// A converted piece's bytes [rel, rel + out.size()): whole source elements are read in blocks,
// converted, and the bytes asked for copied out (a range may start or end inside an element).
void read_converted(const ReadOnlyFile& file, std::uint64_t file_offset, Source source, std::uint64_t rel,
                    std::span<std::byte> out) {
  constexpr std::uint64_t kBlock = 64 * 1024;  // elements per read
  const std::uint64_t width = source_width(source);
  std::vector<std::byte> raw, bf16;
  std::uint64_t element = rel / 2;
  const std::uint64_t end = rel + out.size();
  std::size_t written = 0;
  while (rel < end) {
    const std::uint64_t count = std::min(kBlock, (end + 1) / 2 - element);
    raw.resize(count * width);
    bf16.resize(count * 2);
    file.read_exactly(file_offset + element * width, raw);
    if (source == Source::f32)
      f32_le_to_bf16_le(raw, bf16);
    else
      f16_le_to_bf16_le(raw, bf16);
    const std::uint64_t from = rel - element * 2, take = std::min(count * 2 - from, end - rel);
    std::memcpy(out.data() + written, bf16.data() + from, take);
    written += take;
    rel += take;
    element += count;
  }
}

}  // namespace

namespace {

struct FileSpec {
  std::string path;
  Source source = Source::bf16;
};

FileSpec parse_file_spec(std::string_view spec) {
  SpecPart part = parse_spec_part(spec);
  if (part.positional.size() != 1) fail("expected file:PATH[:dtype=bf16|f32] (PATH without ':')");
  std::string dtype = part.take("dtype").value_or("bf16");
  if (dtype != "bf16" && dtype != "f32") fail("unknown dtype '{}' for file (valid: bf16, f32)", dtype);
  if (!part.options.empty()) fail("unknown option '{}' for file (valid: dtype=bf16|f32)", part.options.begin()->first);
  return {part.positional[0], dtype == "f32" ? Source::f32 : Source::bf16};
}

struct SafetensorsSpec {
  std::string path, regex;  // an empty regex matches every name (RE2, partial match)
};

SafetensorsSpec parse_safetensors_spec(std::string_view spec) {
  // The regex may contain ':' and '=', so "tensors=" takes the rest of the spec; it must come last.
  SafetensorsSpec out;
  constexpr std::string_view kTensors = ":tensors=";
  if (std::size_t at = spec.find(kTensors); at != std::string_view::npos) {
    out.regex = std::string(spec.substr(at + kTensors.size()));
    if (out.regex.empty()) fail("tensors= needs a regex (omit it to take every tensor)");
    spec = spec.substr(0, at);
  }
  SpecPart part = parse_spec_part(spec);
  if (part.positional.size() != 1) fail("expected safetensors:PATH[:tensors=REGEX] (PATH without ':')");
  if (!part.options.empty())
    fail("unknown option '{}' for safetensors (valid: tensors=REGEX, last)", part.options.begin()->first);
  out.path = part.positional[0];
  return out;
}

// The header of a file read (not mapped), checked by the one safetensors parser.
SafetensorsHeader read_header(const ReadOnlyFile& file) {
  std::vector<std::byte> head(std::min<std::uint64_t>(8, file.size()));
  file.read_exactly(0, head);
  const std::uint64_t head_size = safetensors_head_size(head, file.size());
  head.resize(head_size);
  file.read_exactly(8, std::span(head).subspan(8));
  return parse_safetensors_header(head, file.size());
}

std::string file_count(std::size_t files) { return files == 1 ? "" : fmt::format(" ({} files)", files); }

// The tensors of one file that `regex` selects, in file order, each with the dtype it converts from.
// Counts what it saw into `walk`; keeps the first names of the data set for the error below.
std::vector<std::pair<std::size_t, Source>> select_tensors(const SafetensorsHeader& header, const std::string& regex,
                                                           TensorWalk& walk, std::vector<std::string>& first_names) {
  std::vector<std::string_view> names;
  for (const SafetensorsTensor& tensor : header.tensors) names.push_back(tensor.name);
  for (std::size_t i = 0; i < names.size() && first_names.size() < 5; ++i) first_names.push_back(shown(names[i]));
  walk.total += names.size();
  std::vector<std::pair<std::size_t, Source>> out;
  for (std::size_t i : detail::matching_names(names, regex)) {
    const SafetensorsTensor& tensor = header.tensors[i];
    if (tensor.dtype != "F32" && tensor.dtype != "F16" && tensor.dtype != "BF16")
      fail(
          "tensor '{}' has dtype {}, which is not supported (only F32, F16, BF16 convert to bf16); narrow the "
          "selection with tensors=REGEX",
          shown(tensor.name), tensor.dtype);
    out.emplace_back(i, tensor.dtype == "F32" ? Source::f32 : tensor.dtype == "F16" ? Source::f16 : Source::bf16);
  }
  walk.selected += out.size();
  return out;
}

void check_selection(const std::string& path, const std::string& regex, const TensorWalk& walk,
                     const std::vector<std::string>& first_names) {
  if (walk.selected == 0)
    fail("safetensors '{}': tensor regex '{}' matches none of its {} tensors (first: {})", path, regex, walk.total,
         fmt::join(first_names, ", "));
}

}  // namespace

std::uint64_t default_window_bytes() {
  constexpr std::uint64_t kMost = 1ull << 30;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kMost;
  return std::min(kMost, static_cast<std::uint64_t>(pages) / 8 * static_cast<std::uint64_t>(page));
}

bool DatasetReader::is_file_spec(std::string_view spec) {
  const std::string_view source = spec.substr(0, spec.find(':'));
  return source == "file" || source == "safetensors";
}

DatasetReader::DatasetReader(std::string_view spec) : files_(std::make_unique<Files>()) {
  std::vector<ReadOnlyFile>& files = files_->files;
  const auto add_piece = [&](std::uint64_t file_offset, std::uint64_t source_bytes, Source source) {
    const std::uint64_t bytes = source_bytes / source_width(source) * 2;
    pieces_.push_back({.stream_offset = size_, .stream_bytes = bytes, .file_offset = file_offset,
                       .file = static_cast<std::uint32_t>(files.size() - 1), .source = source});
    size_ = checked_add(size_, bytes, "data set bytes");
  };
  const std::string_view source = spec.substr(0, spec.find(':'));
  if (source == "file") {
    const FileSpec where = parse_file_spec(spec);
    for (const std::string& path : expand(where.path)) {
      const ReadOnlyFile& file = files.emplace_back(path);
      const std::uint64_t width = source_width(where.source);
      if (file.size() == 0) fail("'{}' is empty", path);
      if (file.size() % width != 0)
        fail("'{}' has {} bytes, not a whole number of {}-byte {} elements", path, file.size(), width,
             where.source == Source::f32 ? "f32" : "bf16");
      add_piece(0, file.size(), where.source);
    }
    const bool f32 = where.source == Source::f32;
    description_ = fmt::format("raw {} file {}{}{}, {} bf16 elements", f32 ? "f32" : "bf16", where.path,
                               file_count(files.size()), f32 ? " converted to bf16" : "", size_ / 2);
    return;
  }
  if (source != "safetensors") fail("not a file data set (file:PATH or safetensors:PATH)");
  const SafetensorsSpec where = parse_safetensors_spec(spec);
  std::size_t from_f32 = 0, from_f16 = 0, from_bf16 = 0;
  TensorWalk walk;
  std::vector<std::string> first_names;
  for (const std::string& path : expand(where.path)) {
    const ReadOnlyFile& file = files.emplace_back(path);
    try {
      const SafetensorsHeader header = read_header(file);
      for (const auto& [i, source] : select_tensors(header, where.regex, walk, first_names)) {
        const SafetensorsTensor& tensor = header.tensors[i];
        ++(source == Source::f32 ? from_f32 : source == Source::f16 ? from_f16 : from_bf16);
        // The parser checked begin <= end <= the data section's size, so this stays inside the file.
        if (tensor.end > tensor.begin) add_piece(header.data_start + tensor.begin, tensor.end - tensor.begin, source);
      }
    } catch (const Error& error) {
      fail("safetensors '{}': {}", path, error.what());
    }
  }
  check_selection(where.path, where.regex, walk, first_names);
  if (size_ == 0) fail("safetensors '{}': the selected tensors hold no elements", where.path);
  description_ = fmt::format("safetensors {}{}: {} of {} tensors{} (F32 {}, F16 {}, BF16 {}) as bf16, {} bf16 elements",
                             where.path, file_count(files.size()), walk.selected, walk.total,
                             where.regex.empty() ? "" : fmt::format(" matching '{}'", where.regex), from_f32, from_f16,
                             from_bf16, size_ / 2);
}

DatasetReader::~DatasetReader() = default;
DatasetReader::DatasetReader(DatasetReader&&) noexcept = default;
DatasetReader& DatasetReader::operator=(DatasetReader&&) noexcept = default;

void DatasetReader::read(std::uint64_t offset, std::span<std::byte> out) const {
  if (offset > size_ || out.size() > size_ - offset)
    fail("read of {} bytes at {} past the end of the {}-byte data set", out.size(), offset, size_);
  if (out.empty()) return;
  auto piece = std::upper_bound(pieces_.begin(), pieces_.end(), offset,
                                [](std::uint64_t at, const Piece& p) { return at < p.stream_offset; }) - 1;
  while (!out.empty()) {
    const std::uint64_t rel = offset - piece->stream_offset;
    const std::uint64_t take = std::min<std::uint64_t>(out.size(), piece->stream_bytes - rel);
    const ReadOnlyFile& file = files_->files[piece->file];
    if (piece->source == Source::bf16)
      file.read_exactly(piece->file_offset + rel, out.first(take));
    else
      read_converted(file, piece->file_offset, piece->source, rel, out.first(take));
    out = out.subspan(take);
    offset += take;
    ++piece;
  }
}

TensorWalk for_each_tensor(std::string_view spec, const std::function<void(const StreamTensor&)>& visit,
                           std::uint64_t piece_bytes) {
  if (!spec.starts_with("safetensors:")) fail("not a safetensors data set (safetensors:PATH)");
  if (piece_bytes == 0 || piece_bytes % 2) fail("tensor pieces of {} bytes: need an even number > 0", piece_bytes);
  const SafetensorsSpec where = parse_safetensors_spec(spec);
  TensorWalk walk;
  std::vector<std::string> first_names;
  std::vector<std::byte> bf16;  // one piece's bytes, the largest so far's capacity
  for (const std::string& path : expand(where.path)) {
    ++walk.files;
    // Errors of the file name it; the visitor's own pass through as they are.
    std::optional<ReadOnlyFile> file;
    SafetensorsHeader header;
    std::vector<std::pair<std::size_t, Source>> selected;
    try {
      file.emplace(path);
      header = read_header(*file);
      selected = select_tensors(header, where.regex, walk, first_names);
    } catch (const Error& error) {
      fail("safetensors '{}': {}", path, error.what());
    }
    for (const auto& [i, source] : selected) {
      const SafetensorsTensor& tensor = header.tensors[i];
      // The parser checked begin <= end <= the data section's size and the length against the shape.
      const std::uint64_t total = (tensor.end - tensor.begin) / source_width(source) * 2;
      std::uint64_t offset = 0;
      do {
        bf16.resize(std::min(piece_bytes, total - offset));
        try {
          if (source == Source::bf16)
            file->read_exactly(header.data_start + tensor.begin + offset, bf16);
          else if (!bf16.empty())
            read_converted(*file, header.data_start + tensor.begin, source, offset, bf16);
        } catch (const Error& error) {
          fail("safetensors '{}': {}", path, error.what());
        }
        visit({.path = path, .entry = tensor, .bf16 = bf16, .offset = offset, .bf16_bytes = total});
        offset += bf16.size();
      } while (offset < total);
    }
  }
  check_selection(where.path, where.regex, walk, first_names);
  return walk;
}

}  // namespace wirezip::datasets
