#pragma once
// What `--version` prints and every JSON context records about the build: suite version, git sha
// (with -dirty), build type, compiler, the SIMD paths compiled in, the codec libraries' versions.
#include <map>
#include <string>
#include <string_view>

namespace wirezip::codecs {

// wirezip_version, wirezip_git_sha, build_type, compiler, simd_paths_built, version_<library>.
std::map<std::string, std::string> build_facts();

// "NAME (wirezip VERSION)" and then build_facts() as "key: value" lines, each ending in '\n'.
std::string version_text(std::string_view name);

}  // namespace wirezip::codecs
