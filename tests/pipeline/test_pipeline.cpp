#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../../pipeline/src/process_stats.hpp"
#include "../../pipeline/src/wire.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/pipeline/pipeline.hpp"
#include "wirezip/pipeline/serve_thread.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::pipeline {
namespace {

using namespace std::chrono_literals;
using codecs::parse_codec_spec;

// 3 MiB of weights plus an odd tail: not a multiple of any chunk or element width.
std::vector<std::byte> test_data() {
  const auto loaded = datasets::load_dataset("synthetic:weights:size=3MiB:seed=9").bytes;
  std::vector<std::byte> bytes(loaded.begin(), loaded.end());
  for (int i = 0; i < 1001; ++i) bytes.push_back(static_cast<std::byte>(i * 7));
  return bytes;
}

struct Link {
  rdma::LinkPair pair;
  std::span<const std::byte> data;
};

rdma::LinkPair make_link(rdma::TransportKind kind, const Config& config, std::span<const std::byte> data) {
  rdma::LinkOptions options;
  options.buffer_bytes = link_buffer_bytes(config, data.size());
  options.depth = config.depth;
  options.timeout = config.timeout;
  rdma::LinkPair link = rdma::connect_loopback(kind, options);
  std::copy(data.begin(), data.end(), link.first->buffer().bytes().begin());
  return link;
}

void expect_delivered(rdma::TransportKind kind, const Config& config) {
  const auto data = test_data();
  rdma::LinkPair link = make_link(kind, config, data);
  ServeThread receiver(*link.first, *link.second);
  // This thread, the serving one and the transport's: what the receiver counts when the case
  // begins. A thread just joined (the previous test's, the tcp acceptor) can stay listed in
  // /proc/self/task for a moment, so the count is taken once two samples 20 ms apart agree.
  std::uint64_t threads_between_runs = sample_tasks().threads;
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(20ms);
    const std::uint64_t again = sample_tasks().threads;
    if (again == threads_between_runs) break;
    threads_between_runs = again;
  }
  start_case(*link.first, data.size(), config);
  for (int run = 0; run < 2; ++run) {
    const Result result = run_once(*link.first, data.size(), config);
    EXPECT_EQ(result.original_bytes, data.size());
    EXPECT_GT(result.seconds, 0);
    // The cost model's clocks: every chunk counted, each end's threads seen, the codecs timed.
    EXPECT_EQ(result.chunks, wire::chunk_count(data.size(), config.chunk_bytes));
    EXPECT_GE(result.sender.threads, 2u);  // this thread and the serving one, at least
    EXPECT_GE(result.receiver.threads, 2u);
    // Those, and the decoding workers the receiver starts for each run (overlap with more than one
    // worker). No run here clears the destination, so the receiver does not count again.
    const bool decoding_workers = config.mode == Mode::overlap && config.workers > 1;
    EXPECT_EQ(result.receiver.threads,
              threads_between_runs + (decoding_workers ? static_cast<std::uint64_t>(config.workers) : 0u));
    if (config.mode != Mode::raw) {
      EXPECT_GT(result.sender.compress, 0);
      EXPECT_GT(result.sender.compress_cpu, 0);
      EXPECT_GT(result.decompress_seconds, 0);
      EXPECT_GT(result.receiver.decode_cpu, 0);
    }
    const auto destination = link.second->buffer().bytes();
    ASSERT_TRUE(std::equal(data.begin(), data.end(), destination.begin())) << "run " << run;
    if (config.mode == Mode::raw)
      EXPECT_EQ(result.wire_bytes, data.size());
    else if (config.codec_spec.text().starts_with("bytegroup"))
      EXPECT_LT(result.wire_bytes, data.size());  // weights compress once bytes are grouped
    else
      EXPECT_GT(result.wire_bytes, data.size());  // memcpy and plain lz4 only add framing
  }
  receiver.stop();  // rethrows anything the receiver hit
}

struct Case {
  rdma::TransportKind kind;
  Mode mode;
  std::string codec;
};

class Delivery : public ::testing::TestWithParam<Case> {};

