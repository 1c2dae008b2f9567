#pragma once
// Internal: the passes of a framed codec over a chunk, fused into cache-sized blocks. Hashing a
// chunk and splitting it were two passes over the input; merging planes and hashing the result
// were two over the output. Here each block is split (or merged) and hashed while it sits in L1,
// so the chunk crosses the memory hierarchy once each way (docs/METRICS.md: memory_passes).
#include <span>
#include <string_view>
#include <vector>

#include "planes/plane_layout.hpp"
#include "wirezip/codecs/frame.hpp"

namespace wirezip::codecs {

// Bytes of original data per block: with its planes it stays within a 48 KiB L1 data cache.
inline constexpr std::size_t kFusedBlockBytes = 16 << 10;

// Bit k set: plane k looks near-random (order-0 entropy >= 7.9 bits/byte in a sample, as
// looks_incompressible in entropy.hpp) and is best stored raw. The sample is 32 slices of 256
// elements spread over src, split into `probe`; planes under 4096 bytes are always worth a try.
std::uint32_t incompressible_planes(PlaneLayout layout, std::span<const std::byte> src, std::size_t width,
                                    std::vector<std::byte>& probe);

// split_layout of src's whole elements into planes, block by block, hashing all of src (tail
// included) into `hash`, which the caller has reset.
void split_and_hash(PlaneLayout layout, std::span<const std::byte> src, std::size_t width,
                    std::span<std::byte* const> planes, ChecksumStream& hash);
// merge_layout into the first (dst.size() / width) * width bytes of dst, block by block, hashing
// each merged block into `hash` (reset by the caller; the tail is the caller's to add).
void merge_and_hash(PlaneLayout layout, std::span<const std::byte* const> planes, std::size_t width,
                    std::span<std::byte> dst, ChecksumStream& hash);

// The start every framed codec's compress shares: dst must hold `needed` (its
// max_compressed_size) and a plane must fit the frame's 32-bit sizes. Returns the plane's size.
std::size_t checked_plane_size(std::string_view spec, std::size_t src_size, std::size_t dst_size, std::size_t needed,
                               std::size_t width);
// The ends every framed codec shares. finish_frame: after the planes, up to `out`, copies src's
// tail (the bytes of a partial element), writes the header and returns the frame's size.
std::size_t finish_frame(const FrameHeader& header, std::span<const std::byte> src, std::byte* out,
                         std::span<std::byte> dst);
// For width > 1: merges `planes` into dst (hashing each block), appends the frame's tail, and
// checks the checksum of the restored bytes against the header's. Returns the original size.
std::size_t restore_and_verify(const FrameHeader& header, std::span<const std::byte* const> planes,
                               std::span<const std::byte> frame, std::span<std::byte> dst, ChecksumStream& hash);
// Throws "corrupt frame: ..." unless `checksum` is the header's.
void verify_checksum(const FrameHeader& header, std::uint64_t checksum);

}  // namespace wirezip::codecs
