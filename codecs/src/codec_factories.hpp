#pragma once
// Internal: the codec families the registry assembles from a parsed spec.
#include <memory>
#include <string>

#include "coders/plane_coder.hpp"
#include "wirezip/codecs/codec.hpp"
#include "wirezip/codecs/exponent_split.hpp"

namespace wirezip::codecs {

// coder may be null: planes stored raw (memcpy when width is 1, byte grouping alone otherwise).
// layout: byte planes, or the exponent split of the float format whose width is `width`.
std::unique_ptr<Codec> make_framed_codec(std::string spec, std::size_t width, std::unique_ptr<PlaneCoder> coder,
                                         PlaneLayout layout = PlaneLayout::bytes);

// c-blosc with its own container format; shuffle is BLOSC_NOSHUFFLE / SHUFFLE / BITSHUFFLE.
std::unique_ptr<Codec> make_blosc_codec(std::string spec, int shuffle, std::size_t typesize, std::string compressor,
                                        int level);
std::string blosc_version();

}  // namespace wirezip::codecs
