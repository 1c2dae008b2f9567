#pragma once
// What every benchmark binary answers to --help (its own options, grouped, then an example and a
// pointer to Google Benchmark's flags) and to --version (codecs::version_text).
#include <CLI/CLI.hpp>

#include <optional>
#include <string_view>

namespace wirezip::harness {

// With --version anywhere in argv: prints codecs::version_text(name) and returns 0 (the status to
// exit with). nullopt otherwise.
std::optional<int> print_version_if_asked(std::string_view name, int argc, char** argv);

// Sorts the options added so far into "What to measure", "Where" (links, peers, CPUs) and "Output",
// and adds the footer of every binary's --help: one example, where Google Benchmark's flags are,
// the exit statuses. Called once all options are added.
void add_help_footer(CLI::App& app, std::string_view example);

}  // namespace wirezip::harness
