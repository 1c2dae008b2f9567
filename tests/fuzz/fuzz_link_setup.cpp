// libFuzzer target: every decoder a peer's set-up bytes meet (hello, welcome, the verbs peer's
// buffer description, refusal, the session handshake's messages and context, tcp frame headers,
// the hello's version check and the accept's length a tcp client reads before the context, and
// the verbs set-up's join and grant)
// must return a checked value or throw wirezip::Error; never crash or read out of bounds. The
// first byte picks the decoder.
#include <array>
#include <cstdint>
#include <span>

#include "wirezip/util/error.hpp"
#include "../../rdma/src/protocol.hpp"
#include "../../rdma/src/session.hpp"
#include "../../rdma/src/tcp_frames.hpp"

using namespace wirezip::rdma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  ServerLimits limits;
  limits.max_buffer = 1 << 30;
  try {
    switch (data[0] % 13) {
      case 0: protocol::decode_hello(in, limits); break;
      case 1: protocol::decode_welcome(in, 1 << 20); break;
      case 2: protocol::decode_peer_buffer(in, limits); break;
      case 3: protocol::decode_refusal(in); break;
      case 4: session::decode_challenge(in); break;
      case 5: session::decode_response(in); break;
      case 6: session::decode_accept(in); break;
      case 7: session::decode_context(in); break;
      case 8:
        if (in.size() >= tcp::kHeaderSize) tcp::decode(in.first<tcp::kHeaderSize>());
        break;
      case 9: protocol::check_hello_version(in); break;  // all a tcp server checks before authentication
      case 10: session::accept_context_length(in); break;
      case 11: protocol::decode_join(in); break;
      case 12: session::decode_grant(in, 1 << 20); break;
    }
  } catch (const wirezip::Error&) {
  }
  return 0;
}
