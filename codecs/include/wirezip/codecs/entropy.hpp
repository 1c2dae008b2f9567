#pragma once
// Order-0 entropy: the bound an ideal memoryless coder reaches, and a cheap probe that lets the
// framed codecs store a near-random plane raw instead of paying for a failed search.
#include <cstddef>
#include <cstdint>
#include <span>

#include "wirezip/codecs/exponent_split.hpp"

namespace wirezip::codecs {

// Shannon entropy of the byte histogram, in bits per byte (0 for empty input).
double order0_entropy_bits(std::span<const std::byte> bytes);

// The compression ratio (original / coded) an ideal order-0 coder of each byte plane reaches when
// every `chunk` bytes are coded on their own: planes of width `width`, trailing bytes at 8 bits.
double entropy_bound_ratio(std::span<const std::byte> data, std::size_t width, std::size_t chunk);
// The same bound for the planes of the exponent split (exponent_split.hpp): the exponent plane and
// the sign/mantissa plane(s) of `format`, each coded order-0 per chunk; trailing bytes at 8 bits.
double exponent_bound_ratio(std::span<const std::byte> data, FloatFormat format, std::size_t chunk);
// The bound of an ideal order-0 coder of whole 16-bit elements, per chunk: what any coder that sees
// one element at a time, with no context from its neighbours, can reach; a trailing odd byte at 8 bits.
// It equals the exponent bound plus what conditioning the sign and mantissa on the exponent can gain.
double value_bound_ratio(std::span<const std::byte> data, std::size_t chunk);

// The bounds of a stream too large to hold, fed a piece at a time: each adds the coded bits of its
// piece's chunks to `bits`, in the order the whole-span functions add them, so pieces that are whole
// numbers of chunks (the last excepted) give the same ratio to the last bit, from bound_ratio_of_bits.
void add_entropy_bound_bits(std::span<const std::byte> data, std::size_t width, std::size_t chunk, double& bits);
void add_exponent_bound_bits(std::span<const std::byte> data, FloatFormat format, std::size_t chunk, double& bits);
void add_value_bound_bits(std::span<const std::byte> data, std::size_t chunk, double& bits);
double bound_ratio_of_bits(std::uint64_t bytes, double bits);

// True when a sample of the plane has order-0 entropy >= 7.9 bits/byte, i.e. coding could save at
// most ~1%. Planes under 4 KiB are always worth a try.
bool looks_incompressible(std::span<const std::byte> plane);

}  // namespace wirezip::codecs
