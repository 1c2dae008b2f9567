#pragma once
// A peer that opens a verbs set-up connection, takes its challenge and never answers it: what a
// passive side must not wait on. Built from the transport's own set-up connection, so its request
// is the one a wirezip client sends (a hello for `buffer_bytes`, no buffer of its own).
#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "../../rdma/src/protocol.hpp"
#include "../../rdma/src/verbs_setup.hpp"

namespace wirezip::rdma::verbs {

// The connection, challenged (the accept came), held silent while it lives; throws when the
// passive side does not accept within `deadline`.
inline std::unique_ptr<SetupConnection> open_silent_setup(const std::string& host, std::uint16_t port,
                                                          std::uint64_t buffer_bytes, Clock::time_point deadline) {
  const Channel resolving = create_channel();
  CmId id = create_id(resolving.get());
  resolve(id.get(), resolve_address(host, port), deadline, host);
  auto setup = std::make_unique<SetupConnection>(std::move(id));  // on a channel of its own now
  std::array<std::byte, protocol::kHelloSize + protocol::kWelcomeSize> request{};
  const auto hello = protocol::encode(protocol::Hello{.buffer_bytes = buffer_bytes, .depth = 1});
  std::copy(hello.begin(), hello.end(), request.begin());
  setup->connect(request, deadline, host);
  return setup;
}

}  // namespace wirezip::rdma::verbs
