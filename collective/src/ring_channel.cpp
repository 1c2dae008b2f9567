#include "wirezip/collective/ring_channel.hpp"

#include <algorithm>
#include <cstring>

#include "wirezip/util/error.hpp"

namespace wirezip::collective {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kKindMask = ~kRingValueMask;

}  // namespace

std::uint32_t ring_chunk_imm(std::size_t index) {
  if (index >= kRingMaxChunks) fail("ring: chunk index {} does not fit an immediate", index);
  return kRingChunkImm | static_cast<std::uint32_t>(index);
}

std::uint32_t ring_ready_imm(std::uint64_t pass) { return kRingReadyImm | static_cast<std::uint32_t>(pass & kRingValueMask); }

std::size_t check_chunk_arrival(const rdma::Arrival& arrival, const PassShape& shape,
                                const std::vector<std::optional<std::size_t>>& arrived, bool check_offset) {
  if ((arrival.imm & kKindMask) != kRingChunkImm) fail("immediate {:#010x} is not a chunk's", arrival.imm);
  const std::size_t index = arrival.imm & kRingValueMask;
  if (index >= shape.total) fail("chunk index {} is beyond the pass's {} chunks", index, shape.total);
  if (arrived.size() <= index || arrived[index]) fail("chunk index {} arrived twice", index);
  if (arrival.length > shape.capacity) fail("chunk {}'s length {} exceeds its slot of {} bytes", index, arrival.length, shape.capacity);
  if (arrival.length == 0) fail("chunk {}'s length is 0", index);
  if (check_offset && arrival.offset != index * shape.capacity)
    fail("chunk {}'s offset {} is not its slot's, {}", index, arrival.offset, index * shape.capacity);
  return index;
}

void check_ready_arrival(const rdma::Arrival& arrival, std::uint64_t pass) {
  if (arrival.imm != ring_ready_imm(pass)) fail("immediate {:#010x} where ready for pass {} was due", arrival.imm, pass);
  if (arrival.length != 0) fail("ready for pass {} has length {}, expected 0", pass, arrival.length);
}

LinkChannel::LinkChannel(std::unique_ptr<rdma::Endpoint> right, std::unique_ptr<rdma::Endpoint> left, Peers peers,
                         std::chrono::milliseconds timeout)
    : right_(std::move(right)), left_(std::move(left)), peers_(peers), timeout_(timeout) {}

LinkChannel::~LinkChannel() = default;

std::string_view LinkChannel::name() const { return rdma::transport_name(right_->kind()); }

std::size_t LinkChannel::pass_bytes() const {
  return std::min({right_->buffer().bytes().size(), right_->remote_buffer_bytes(), left_->buffer().bytes().size()});
}

template <typename Body>
auto LinkChannel::on_link(int neighbour, const char* what, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    broken_ = true;
    fail("ring over {}: rank {} {} rank {}: {} (a rank died or stalls)", name(), peers_.rank, what, neighbour, e.what());
  }
}

void LinkChannel::begin_pass(const PassShape& shape) {
  if (broken_) fail("ring over {}: the links are unusable after a failed collective", name());
  if (shape.total > kRingMaxChunks) fail("ring over {}: {} chunks in one pass exceed {}", name(), shape.total, kRingMaxChunks);
  if (shape.capacity != 0 && shape.total > pass_bytes() / shape.capacity)
    fail("ring over {}: a pass of {} chunks of {} bytes exceeds the link buffers ({} bytes)", name(), shape.total,
         shape.capacity, pass_bytes());
  broken_ = true;  // until end_pass: a pass that throws leaves the links in an unknown state
  shape_ = shape;
  arrived_.assign(shape.total, std::nullopt);
  into_.assign(shape.total, {});
  ++pass_;
  // This rank is done reading the previous pass's slots: its left neighbour may write them again.
  on_link(peers_.left, "telling", [&] { left_->post_write(0, 0, 0, ring_ready_imm(pass_)); });
  const auto deadline = Clock::now() + timeout_;
  std::optional<rdma::Arrival> ready;
  while (!ready) {
    ready = on_link(peers_.right, "waiting for ready from", [&] { return right_->wait_arrival_for(std::chrono::milliseconds(1)); });
    if (!ready && Clock::now() > deadline)
      fail("ring over {}: rank {} waited {} ms for rank {} to begin pass {} (a rank died or stalls)", name(), peers_.rank,
           timeout_.count(), peers_.right, pass_);
  }
  try {
    check_ready_arrival(*ready, pass_);
  } catch (const Error& e) {
    fail("ring over {}: from rank {}: {}", name(), peers_.right, e.what());
  }
}

std::span<std::byte> LinkChannel::receive_slot(std::size_t index) {
  return left_->buffer().bytes().subspan(index * shape_.capacity, shape_.capacity);
}

std::span<std::byte> LinkChannel::send_slot(std::size_t index) {
  return right_->buffer().bytes().subspan(index * shape_.capacity, shape_.capacity);
}

void LinkChannel::post_receive(std::size_t index, std::span<std::byte> into) { into_.at(index) = into; }

void LinkChannel::drain_left() {
  const bool check_offset = left_->kind() != rdma::TransportKind::verbs;  // a verbs completion has no offset
  while (auto arrival = on_link(peers_.left, "receiving from", [&] { return left_->poll_arrival(); })) {
    try {
      const std::size_t index = check_chunk_arrival(*arrival, shape_, arrived_, check_offset);
      arrived_[index] = arrival->length;
    } catch (const Error& e) {
      broken_ = true;
      fail("ring over {}: chunk arrival from rank {}: {}", name(), peers_.left, e.what());
    }
  }
}

std::optional<std::span<std::byte>> LinkChannel::test_receive(std::size_t index) {
  if (!arrived_.at(index)) drain_left();
  if (!arrived_[index]) return std::nullopt;
  const std::size_t length = *arrived_[index];
  const std::span<std::byte> into = into_[index];
  if (length > into.size())
    fail("ring over {}: chunk {} from rank {} has {} bytes, its place {}", name(), index, peers_.left, length, into.size());
  const std::span<std::byte> slot = receive_slot(index);
  if (into.data() != slot.data()) std::memcpy(into.data(), slot.data(), length);  // e.g. raw all-gather: into place
  return into.first(length);
}

void LinkChannel::send(std::size_t index, std::span<const std::byte> bytes) {
  const std::span<std::byte> slot = send_slot(index);
  if (bytes.size() > slot.size()) fail("ring over {}: chunk {} of {} bytes exceeds its slot of {}", name(), index, bytes.size(), slot.size());
  if (bytes.data() != slot.data()) std::memcpy(slot.data(), bytes.data(), bytes.size());  // raw or forwarded bytes
  const std::size_t offset = index * shape_.capacity;
  on_link(peers_.right, "sending to", [&] { right_->post_write(offset, offset, bytes.size(), ring_chunk_imm(index)); });
}

void LinkChannel::end_pass() {
  on_link(peers_.right, "waiting for its chunks to reach", [&] { right_->wait_in_flight_at_most(0); });
  on_link(peers_.left, "waiting for its ready to reach", [&] { left_->wait_in_flight_at_most(0); });
  broken_ = false;
}

}  // namespace wirezip::collective