TEST_P(Delivery, ByteExactInEveryRun) {
  const Case& c = GetParam();
  expect_delivered(c.kind, Config{c.mode, parse_codec_spec(c.codec), 256 << 10, 4, 2, 3000ms});
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (auto kind : {rdma::TransportKind::mem, rdma::TransportKind::tcp}) {
    cases.push_back({kind, Mode::raw, "memcpy"});
    for (auto mode : {Mode::serial, Mode::overlap})
      for (const char* codec : {"memcpy", "lz4", "bytegroup+lz4", "bytegroup+huff"}) cases.push_back({kind, mode, codec});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Pipeline, Delivery, ::testing::ValuesIn(all_cases()), [](const auto& info) {
  std::string name = std::string(rdma::transport_name(info.param.kind)) + "_" + std::string(mode_name(info.param.mode)) +
                     "_" + info.param.codec;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

TEST(Pipeline, DepthOneAndOneWorkerAndChunkLargerThanData) {
  expect_delivered(rdma::TransportKind::mem, Config{Mode::overlap, parse_codec_spec("bytegroup+huff"), 64 << 10, 1, 1, 3000ms});
  expect_delivered(rdma::TransportKind::tcp, Config{Mode::overlap, parse_codec_spec("bytegroup+huff"), 8 << 20, 2, 1, 3000ms});
  expect_delivered(rdma::TransportKind::tcp, Config{Mode::raw, parse_codec_spec("memcpy"), 100'000, 1, 1, 3000ms});
}

// Nobody serves the receiving end: no credit (raw: no "finished") ever comes back.
void expect_timeout_without_receiver(Mode mode, const std::string& expected) {
  const auto data = test_data();
  const Config config{mode, parse_codec_spec("memcpy"), 256 << 10, 2, 1, 300ms};
  // The link gets a long timeout of its own, so that the pipeline's 300 ms is the only one that
  // can fire: on a loaded host the unserved end's reader may not run for 300 ms, and the link's
  // send timeout would otherwise end the run first, with another message.
  Config link_config = config;
  link_config.timeout = 30'000ms;
  rdma::LinkPair link = make_link(rdma::TransportKind::tcp, link_config, data);
  const auto start = std::chrono::steady_clock::now();
  try {
    run_once(*link.first, data.size(), config);
    FAIL() << "a run without a receiver completed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Pipeline, ASlotThatNeverComesBackIsATimeout) {
  expect_timeout_without_receiver(Mode::overlap, "a slot never came back");
}

TEST(Pipeline, ARawRunThatNeverFinishesIsATimeout) {
  expect_timeout_without_receiver(Mode::raw, "(13 of 13 chunks written): the receiver never said finished");
}

TEST(Pipeline, AChunkThatFailsToDecompressEndsTheRunOnBothSides) {
  const auto data = test_data();
  const Config config{Mode::overlap, parse_codec_spec("bytegroup+huff"), 256 << 10, 2, 1, 2000ms};
  rdma::LinkPair link = make_link(rdma::TransportKind::mem, config, data);
  ServeThread receiver(*link.first, *link.second);
  start_case(*link.first, data.size(), config);
  // A slot whose header is right but whose frame is garbage.
  const std::size_t slot_at = slots_offset(data.size());
  auto slot = link.first->buffer().bytes().subspan(slot_at, 4096);
  std::fill(slot.begin(), slot.end(), std::byte{0x5a});
  wire::write_header({0, 256 << 10, 1000, wire::codec_tag(config.codec_spec), 0}, slot);
  link.first->post_write(slot_at, slot_at, 4096, wire::imm(wire::Kind::chunk, 0, 0));
  const rdma::Arrival reply = link.first->wait_arrival();
  EXPECT_EQ(wire::kind_of(reply.imm), wire::Kind::failed);
  try {
    receiver.stop();
    FAIL() << "the receiver did not report the failure";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 0 failed"), std::string::npos) << e.what();
  }
}

// A sender whose chunk header names another checksum than its (sound) frame holds: the receiver
// must refuse the chunk, whether it hashes the restored bytes itself or trusts the codec's check.
TEST(Pipeline, AChunkWhoseHeaderChecksumDiffersFromItsFrameIsRefused) {
  const auto data = test_data();
  const Config config{Mode::overlap, parse_codec_spec("bytegroup+huff"), 256 << 10, 2, 1, 2000ms};
  rdma::LinkPair link = make_link(rdma::TransportKind::mem, config, data);
  ServeThread receiver(*link.first, *link.second);
  start_case(*link.first, data.size(), config);
  const std::size_t slot_at = slots_offset(data.size());
  auto slot = link.first->buffer().bytes().subspan(slot_at, wire::slot_bytes(config));
  const auto original = std::span(data).first(256 << 10);
  const std::size_t frame = config.codec_spec.make()->compress(original, slot.subspan(wire::kChunkHeaderSize));
  wire::write_header({0, 256 << 10, static_cast<std::uint32_t>(frame), wire::codec_tag(config.codec_spec),
                      wire::checksum(original) ^ 1},
                     slot);
  link.first->post_write(slot_at, slot_at, wire::kChunkHeaderSize + frame, wire::imm(wire::Kind::chunk, 0, 0));
  const rdma::Arrival reply = link.first->wait_arrival();
  EXPECT_EQ(wire::kind_of(reply.imm), wire::Kind::failed);
  try {
    receiver.stop();
    FAIL() << "the receiver did not report the failure";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
}

// A receiver that answers the first chunk notification with `answer`: the sender's run must end
// with an error containing `expected`.
void expect_sender_refuses(Mode mode, std::uint32_t answer, const std::string& expected, std::size_t repeat = 1,
                           std::size_t chunk_bytes = 256 << 10) {
  const auto data = test_data();
  const Config config{mode, parse_codec_spec("memcpy"), chunk_bytes, 2, 1, 2000ms};
  rdma::LinkPair link = make_link(rdma::TransportKind::mem, config, data);
  std::jthread peer([&] {
    try {
      link.second->wait_arrival();
      for (std::size_t i = 0; i < repeat; ++i) link.second->post_write(0, 0, 0, answer);
    } catch (const Error&) {
    }
  });
  try {
    run_once(*link.first, data.size(), config);
    FAIL() << "the sender took " << std::hex << answer;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// Credits for several slots come in one message; the sender takes one only if every slot it names
// is the case's.
TEST(Pipeline, ACreditNamingASlotOutsideTheCaseIsRefused) {
  // Slot 0 and, by bit 3 of its value, slot 4.
  expect_sender_refuses(Mode::overlap, wire::imm(wire::Kind::credit, 0, 0b1000), "names slot 4");
}

TEST(Pipeline, ASecondCreditForOneSlotIsRefused) {
  // One chunk: slot 0 is out once, so the second credit cannot meet a chunk sent meanwhile.
  expect_sender_refuses(Mode::overlap, wire::imm(wire::Kind::credit, 0, 0), "a credit for slot 0, which is not out", 2,
                        4 << 20);
}

TEST(Pipeline, FinishedBeforeEveryCreditIsRefused) {
  expect_sender_refuses(Mode::overlap, wire::imm(wire::Kind::finished, 0, 0), "finished with 0 of 13 credits back");
}

TEST(Pipeline, ACreditInARawRunIsRefused) {
  expect_sender_refuses(Mode::raw, wire::imm(wire::Kind::credit, 0, 0), "a credit in a raw run");
}

// A raw run notifies only its last chunk, once every chunk is in place: the receiver refuses a
// notification for any other chunk or slot.
TEST(Pipeline, ARawNotificationBeforeTheLastChunkIsRefused) {
  const auto data = test_data();
  const Config config{Mode::raw, parse_codec_spec("memcpy"), 256 << 10, 2, 1, 2000ms};
  for (const auto& [slot, index] : {std::pair{0u, 0u}, std::pair{1u, 12u}}) {
    rdma::LinkPair link = make_link(rdma::TransportKind::mem, config, data);
    ServeThread receiver(*link.first, *link.second);
    start_case(*link.first, data.size(), config);
    link.first->post_write(0, 0, config.chunk_bytes, wire::imm(wire::Kind::chunk, slot, index));
    EXPECT_EQ(wire::kind_of(link.first->wait_arrival().imm), wire::Kind::failed);
    try {
      receiver.stop();
      FAIL() << "the receiver took a raw notification for slot " << slot << ", chunk " << index;
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find(fmt::format("names slot {} and chunk {}; only the last chunk (12)", slot, index)),
          std::string::npos)
          << e.what();
    }
  }
}

// A hostile sender's chunk: `original` compressed into sender slot `s` under header index `index`,
// with its true checksum, and posted.
void post_chunk(rdma::Endpoint& sender, const Config& config, std::size_t data_bytes, std::size_t s,
                std::uint32_t index, std::span<const std::byte> original) {
  const std::size_t slot_bytes = wire::slot_bytes(config);
  const std::size_t at = slots_offset(data_bytes) + s * slot_bytes;
  const auto slot = sender.buffer().bytes().subspan(at, slot_bytes);
  const std::size_t frame = config.codec_spec.make()->compress(original, slot.subspan(wire::kChunkHeaderSize));
  wire::write_header({index, static_cast<std::uint32_t>(original.size()), static_cast<std::uint32_t>(frame),
                      wire::codec_tag(config.codec_spec), wire::checksum(original)},
                     slot);
  sender.post_write(at, at, wire::kChunkHeaderSize + frame, wire::imm(wire::Kind::chunk, s, index));
}

// Two slots naming chunk 0, each a sound frame of other bytes: the second to claim the index is
// refused before it is decoded, so chunk 0's range holds one of the two whole (with one decoding
// worker, the first to arrive), never the second written over or into the first.
void expect_duplicate_index_refused(int workers) {
  const auto data = test_data();
  const Config config{Mode::overlap, parse_codec_spec("lz4"), 256 << 10, 2, workers, 2000ms};
  rdma::LinkPair link = make_link(rdma::TransportKind::mem, config, data);
  ServeThread receiver(*link.first, *link.second);
  start_case(*link.first, data.size(), config);
  const auto first = std::span(data).first(config.chunk_bytes);
  const std::vector<std::byte> other(config.chunk_bytes, std::byte{0x11});
  post_chunk(*link.first, config, data.size(), 0, 0, first);
  post_chunk(*link.first, config, data.size(), 1, 0, other);
  for (int replies = 0; replies < 3; ++replies)  // a credit may come before the failure
    if (wire::kind_of(link.first->wait_arrival().imm) == wire::Kind::failed) break;
  try {
    receiver.stop();
    FAIL() << "a second slot naming chunk 0 was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 0 failed: chunk header.index = 0 names a chunk another slot brought"),
              std::string::npos)
        << e.what();
  }
  const auto chunk0 = link.second->buffer().bytes().first(config.chunk_bytes);
  const bool holds_first = std::equal(first.begin(), first.end(), chunk0.begin());
  const bool holds_other = std::equal(other.begin(), other.end(), chunk0.begin());
  EXPECT_TRUE(holds_first || holds_other) << "chunk 0's range holds a mix of the two slots";
  if (workers == 1) {
    EXPECT_TRUE(holds_first) << "the duplicate was decoded over the first chunk 0";
  }
}

TEST(Pipeline, ASecondSlotNamingAChunkIsRefusedBeforeItIsDecoded) { expect_duplicate_index_refused(1); }

TEST(Pipeline, ASecondSlotNamingAChunkIsRefusedBeforeDecodingWorkersShareItsRange) {
  expect_duplicate_index_refused(2);
}

TEST(Pipeline, UnknownCodecIsRefusedUpFront) {
  // A spec is parsed before a case can carry it; the receiver's own check is CaseRecord's test.
  EXPECT_THROW(parse_codec_spec("lz5"), Error);
  EXPECT_THROW(parse_mode("pipelined"), Error);
  EXPECT_THROW(parse_mode("link"), Error);  // the stage measurement's own mode, not a case's
  EXPECT_EQ(mode_name(Mode::link), "link");
}

TEST(Pipeline, StagesAloneAreMeasured) {
  const auto data = test_data();
  const Config config{Mode::overlap, parse_codec_spec("bytegroup+huff"), 256 << 10, 4, 1, 3000ms};
  rdma::LinkPair link = make_link(rdma::TransportKind::mem, config, data);
  ServeThread receiver(*link.first, *link.second);
  start_case(*link.first, data.size(), config);
  const StageRates rates = measure_stages(*link.first, data, config);
  EXPECT_GT(rates.compress, 0);
  EXPECT_GT(rates.decompress, 0);
  EXPECT_GT(rates.link, 0);
  EXPECT_GT(rates.ratio, 1.3);  // bf16 weights under the best codec
  EXPECT_NO_THROW(run_once(*link.first, data.size(), config));  // the case was restored
  // Local passes in batches of 3 chunks (the last partial chunk in a batch of its own): the same
  // frames, so the same ratio and compressed bytes, as every chunk at once.
  const StageRates batched = measure_stages(*link.first, data, config, 3 * config.chunk_bytes + 5);
  EXPECT_GT(rates.compressed_bytes, 0u);
  EXPECT_EQ(batched.compressed_bytes, rates.compressed_bytes);
  EXPECT_EQ(batched.ratio, rates.ratio);
  EXPECT_GT(batched.decompress, 0);
  receiver.stop();
}

}  // namespace
}  // namespace wirezip::pipeline
