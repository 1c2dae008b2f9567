#include "mpi_report.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

namespace wirezip::harness {
namespace {

constexpr std::string_view kOut = "--benchmark_out=", kFormat = "--benchmark_out_format=";

std::vector<std::string> cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\0', at);
    args.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return args;
}

std::optional<std::string> last_value(std::string_view prefix) {
  std::optional<std::string> value;
  for (const std::string& arg : cmdline())
    if (arg.rfind(prefix, 0) == 0) value = arg.substr(prefix.size());
  return value;
}

}  // namespace

void drop_benchmark_out(int& argc, char** argv) {
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (i > 0 && (arg.rfind(kOut, 0) == 0 || arg.rfind(kFormat, 0) == 0)) continue;
    argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
}

std::optional<std::string> benchmark_out_from_cmdline() {
  auto value = last_value(kOut);
  if (value && value->empty()) value.reset();
  return value;
}

std::string benchmark_out_format_from_cmdline() { return last_value(kFormat).value_or("json"); }

std::string benchmark_format_from_cmdline() { return last_value("--benchmark_format=").value_or("console"); }

void point_benchmark_out(const std::string& path) {
  // Initialize parses only the flags it is given and leaves every other flag as it was. It also
  // keeps argv[0] as the JSON's "executable": that one must outlive the run, so it is static.
  static std::string program = cmdline().front();
  std::string out = std::string(kOut) + path, format = std::string(kFormat) + "json";
  char* args[] = {program.data(), out.data(), format.data(), nullptr};
  int count = 3;
  benchmark::Initialize(&count, args);
}

}  // namespace wirezip::harness
