#include "wirezip/mpi/ring_channel.hpp"

#include <sched.h>

#include <climits>

#include "wirezip/mpi/session.hpp"
#include "wirezip/util/checked.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::mpi {
namespace {

using Clock = std::chrono::steady_clock;

// Consecutive passes use disjoint tags; within a pass, MPI's non-overtaking order keeps two chunks
// with the same tag apart.
constexpr int kTagsPerPass = 16000;

int as_int(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) fail("a chunk of {} bytes exceeds MPI's int count", bytes);
  return static_cast<int>(bytes);
}

}  // namespace

MpiChannel::MpiChannel(MPI_Comm parent, std::chrono::milliseconds timeout) : timeout_(timeout) {
  check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  left_ = (rank_ + ranks_ - 1) % ranks_;
  right_ = (rank_ + 1) % ranks_;
}

MpiChannel::~MpiChannel() {
  abandon();  // the requests go before their communicator
  MPI_Comm_free(&comm_);
}

void MpiChannel::begin_pass(const collective::PassShape& shape) {
  shape_ = shape;
  ++pass_;
  const std::size_t bytes = checked_mul(shape.total, shape.capacity, "ring staging");
  // Grown, never shrunk: an all-reduce's two passes reuse the places.
  if (shape.receive_slots && received_.size() < bytes) received_.resize(bytes);
  if (shape.send_slots && outgoing_.size() < bytes) outgoing_.resize(bytes);
  receives_.assign(shape.total, MPI_REQUEST_NULL);
  sends_.assign(shape.total, MPI_REQUEST_NULL);
  into_.assign(shape.total, {});
}

void MpiChannel::post_receive(std::size_t index, std::span<std::byte> into) {
  into_.at(index) = into;
  check(MPI_Irecv(into.data(), as_int(into.size()), MPI_BYTE, left_, tag(index), comm_, &receives_[index]),
        "ring: MPI_Irecv");
}

std::optional<std::span<std::byte>> MpiChannel::test_receive(std::size_t index) {
  int arrived = 0;
  MPI_Status status;
  check(MPI_Test(&receives_.at(index), &arrived, &status), "ring: MPI_Test(receive)");
  if (!arrived) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return into_[index].first(static_cast<std::size_t>(count));
}

void MpiChannel::send(std::size_t index, std::span<const std::byte> bytes) {
  check(MPI_Isend(bytes.data(), as_int(bytes.size()), MPI_BYTE, right_, tag(index), comm_, &sends_.at(index)),
        "ring: MPI_Isend");
}

void MpiChannel::end_pass() {
  const auto deadline = Clock::now() + timeout_;
  while (true) {
    int done = 0;
    check(MPI_Testall(static_cast<int>(sends_.size()), sends_.data(), &done, MPI_STATUSES_IGNORE),
          "ring: MPI_Testall(sends)");
    if (done) return;
    if (Clock::now() > deadline)
      fail("ring: rank {} waited {} ms for rank {} to take its chunks (a rank died or stalls)", rank_,
           timeout_.count(), right_);
    sched_yield();
  }
}

// Only after a failure is anything left: receives are cancelled, sends let go.
void MpiChannel::abandon() {
  for (MPI_Request& request : receives_)
    if (request != MPI_REQUEST_NULL) {
      MPI_Cancel(&request);
      MPI_Request_free(&request);
    }
  for (MPI_Request& request : sends_)
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
}

std::span<std::byte> MpiChannel::slot(std::vector<std::byte>& storage, std::size_t index) {
  return std::span(storage).subspan(index * shape_.capacity, shape_.capacity);
}

int MpiChannel::tag(std::size_t index) const {
  return static_cast<int>(pass_ % 2) * kTagsPerPass + static_cast<int>(index % kTagsPerPass);
}

}  // namespace wirezip::mpi
