#pragma once
// MPI's own collectives on the same bf16 tensors: the baseline the rings are read against. The
// reductions use a user-defined MPI_Op: the bf16 sum of collective::add_bf16 (MPI chooses the
// order in which it combines the ranks).
#include <mpi.h>

#include <span>

#include "wirezip/collective/ring_math.hpp"

namespace wirezip::mpi {

class Bf16SumOp {
 public:
  Bf16SumOp();
  Bf16SumOp(const Bf16SumOp&) = delete;
  Bf16SumOp& operator=(const Bf16SumOp&) = delete;
  ~Bf16SumOp();
  MPI_Op get() const { return op_; }

 private:
  MPI_Op op_ = MPI_OP_NULL;
};

// MPI_Allgather, MPI_Reduce_scatter_block, MPI_Allreduce with the layout of the rings. In place
// (MPI_IN_PLACE) when the buffers alias as MPI's in-place forms put them: all-gather's shard at
// this rank's block of out; reduce-scatter's out at the start of in (where MPI leaves the block);
// all-reduce's in == out.
void mpi_all_gather(MPI_Comm comm, const collective::Layout& layout, std::span<const std::byte> shard,
                    std::span<std::byte> out);
void mpi_reduce_scatter(MPI_Comm comm, const collective::Layout& layout, const Bf16SumOp& sum,
                        std::span<const std::byte> in, std::span<std::byte> out);
void mpi_all_reduce(MPI_Comm comm, const collective::Layout& layout, const Bf16SumOp& sum,
                    std::span<const std::byte> in, std::span<std::byte> out);
// Every rank's block `rank` of `in`, gathered on that rank in rank order (MPI_Alltoall): what the
// straightforward reference sums. out: layout.total_bytes().
void mpi_exchange_blocks(MPI_Comm comm, const collective::Layout& layout, std::span<const std::byte> in,
                         std::span<std::byte> out);

}  // namespace wirezip::mpi
