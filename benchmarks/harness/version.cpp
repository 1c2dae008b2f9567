#include "version.hpp"

#include <fmt/format.h>

#include <cstring>
#include <set>

#include "wirezip/codecs/registry.hpp"

namespace wirezip::harness {
namespace {

std::string compiler() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

// The byte-grouping kernels this binary carries; which of them runs is the context's simd_path.
std::string simd_paths_built() {
#if defined(__x86_64__)
  return "scalar,avx2,avx512";
#elif defined(__aarch64__)
  return "scalar,neon";
#else
  return "scalar";
#endif
}

}  // namespace

std::map<std::string, std::string> build_facts() {
  std::map<std::string, std::string> facts{{"wirezip_version", WIREZIP_VERSION},
                                           {"wirezip_git_sha", WIREZIP_GIT_SHA},
                                           {"build_type", WIREZIP_BUILD_TYPE},
                                           {"compiler", compiler()},
                                           {"simd_paths_built", simd_paths_built()}};
  for (const auto& [name, version] : codecs::library_versions())
    if (name != "wirezip") facts["version_" + name] = version;
  return facts;
}

std::optional<int> print_version_if_asked(std::string_view name, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") != 0) continue;
    fmt::print("{} (wirezip {})\n", name, WIREZIP_VERSION);
    for (const auto& [key, value] : build_facts()) fmt::print("{}: {}\n", key, value);
    return 0;
  }
  return std::nullopt;
}

void add_help_footer(CLI::App& app, std::string_view example) {
  static const std::set<std::string> where{
      "--transport", "--device", "--qps", "--timeout-ms", "--serve", "--port", "--bind", "--idle-s", "--max-buffer",
      "--allow-pages", "--max-timeout-ms", "--secret-file", "--peer", "--mpi", "--pairing", "--one-pair-at-a-time",
      "--mpi-wait-s", "--cpus", "--decoder"};
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
