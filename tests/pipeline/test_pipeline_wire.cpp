// The pipeline's wire as a receiver and a sender meet it from a peer: case records, run reports,
// credits and sizes, each field checked against the reading side's limits with overflow-checked sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "wirezip/util/error.hpp"
#include "../../pipeline/src/wire.hpp"

namespace wirezip::pipeline {
namespace {

using codecs::parse_codec_spec;

struct Field {
  std::size_t offset, bytes;
  std::uint64_t value;
  const char* named;  // what the error must say
};

std::vector<std::byte> case_bytes(const Config& config, std::size_t data_bytes) {
  std::vector<std::byte> out(wire::kCaseRecordMax);
  out.resize(wire::write_case({config, data_bytes}, out));
  return out;
}

// The record with its codec spec's text replaced by `text` of the same length, as a peer may send.
std::vector<std::byte> with_spec_text(std::vector<std::byte> record, std::string_view text) {
  std::memcpy(record.data() + record.size() - text.size(), text.data(), text.size());
  return record;
}

void poke(std::vector<std::byte>& bytes, const Field& field) {
  for (std::size_t i = 0; i < field.bytes; ++i) bytes[field.offset + i] = std::byte((field.value >> (8 * i)) & 0xff);
}

TEST(CaseRecord, AValidRecordRoundTrips) {
  const Config config{Mode::overlap, parse_codec_spec("bytegroup+lz4"), 1 << 16, 4, 1, std::chrono::milliseconds(5000)};
  const auto bytes = case_bytes(config, 1 << 20);
  const wire::CaseRecord record = wire::read_case(bytes, ServeLimits{}, 64 << 20);
  EXPECT_EQ(record.data_bytes, 1u << 20);
  EXPECT_EQ(record.config.codec_spec.text(), "bytegroup+lz4");
  EXPECT_EQ(record.config.depth, 4u);
}

TEST(CaseRecord, EveryFieldOutsideTheReceiversLimitsIsNamed) {
  const Config config{Mode::overlap, parse_codec_spec("lz4"), 1 << 16, 4, 1, std::chrono::milliseconds(5000)};
  ServeLimits limits;
  limits.max_workers = 2;
  limits.max_timeout = std::chrono::milliseconds(60'000);
  const std::vector<Field> attacks{{0, 4, 0x32534143, "case.magic"},
                                   {4, 4, 9, "case.mode = 9"},
                                   {8, 8, 0, "case.chunk_bytes = 0"},
                                   {8, 8, std::uint64_t{1} << 40, "case.chunk_bytes"},
                                   {16, 8, 300, "case.depth = 300"},
                                   {16, 8, 0, "case.depth = 0"},
                                   {24, 4, 1u << 31, "case.workers = 2147483648"},
                                   {28, 8, std::uint64_t{1} << 63, "case.timeout_ms"},
                                   {36, 8, ~std::uint64_t{0}, "case.data_bytes"},
                                   {36, 8, 0, "case.data_bytes = 0"},
                                   {44, 4, 0xffffffff, "case.codec_spec_length"}};
  for (const Field& attack : attacks) {
    auto bytes = case_bytes(config, 1 << 20);
    poke(bytes, attack);
    try {
      wire::read_case(bytes, limits, 64 << 20);
      ADD_FAILURE() << "accepted " << attack.named;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(attack.named), std::string::npos) << e.what();
    }
  }
}

TEST(CaseRecord, SizesThatDoNotFitTheLinkOrTheRegistryAreRefused) {
  Config config{Mode::overlap, parse_codec_spec("lz4"), 1 << 20, 256, 1, std::chrono::milliseconds(5000)};
  EXPECT_THROW(wire::read_case(case_bytes(config, 32 << 20), ServeLimits{}, 64 << 20), Error);  // 256 slots of 1 MiB
  config.depth = 2;
  // A peer's spec text: unknown, or not printable.
  EXPECT_THROW(wire::read_case(with_spec_text(case_bytes(config, 1 << 20), "lz5"), ServeLimits{}, 64 << 20), Error);
  config.codec_spec = parse_codec_spec("huff");
  EXPECT_THROW(wire::read_case(with_spec_text(case_bytes(config, 1 << 20), "lz4\x01"), ServeLimits{}, 64 << 20), Error);
  config.mode = Mode::serial;
  config.codec_spec = codecs::CodecSpec();
  EXPECT_THROW(wire::read_case(case_bytes(config, 1 << 20), ServeLimits{}, 64 << 20), Error);
}

TEST(Sizes, ArithmeticThatWouldWrapIsAnError) {
  const Config config{Mode::raw, codecs::CodecSpec(), 1 << 20, 256, 1, std::chrono::milliseconds(5000)};
  EXPECT_THROW(link_buffer_bytes(config, ~std::size_t{0} - 10), Error);
  EXPECT_THROW(slots_offset(~std::size_t{0}), Error);
  EXPECT_EQ(wire::chunk_count(10, 4), 3u);
  EXPECT_EQ(wire::chunk_count(~std::size_t{0}, 1), ~std::size_t{0});
  EXPECT_THROW(wire::chunk_count(10, 0), Error);
}

TEST(RunReport, MustAccountForTheWholeRun) {
  std::vector<std::byte> bytes(wire::kRunReportSize);
  wire::write_report({.decode_ns = 5, .decoded_bytes = 1000, .cpu_ns = 7, .hash_ns = 11, .wait_ns = 13,
                      .credit_ns = 17, .switches = 19, .threads = 23, .decode_cpu_ns = 29},
                     bytes);
  const wire::ReportLimits limits{.data_bytes = 1000, .raw = false, .wall_ns = 1000, .workers = 2};
  const wire::RunReport read = wire::read_report(bytes, limits);
  EXPECT_EQ(read.cpu_ns, 7u);
  EXPECT_EQ(read.hash_ns, 11u);
  EXPECT_EQ(read.wait_ns, 13u);
  EXPECT_EQ(read.credit_ns, 17u);
  EXPECT_EQ(read.switches, 19u);
  EXPECT_EQ(read.threads, 23u);
  EXPECT_EQ(read.decode_cpu_ns, 29u);
  wire::ReportLimits other = limits;
  other.data_bytes = 999;
  EXPECT_THROW(wire::read_report(bytes, other), Error);
  other = limits;
  other.raw = true;
  EXPECT_THROW(wire::read_report(bytes, other), Error);  // raw runs decode nothing
  bytes[0] = std::byte{0};
  EXPECT_THROW(wire::read_report(bytes, limits), Error);
}

// Every time the receiver reports is bounded by the run's wall time as the sender timed it (times
// the threads that add to it); a report past its bound is refused, naming the field.
TEST(RunReport, TimesPastTheRunsWallTimeAreRefusedByName) {
  const wire::ReportLimits limits{.data_bytes = 1000, .raw = false, .wall_ns = 1'000'000, .workers = 4};
  const auto parse = [&](void (*set)(wire::RunReport&)) {
    wire::RunReport report{.decoded_bytes = 1000, .threads = 3};
    set(report);
    std::vector<std::byte> bytes(wire::kRunReportSize);
    wire::write_report(report, bytes);
    return wire::read_report(bytes, limits);
  };
  const auto refused = [&](void (*set)(wire::RunReport&), const std::string& field) {
    try {
      parse(set);
      ADD_FAILURE() << field << " past its bound was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("run report." + field + " = "), std::string::npos) << e.what();
    }
  };
  // At the bound: accepted.
  const wire::RunReport full = parse([](wire::RunReport& r) {
    r.wait_ns = r.credit_ns = 1'000'000;
    r.decode_ns = r.hash_ns = r.decode_cpu_ns = 4'000'000;
    r.cpu_ns = 1'000'000 * wire::kMaxReceiverCpus;
    r.switches = 4'000'000'000u;
    r.threads = static_cast<std::uint32_t>(wire::kMaxReceiverThreads);
  });
  EXPECT_EQ(full.decode_ns, 4'000'000u);
  // One past it: refused.
  refused([](wire::RunReport& r) { r.wait_ns = 1'000'001; }, "wait_ns");
  refused([](wire::RunReport& r) { r.credit_ns = 1'000'001; }, "credit_ns");
  refused([](wire::RunReport& r) { r.decode_ns = 4'000'001; }, "decode_ns");
  refused([](wire::RunReport& r) { r.hash_ns = 4'000'001; }, "hash_ns");
  refused([](wire::RunReport& r) { r.decode_cpu_ns = 4'000'001; }, "decode_cpu_ns");
  refused([](wire::RunReport& r) { r.cpu_ns = ~std::uint64_t{0}; }, "cpu_ns");
  refused([](wire::RunReport& r) { r.threads = static_cast<std::uint32_t>(wire::kMaxReceiverThreads) + 1; }, "threads");
  // A short run bounds the switches too: one per nanosecond of every CPU.
  wire::RunReport report{.decoded_bytes = 1000, .switches = 8193, .threads = 3};
  std::vector<std::byte> bytes(wire::kRunReportSize);
  wire::write_report(report, bytes);
  wire::ReportLimits instant = limits;
  instant.wall_ns = 1;
  try {
    wire::read_report(bytes, instant);
    ADD_FAILURE() << "8193 switches in 1 ns were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run report.switches = 8193 is over 8192"), std::string::npos) << e.what();
  }
}

