#pragma once
// Internal: the backends behind the decoder seam (decoders.hpp), one factory each.
#include <memory>
#include <string>

#include "wirezip/codecs/decoders.hpp"

namespace wirezip::codecs {

// Software backends (library_decoders.cpp).
std::unique_ptr<StreamDecoder> make_isal_inflate();
std::unique_ptr<StreamDecoder> make_zlib_inflate();
std::unique_ptr<StreamDecoder> make_libdeflate_inflate();
std::unique_ptr<StreamDecoder> make_lz4_block_decoder();
std::string zlib_version_string();
std::string libdeflate_version_string();

#if WIREZIP_HAVE_DOCA
// BlueField's compression engine through DOCA Compress (doca_decoder.cpp, built only with the SDK).
std::unique_ptr<StreamDecoder> make_doca_decoder(StreamFormat format);
std::string doca_version_string();
#endif

}  // namespace wirezip::codecs
