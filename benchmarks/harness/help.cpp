#include "help.hpp"

#include <fmt/format.h>

#include <cstring>
#include <set>
#include <string>

#include "wirezip/codecs/build_info.hpp"

namespace wirezip::harness {

std::optional<int> print_version_if_asked(std::string_view name, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") != 0) continue;
    fmt::print("{}", codecs::version_text(name));
    return 0;
  }
  return std::nullopt;
}

void add_help_footer(CLI::App& app, std::string_view example) {
  static const std::set<std::string> where{
      "--transport", "--device", "--qps", "--timeout-ms", "--serve", "--port", "--bind", "--idle-s", "--max-buffer",
      "--allow-pages", "--max-timeout-ms", "--secret-file", "--peer", "--mpi", "--pairing", "--one-pair-at-a-time",
      "--mpi-wait-s", "--cpus", "--decoder", "--serve-decoder"};
  static const std::set<std::string> output{"--per-tensor-out", "--list-codecs", "--list-devices"};
  for (CLI::Option* option : app.get_options()) {
    const std::string name = option->get_name();
    if (name == "--help" || name == "-h") continue;
    option->group(where.contains(name) ? "Where" : output.contains(name) ? "Output" : "What to measure");
  }
  app.footer(fmt::format(
      "Example:\n  {}\n\n"
      "Google Benchmark's own flags (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...) are\n"
      "accepted too: --help-benchmark lists them. --version prints the build.\n"
      "Exit status: 0 every case ran, 1 a case failed, 2 bad usage or set-up.",
      example));
}

}  // namespace wirezip::harness
