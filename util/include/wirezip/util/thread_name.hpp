#pragma once
// Names for the suite's threads, as top -H, perf sched and /proc/<pid>/task/<tid>/comm show them:
// which stage of which end a thread serves, so a scheduler trace of a pipeline reads without
// guessing which of a process's threads was running or waiting.
#include <string>
#include <string_view>
#include <thread>

namespace wirezip::threads {

// Names `thread`; called by the thread that started it, so the name is there as soon as this
// returns. Linux keeps 15 bytes; a longer name is cut there. A name is only a label: where the
// kernel refuses it, the thread runs on under its old name.
void name_thread(std::jthread& thread, std::string_view name);

// The name of `thread` (empty where it cannot be read).
std::string thread_name(std::jthread& thread);

}  // namespace wirezip::threads
