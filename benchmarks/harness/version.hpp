#pragma once
// What `--version` prints and every JSON context records about the build: suite version, git sha
// (with -dirty), build type, compiler, the SIMD paths compiled in, the codec libraries' versions.
// And the --help footer every binary shares.
#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace wirezip::harness {

// wirezip_version, wirezip_git_sha, build_type, compiler, simd_paths_built, version_<library>.
std::map<std::string, std::string> build_facts();

// With --version anywhere in argv: prints "NAME wirezip VERSION" and then build_facts() as
// "key: value" lines, and returns 0 (the status to exit with). nullopt otherwise.
std::optional<int> print_version_if_asked(std::string_view name, int argc, char** argv);

// The footer of every binary's --help: where Google Benchmark's flags are, and the exit statuses.
void add_help_footer(CLI::App& app, std::string_view example);

}  // namespace wirezip::harness
