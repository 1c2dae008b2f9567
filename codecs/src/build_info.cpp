#include "wirezip/codecs/build_info.hpp"

#include <fmt/format.h>

#include "git_sha.h"  // generated at build time: WIREZIP_GIT_SHA

#include "wirezip/codecs/registry.hpp"

namespace wirezip::codecs {
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

// The byte-grouping kernels this build carries; which of them runs is the context's simd_path.
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
  const auto versions = library_versions();
  std::map<std::string, std::string> facts{{"wirezip_version", versions.at("wirezip")},
                                           {"wirezip_git_sha", WIREZIP_GIT_SHA},
                                           {"build_type", WIREZIP_BUILD_TYPE},
                                           {"compiler", compiler()},
                                           {"simd_paths_built", simd_paths_built()}};
  for (const auto& [name, version] : versions)
    if (name != "wirezip") facts["version_" + name] = version;
  return facts;
}

std::string version_text(std::string_view name) {
  const auto facts = build_facts();
  std::string text = fmt::format("{} (wirezip {})\n", name, facts.at("wirezip_version"));
  for (const auto& [key, value] : facts) text += fmt::format("{}: {}\n", key, value);
  return text;
}

}  // namespace wirezip::codecs
