#pragma once
// Internal: each transport's entry points, dispatched on TransportKind by transport.cpp.
#include <map>
#include <string>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::rdma {

namespace mem {
LinkPair connect_loopback(const LinkOptions& options);
}  // namespace mem

namespace tcp {
LinkPair connect_loopback(const LinkOptions& options);
std::unique_ptr<Listener> listen(const LinkOptions& options, const std::string& host, std::uint16_t port);
std::unique_ptr<Endpoint> connect(const LinkOptions& options, const std::string& host, std::uint16_t port);
void send_quit(const LinkOptions& options, const std::string& host, std::uint16_t port);
// An endpoint on an already connected socket (takes `fd`), no set-up: for the fuzz target.
std::unique_ptr<Endpoint> endpoint_over_socket(int fd, std::size_t buffer_bytes, std::size_t remote_bytes,
                                               const LinkOptions& options);
}  // namespace tcp

namespace verbs {
LinkPair connect_loopback(const LinkOptions& options);
std::unique_ptr<Listener> listen(const LinkOptions& options, const std::string& host, std::uint16_t port);
std::unique_ptr<Endpoint> connect(const LinkOptions& options, const std::string& host, std::uint16_t port);
void send_quit(const LinkOptions& options, const std::string& host, std::uint16_t port);
}  // namespace verbs

}  // namespace wirezip::rdma
