#include "session.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "protocol.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::rdma::session {

Nonce random_nonce() {
  Nonce nonce;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1)
    fail("RAND_bytes: no randomness for the handshake nonce");
  return nonce;
}

namespace {

constexpr std::uint32_t kChallengeMagic = 0x4c414843;  // "CHAL"
constexpr std::uint32_t kResponseMagic = 0x50534552;   // "RESP"
constexpr std::uint32_t kAcceptMagic = 0x54504341;     // "ACPT"
constexpr std::uint32_t kHasMac = 1;
constexpr std::size_t kMaxContextEntries = 64, kMaxKey = 64, kMaxValue = 256;
constexpr std::string_view kClientRole = "wirezip-v3 client", kServerRole = "wirezip-v3 server";

void check_header(std::span<const std::byte> in, std::size_t min_size, std::uint32_t magic, const char* what) {
  if (in.size() < min_size) fail("{}: {} bytes, expected at least {}", what, in.size(), min_size);
  if (const auto got = load_le<std::uint32_t>(in, 0); got != magic) fail("{}.magic = {:#010x} is wrong", what, got);
}

std::uint32_t flags_of(std::span<const std::byte> in, const char* what) {
  const auto flags = load_le<std::uint32_t>(in, 4);
  if (flags & ~kHasMac) fail("{}.flags = {:#x} has unknown bits", what, flags);
  return flags;
}

template <std::size_t N>
void put(std::vector<std::byte>& out, std::size_t at, const std::array<std::byte, N>& bytes) {
  std::copy(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
}
template <std::size_t N>
std::array<std::byte, N> get(std::span<const std::byte> in, std::size_t at) {
  std::array<std::byte, N> out;
  std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(at), N, out.begin());
  return out;
}

bool key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-'; }

bool same(const Mac& a, const Mac& b) { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

}  // namespace

std::vector<std::byte> encode(const Challenge& c) {
  std::vector<std::byte> out(kChallengeSize);
  store_le<std::uint32_t>(out, 0, kChallengeMagic);
  store_le<std::uint32_t>(out, 4, c.auth_required ? kHasMac : 0);
  put(out, 8, c.nonce);
  return out;
}

Challenge decode_challenge(std::span<const std::byte> in) {
  check_header(in, kChallengeSize, kChallengeMagic, "challenge");
  return {.auth_required = (flags_of(in, "challenge") & kHasMac) != 0, .nonce = get<32>(in, 8)};
}

std::vector<std::byte> encode(const Response& r) {
  std::vector<std::byte> out(kResponseSize);
  store_le<std::uint32_t>(out, 0, kResponseMagic);
  store_le<std::uint32_t>(out, 4, r.has_mac ? kHasMac : 0);
  put(out, 8, r.nonce);
  put(out, 40, r.mac);
  return out;
}

Response decode_response(std::span<const std::byte> in) {
  check_header(in, kResponseSize, kResponseMagic, "response");
  return {.has_mac = (flags_of(in, "response") & kHasMac) != 0, .nonce = get<32>(in, 8), .mac = get<32>(in, 40)};
}

std::vector<std::byte> encode(const Accept& a) {
  nlohmann::json context = nlohmann::json::object();
  std::size_t used = 2;
  for (const auto& [key, value] : a.context) {
    const std::size_t entry = nlohmann::json(key).dump().size() + nlohmann::json(value).dump().size() + 2;
    if (used + entry > kMaxContext || context.size() == kMaxContextEntries) continue;  // the rest stays home
    context[key] = value;
    used += entry;
  }
  const std::string json = context.dump();
  std::vector<std::byte> out(kAcceptHeaderSize + json.size());
  store_le<std::uint32_t>(out, 0, kAcceptMagic);
  store_le<std::uint32_t>(out, 4, a.has_mac ? kHasMac : 0);
  put(out, 8, a.mac);
  store_le<std::uint32_t>(out, 40, static_cast<std::uint32_t>(json.size()));
  std::memcpy(out.data() + kAcceptHeaderSize, json.data(), json.size());
  return out;
}

std::size_t accept_context_length(std::span<const std::byte> in) {
  check_header(in, kAcceptHeaderSize, kAcceptMagic, "accept");
  flags_of(in, "accept");
  const auto length = load_le<std::uint32_t>(in, 40);
  if (length > kMaxContext) fail("accept.context_length = {} is over {}", length, kMaxContext);
  return length;
}

Accept decode_accept(std::span<const std::byte> in) {
  const std::size_t length = accept_context_length(in);
  if (length > in.size() - kAcceptHeaderSize)
    fail("accept.context_length = {} is over the {} bytes there are", length, in.size() - kAcceptHeaderSize);
  Accept accept{.has_mac = (flags_of(in, "accept") & kHasMac) != 0, .mac = get<32>(in, 8), .context = {}};
  accept.context = decode_context(in.subspan(kAcceptHeaderSize, length));
  return accept;
}

std::map<std::string, std::string> decode_context(std::span<const std::byte> bytes) {
  if (bytes.size() > kMaxContext) fail("context: {} bytes, at most {}", bytes.size(), kMaxContext);
  const auto* text = reinterpret_cast<const char*>(bytes.data());
  // Depth 1 only: a flat object. Nesting is refused while parsing, before it costs anything.
  const auto flat = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > 1) throw Error("context: nested value (a flat object of strings is expected)");
    return true;
  };
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text, text + bytes.size(), flat);
  } catch (const nlohmann::json::exception& e) {
    fail("context: not JSON (parse error at byte {})",
         e.id == 101 ? static_cast<const nlohmann::json::parse_error&>(e).byte : 0);
  }
  if (!json.is_object()) fail("context: a JSON {} where an object is expected", json.type_name());
  if (json.size() > kMaxContextEntries) fail("context: {} entries, at most {}", json.size(), kMaxContextEntries);
  std::map<std::string, std::string> context;
  for (const auto& [key, value] : json.items()) {
    if (key.empty() || key.size() > kMaxKey || !std::all_of(key.begin(), key.end(), key_char))
      fail("context: a key of {} bytes that is not [A-Za-z0-9_.:-]{{1,{}}}", key.size(), kMaxKey);
    if (!value.is_string()) fail("context.{}: a JSON {} where a string is expected", key, value.type_name());
    const auto& text_value = value.get_ref<const std::string&>();
    if (text_value.size() > kMaxValue || !std::all_of(text_value.begin(), text_value.end(), [](char c) {
          return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
        }))
      fail("context.{}: {} bytes, not printable or over {}", key, text_value.size(), kMaxValue);
    context.emplace(key, text_value);
  }
  return context;
}

