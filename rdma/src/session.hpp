#pragma once
// Internal: the session handshake every two-process link runs before the passive side looks at
// what the active side asks for: the passive side challenges, the active side answers, the
// passive side accepts and tells the active side about its host. With a shared secret
// (--secret-file) both sides prove they hold it: HMAC-SHA256 (OpenSSL) over both nonces and the
// set-up bytes, compared in constant time, so a replayed answer fails against a fresh nonce.
// Without one the messages still run (and say that nobody is authenticated), so both kinds of
// peer meet the same protocol.
//
// Over tcp the messages are plain bytes inside link set-up (tcp_setup.hpp); over verbs the
// challenge rides in the set-up connection's accept and the rest are SENDs on it
// (verbs_setup.hpp). The decoders below are this layer's trust boundary; docs/PROTOCOL.md has
// the layouts.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol.hpp"
#include "wirezip/rdma/transport.hpp"

namespace wirezip::rdma::session {

inline constexpr std::size_t kMaxContext = 3072;  // bytes of the passive side's context (JSON)

using Nonce = std::array<std::byte, 32>;
using Mac = std::array<std::byte, 32>;

struct Challenge {
  bool auth_required = false;
  Nonce nonce{};
};
inline constexpr std::size_t kChallengeSize = 40;
struct Response {
  bool has_mac = false;
  Nonce nonce{};
  Mac mac{};
};
inline constexpr std::size_t kResponseSize = 72;
struct Accept {
  bool has_mac = false;
  Mac mac{};
  std::map<std::string, std::string> context;
};

std::vector<std::byte> encode(const Challenge& challenge);
std::vector<std::byte> encode(const Response& response);
std::vector<std::byte> encode(const Accept& accept);  // drops context entries that would not fit
Challenge decode_challenge(std::span<const std::byte> bytes);
Response decode_response(std::span<const std::byte> bytes);
Accept decode_accept(std::span<const std::byte> bytes);
// An accept's fixed part (magic, flags, mac, context length): over a stream the context length
// is checked here before its bytes are read.
inline constexpr std::size_t kAcceptHeaderSize = 44;
std::size_t accept_context_length(std::span<const std::byte> header);
// A flat JSON object of at most 64 string values, keys [A-Za-z0-9_.:-]{1,64}, values printable,
// at most 256 bytes each. Throws naming the key or the JSON type at fault, never echoing the input.
std::map<std::string, std::string> decode_context(std::span<const std::byte> json);

// The bytes of link set-up that both proofs cover, as each side sent or received them.
struct Transcript {
  std::span<const std::byte> hello;
  std::span<const std::byte> welcome;
};
Mac proof(const std::string& secret, std::string_view role, const Nonce& passive, const Nonce& active,
          const Transcript& transcript);

// The steps both transports share. Active side: checks the challenge against this side's secret
// (a server that authenticates while we hold none, or the reverse, is refused) and answers it.
Response answer(const Challenge& challenge, const LinkOptions& options, const Transcript& transcript);
// Passive side: why `response` does not authenticate its peer; nullopt when it does (or there is
// no secret to check).
std::optional<std::string> check_response(const Response& response, const Nonce& challenge, const std::string& secret,
                                          const Transcript& transcript);
Accept make_accept(const Nonce& challenge, const Response& response, const LinkOptions& options,
                   const Transcript& transcript);
// Active side: throws unless the accept proves the secret (where this side holds one).
void check_accept(const Accept& accept, const Nonce& challenge, const Response& response, const LinkOptions& options,
                  const Transcript& transcript);
// A fresh nonce from OpenSSL's RAND_bytes.
Nonce random_nonce();

// Verbs, passive -> active on the set-up connection once the active side authenticated: the
// welcome, the token each data connection's join must show, then the accept. The head (welcome
// and token) is the W of both proofs.
struct Grant {
  protocol::Welcome welcome;
  protocol::Token token{};
  Accept accept;
};
inline constexpr std::size_t kGrantHeadSize = protocol::kWelcomeSize + std::tuple_size_v<protocol::Token>;
inline constexpr std::size_t kMaxGrantSize = kGrantHeadSize + kAcceptHeaderSize + kMaxContext;
std::array<std::byte, kGrantHeadSize> encode_grant_head(const protocol::Welcome& welcome, const protocol::Token& token);
// The active side's parser: a welcome for exactly `expected_bytes`, then an accept.
Grant decode_grant(std::span<const std::byte> bytes, std::uint64_t expected_bytes);

}  // namespace wirezip::rdma::session
