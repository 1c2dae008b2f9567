#pragma once
// Small exchanges between ranks: strings (JSON, hostnames), waits on requests with a bound, and
// agreeing on whether a step failed anywhere. The blocking ones belong under a Watchdog guard.
#include <mpi.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::mpi {

// Every rank's string, on every rank (index = rank).
std::vector<std::string> all_gather_strings(MPI_Comm comm, const std::string& mine);
// Every rank's string on `root` (index = rank); empty elsewhere.
std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine, int root);
void send_string(MPI_Comm comm, const std::string& text, int to, int tag);
std::string receive_string(MPI_Comm comm, int from, int tag);

// Polls until every request is complete (yielding the core between polls: ranks may share cores).
// Throws wirezip::Error naming `what` when `bound` passes without completion.
void wait_all(std::span<MPI_Request> requests, std::chrono::milliseconds bound, std::string_view what);

// After a step that may have failed on some ranks: the message of the lowest failing rank, on
// every rank ("rank R: ..."), or nothing when all succeeded.
std::optional<std::string> agree_on_failure(MPI_Comm comm, const std::optional<std::string>& local);
double max_over_ranks(MPI_Comm comm, double value);
double min_over_ranks(MPI_Comm comm, double value);
double sum_over_ranks(MPI_Comm comm, double value);

}  // namespace wirezip::mpi
