#include "wirezip/mpi/baseline.hpp"

#include <climits>

#include "wirezip/mpi/session.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::mpi {
namespace {

// MPI's signature for user operations: inout[i] = in[i] + inout[i], bf16.
void bf16_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto bytes = static_cast<std::size_t>(*length) * 2;
  const std::span<std::byte> acc(static_cast<std::byte*>(inout), bytes);
  collective::add_bf16(acc, std::span<const std::byte>(static_cast<const std::byte*>(in), bytes), acc);
}

int elements(std::size_t bytes) {
  if (bytes / 2 > static_cast<std::size_t>(INT_MAX)) fail("{} bytes exceed MPI's int count", bytes);
  return static_cast<int>(bytes / 2);
}

void check_sizes(std::span<const std::byte> in, std::size_t in_bytes, std::span<std::byte> out, std::size_t out_bytes) {
  if (in.size() != in_bytes || out.size() != out_bytes)
    fail("MPI collective: buffers of {} and {} bytes, expected {} and {}", in.size(), out.size(), in_bytes, out_bytes);
}

}  // namespace

Bf16SumOp::Bf16SumOp() { check(MPI_Op_create(bf16_sum, 1, &op_), "MPI_Op_create(bf16 sum)"); }
Bf16SumOp::~Bf16SumOp() {
  if (op_ != MPI_OP_NULL) MPI_Op_free(&op_);
}

void mpi_all_gather(MPI_Comm comm, const collective::Layout& layout, std::span<const std::byte> shard,
                    std::span<std::byte> out) {
  check_sizes(shard, layout.shard_bytes, out, layout.total_bytes());
  const int count = elements(layout.shard_bytes);
  int rank = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const bool in_place = shard.data() == out.data() + static_cast<std::size_t>(rank) * layout.shard_bytes;
  const void* send = in_place ? MPI_IN_PLACE : shard.data();
  check(MPI_Allgather(send, count, MPI_UINT16_T, out.data(), count, MPI_UINT16_T, comm), "MPI_Allgather");
}

void mpi_reduce_scatter(MPI_Comm comm, const collective::Layout& layout, const Bf16SumOp& sum,
                        std::span<const std::byte> in, std::span<std::byte> out) {
  check_sizes(in, layout.total_bytes(), out, layout.shard_bytes);
  // In place, MPI reads the whole tensor from the receive buffer: `in`, whose start `out` is.
  const void* send = in.data() == out.data() ? MPI_IN_PLACE : in.data();
  check(MPI_Reduce_scatter_block(send, out.data(), elements(layout.shard_bytes), MPI_UINT16_T, sum.get(), comm),
        "MPI_Reduce_scatter_block");
}

void mpi_all_reduce(MPI_Comm comm, const collective::Layout& layout, const Bf16SumOp& sum,
                    std::span<const std::byte> in, std::span<std::byte> out) {
  check_sizes(in, layout.total_bytes(), out, layout.total_bytes());
  const void* send = in.data() == out.data() ? MPI_IN_PLACE : in.data();
  check(MPI_Allreduce(send, out.data(), elements(layout.total_bytes()), MPI_UINT16_T, sum.get(), comm),
        "MPI_Allreduce");
}

void mpi_exchange_blocks(MPI_Comm comm, const collective::Layout& layout, std::span<const std::byte> in,
                         std::span<std::byte> out) {
  check_sizes(in, layout.total_bytes(), out, layout.total_bytes());
  const int count = elements(layout.shard_bytes);
  check(MPI_Alltoall(in.data(), count, MPI_UINT16_T, out.data(), count, MPI_UINT16_T, comm), "MPI_Alltoall");
}

}  // namespace wirezip::mpi
