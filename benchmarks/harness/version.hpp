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

// Sorts the options added so far into "What to measure", "Where" (links, peers, CPUs) and "Output",
// and adds the footer of every binary's --help: one example, where Google Benchmark's flags are,
// the exit statuses. Called once all options are added.
void add_help_footer(CLI::App& app, std::string_view example);

}  // namespace wirezip::harness