TEST(Credits, SlotsFreedTogetherGoInFewMessagesAndParseBack) {
  // 0 covers 3, 5 and 21 (within its span); 22 starts a message of its own and covers 30; 255 alone.
  const std::vector<std::uint32_t> imms = wire::credit_imms({30, 5, 0, 255, 21, 3, 22});
  ASSERT_EQ(imms.size(), 3u);
  std::vector<std::size_t> freed;
  for (const std::uint32_t imm : imms) {
    EXPECT_EQ(wire::kind_of(imm), wire::Kind::credit);
    for (const std::size_t slot : wire::credited_slots(imm, wire::kMaxSlots)) freed.push_back(slot);
  }
  EXPECT_EQ(freed, (std::vector<std::size_t>{0, 3, 5, 21, 22, 30, 255}));
  // One slot alone is the plain credit: its slot, value 0.
  EXPECT_EQ(wire::credit_imms({7}), std::vector<std::uint32_t>{wire::imm(wire::Kind::credit, 7, 0)});
}

TEST(Credits, ASlotOutsideTheCaseIsNamed) {
  for (const std::uint32_t imm : {wire::imm(wire::Kind::credit, 4, 0), wire::imm(wire::Kind::credit, 2, 0b100),
                                  wire::imm(wire::Kind::credit, 0, wire::kMaxValue)}) {
    try {
      wire::credited_slots(imm, 4);
      ADD_FAILURE() << "accepted a credit " << std::hex << imm << " beyond 4 slots";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("names slot"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(wire::credited_slots(wire::imm(wire::Kind::credit, 1, 0b11), 4), (std::vector<std::size_t>{1, 2, 3}));
}

TEST(Pattern, DiffersPerSeedAndCoversOddLengths) {
  std::vector<std::byte> a(1001), b(1001);
  wire::fill_pattern(a, 1);
  wire::fill_pattern(b, 2);
  EXPECT_NE(a, b);
  EXPECT_NE(a[1000], std::byte{0});
}

}  // namespace
}  // namespace wirezip::pipeline