Mac proof(const std::string& secret, std::string_view role, const Nonce& passive, const Nonce& active,
          const Transcript& transcript) {
  std::vector<unsigned char> message;
  auto append = [&](std::span<const std::byte> bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    message.insert(message.end(), p, p + bytes.size());
  };
  append(std::as_bytes(std::span(role)));
  append(passive);
  append(active);
  append(transcript.hello);
  append(transcript.welcome);
  Mac mac;
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), message.data(), message.size(),
            reinterpret_cast<unsigned char*>(mac.data()), &length) ||
      length != mac.size())
    fail("HMAC-SHA256 failed");
  return mac;
}

Response answer(const Challenge& challenge, const LinkOptions& options, const Transcript& transcript) {
  const bool have_secret = !options.secret.empty();
  if (challenge.auth_required && !have_secret)
    fail("the server requires authentication: give the same --secret-file (or WIREZIP_SECRET_FILE) as the server");
  if (!challenge.auth_required && have_secret)
    fail("the server does not authenticate (started without --secret-file): refusing to run against it");
  Response response{.has_mac = have_secret, .nonce = random_nonce()};
  if (have_secret) response.mac = proof(options.secret, kClientRole, challenge.nonce, response.nonce, transcript);
  return response;
}

std::optional<std::string> check_response(const Response& response, const Nonce& challenge, const std::string& secret,
                                          const Transcript& transcript) {
  if (secret.empty()) return std::nullopt;
  if (!response.has_mac) return "authentication required: the client has no --secret-file";
  if (!same(response.mac, proof(secret, kClientRole, challenge, response.nonce, transcript)))
    return "authentication failed: wrong secret or a replayed answer";
  return std::nullopt;
}

Accept make_accept(const Nonce& challenge, const Response& response, const LinkOptions& options,
                   const Transcript& transcript) {
  const bool required = !options.secret.empty();
  Accept accept{.has_mac = required, .context = options.context};
  if (required) accept.mac = proof(options.secret, kServerRole, challenge, response.nonce, transcript);
  return accept;
}

void check_accept(const Accept& accept, const Nonce& challenge, const Response& response, const LinkOptions& options,
                  const Transcript& transcript) {
  if (!options.secret.empty() &&
      (!accept.has_mac || !same(accept.mac, proof(options.secret, kServerRole, challenge, response.nonce, transcript))))
    fail("the server failed to prove it holds the secret: wrong secret, or not the server you meant");
}

std::array<std::byte, kGrantHeadSize> encode_grant_head(const protocol::Welcome& welcome,
                                                        const protocol::Token& token) {
  std::array<std::byte, kGrantHeadSize> out{};
  const auto described = protocol::encode(welcome);
  std::copy(described.begin(), described.end(), out.begin());
  std::copy(token.begin(), token.end(), out.begin() + protocol::kWelcomeSize);
  return out;
}

Grant decode_grant(std::span<const std::byte> in, std::uint64_t expected_bytes) {
  if (in.size() < kGrantHeadSize) fail("grant: {} bytes, expected at least {}", in.size(), kGrantHeadSize);
  Grant grant;
  grant.welcome = protocol::decode_welcome(in.first(protocol::kWelcomeSize), expected_bytes);
  grant.token = get<std::tuple_size_v<protocol::Token>>(in, protocol::kWelcomeSize);
  grant.accept = decode_accept(in.subspan(kGrantHeadSize));
  return grant;
}

}  // namespace wirezip::rdma::session
