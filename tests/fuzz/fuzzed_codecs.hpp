#pragma once
// The codecs fuzz_codecs drives, shared with make_codec_seeds: every family and container the
// registry builds (codecs/include/wirezip/codecs/registry.hpp), with the element widths and
// library settings that take different decoding or encoding paths.
//
// APPEND ONLY: the first byte of each kept seed is an index into this list, so inserting or
// reordering entries would point every seed after it at another codec.
#include <array>

namespace wirezip::fuzz {

inline constexpr std::array kFuzzedCodecs = {
    "memcpy",                                                     // 0: the framed copy
    "bytegroup",                                                  // byte planes stored raw
    "bytegroup:width=4",                                          //
    "bytegroup:width=3+huff",                                     // an odd width: planes and an n % w tail
    "lz4",                                                        //
    "zstd:level=1",                                               // 5
    "rans",                                                       //
    "huff",                                                       //
    "igzip:level=0",                                              //
    "bytegroup+lz4",                                              //
    "bytegroup+zstd:level=-5:literals=1",                         // 10
    "bytegroup+rans",                                             //
    "bytegroup+huff",                                             //
    "bytegroup:width=4+huff",                                     //
    "bytegroup+igzip:level=3",                                    //
    "blosc:noshuffle+lz4",                                        // 15: c-blosc's own container from here on
    "blosc:shuffle+lz4",                                          //
    "blosc:bitshuffle+lz4",                                       //
    "blosc:shuffle+lz4hc",                                        //
    "blosc:shuffle+blosclz",                                      //
    "blosc:shuffle+zlib",                                         // 20
    "blosc:bitshuffle+zstd:level=1",                              //
    "bytegroup+deflate",                                          // DEFLATE planes, inflated by ISA-L
    "bytegroup+deflate:decoder=zlib",                             //
    "bytegroup:split=exponent+huff",                              // 24: the exponent split
    "bytegroup:split=exponent:format=fp16+ans",                   //
    "bytegroup:split=exponent:width=4+ans",                       //
    "ans",                                                        //
    "bytegroup:split=exponent+ans:context=exponent",              // 28
    "bytegroup:split=exponent:format=fp32+ans:context=exponent",  //
    "huff12",                                                     // 30: 12-bit symbols, escapes
    "huff10",                                                     // 31: exponent windows, escapes
    "bytegroup:split=exponent",                                   // 32: the split's planes stored raw
    "bytegroup:split=exponent:format=fp16+ans:context=exponent",  // fp16's 5-bit exponent contexts
    "bytegroup:width=16+huff",                                    // the widest frame header
};

}  // namespace wirezip::fuzz
