#include "wirezip/mpi/exchange.hpp"

#include <sched.h>

#include <climits>
#include <numeric>

#include "wirezip/mpi/session.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::mpi {
namespace {

int length_of(const std::string& text) {
  if (text.size() > static_cast<std::size_t>(INT_MAX)) fail("a message of {} bytes is too long for MPI", text.size());
  return static_cast<int>(text.size());
}

// Offsets of each rank's part in the concatenation of `lengths`.
std::vector<int> displacements(const std::vector<int>& lengths) {
  std::vector<int> offsets(lengths.size(), 0);
  long long total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (total > INT_MAX) fail("gathered messages exceed {} bytes", INT_MAX);
    offsets[i] = static_cast<int>(total);
    total += lengths[i];
  }
  if (total > INT_MAX) fail("gathered messages exceed {} bytes", INT_MAX);
  return offsets;
}

std::vector<std::string> split_parts(const std::string& all, const std::vector<int>& lengths,
                                     const std::vector<int>& offsets) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < lengths.size(); ++i) parts.push_back(all.substr(offsets[i], lengths[i]));
  return parts;
}

double reduce(MPI_Comm comm, double value, MPI_Op op) {
  double result = 0;
  check(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, op, comm), "MPI_Allreduce(double)");
  return result;
}

}  // namespace

std::vector<std::string> all_gather_strings(MPI_Comm comm, const std::string& mine) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  const int length = length_of(mine);
  std::vector<int> lengths(static_cast<std::size_t>(ranks));
  check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), "MPI_Allgather(lengths)");
  const std::vector<int> offsets = displacements(lengths);
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  check(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm),
        "MPI_Allgatherv(strings)");
  return split_parts(all, lengths, offsets);
}

std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine, int root) {
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  const int length = length_of(mine);
  std::vector<int> lengths(static_cast<std::size_t>(ranks));
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm), "MPI_Gather(lengths)");
  std::vector<int> offsets(lengths.size(), 0);
  std::string all;
  if (rank == root) {
    offsets = displacements(lengths);
    all.resize(static_cast<std::size_t>(offsets.back() + lengths.back()));
  }
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, root, comm),
        "MPI_Gatherv(strings)");
  if (rank != root) return {};
  return split_parts(all, lengths, offsets);
}

void send_string(MPI_Comm comm, const std::string& text, int to, int tag) {
  check(MPI_Send(text.data(), length_of(text), MPI_CHAR, to, tag, comm), fmt::format("MPI_Send to rank {}", to));
}

std::string receive_string(MPI_Comm comm, int from, int tag) {
  MPI_Status status;
  check(MPI_Probe(from, tag, comm, &status), fmt::format("MPI_Probe from rank {}", from));
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string text(static_cast<std::size_t>(length), '\0');
  check(MPI_Recv(text.data(), length, MPI_CHAR, from, tag, comm, MPI_STATUS_IGNORE),
        fmt::format("MPI_Recv from rank {}", from));
  return text;
}

void wait_all(std::span<MPI_Request> requests, std::chrono::milliseconds bound, std::string_view what) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (true) {
    int done = 0;
    check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), what);
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline)
      fail("{}: no completion within {} ms (a rank died or stalls)", what, bound.count());
    sched_yield();
  }
}

std::optional<std::string> agree_on_failure(MPI_Comm comm, const std::optional<std::string>& local) {
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  // The lowest failing rank wins: MPI_MIN over (rank if failed, else ranks).
  const int mine = local ? rank : ranks;
  int first = ranks;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce(failure)");
  if (first == ranks) return std::nullopt;
  std::string message = rank == first ? *local : std::string();
  int length = static_cast<int>(message.size());
  check(MPI_Bcast(&length, 1, MPI_INT, first, comm), "MPI_Bcast(failure length)");
  message.resize(static_cast<std::size_t>(length));
  check(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm), "MPI_Bcast(failure)");
  return fmt::format("rank {}: {}", first, message);
}

double max_over_ranks(MPI_Comm comm, double value) { return reduce(comm, value, MPI_MAX); }
double min_over_ranks(MPI_Comm comm, double value) { return reduce(comm, value, MPI_MIN); }
double sum_over_ranks(MPI_Comm comm, double value) { return reduce(comm, value, MPI_SUM); }

}  // namespace wirezip::mpi
