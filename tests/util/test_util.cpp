#include <gtest/gtest.h>

#include <fmt/format.h>
#include <sched.h>

#include <chrono>
#include <thread>
#include <vector>

#include "error_of.hpp"

#include "wirezip/util/cpus.hpp"
#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"
#include "wirezip/util/poll_wait.hpp"
#include "wirezip/util/size.hpp"
#include "wirezip/util/spec.hpp"
#include "wirezip/util/thread_name.hpp"

namespace wirezip {
namespace {

TEST(Size, ParsesUnits) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("64MiB"), 64u << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(parse_size("1MB"), 1000000u);
  EXPECT_EQ(parse_size("7B"), 7u);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(Size, RejectsJunkWithOneClearLine) {
  for (const char* bad : {"", "KiB", "-1", "1.5MiB", "12XB", "1MiB ", "99999999999999999999", "20000000000GiB"}) {
    try {
      parse_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad size"), std::string::npos) << e.what();
    }
  }
}

TEST(Size, ListsAndFormats) {
  EXPECT_EQ(parse_size_list("64KiB,1MiB,4MiB"), (std::vector<std::uint64_t>{65536, 1 << 20, 4 << 20}));
  EXPECT_THROW(parse_size_list("1MiB,,2MiB"), Error);
  EXPECT_EQ(format_size(1 << 20), "1MiB");
  EXPECT_EQ(format_size(65536), "64KiB");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_size(0), "0B");
}

TEST(Shown, ShortensAndEscapesUntrustedText) {
  EXPECT_EQ(shown("plain text"), "plain text");
  EXPECT_EQ(shown(std::string(100, 'a'), 4), "aaaa...");
  EXPECT_EQ(shown("\x1b]0;x\x07 a\\b \xc3\xa9"), "\\x1b]0;x\\x07 a\\x5cb \\xc3\\xa9");
}

TEST(Spec, SplitsNamePositionalAndOptions) {
  SpecPart part = parse_spec_part("synthetic:weights:size=64MiB:seed=1");
  EXPECT_EQ(part.name, "synthetic");
  EXPECT_EQ(part.positional, std::vector<std::string>{"weights"});
  EXPECT_EQ(part.take_size("size", 0), 64u << 20);
  EXPECT_EQ(part.take_int("seed", 0, 0, 100), 1);
  EXPECT_NO_THROW(part.check_consumed("test"));
}

TEST(Spec, RejectsUnknownOptionsAndBadValues) {
  SpecPart part = parse_spec_part("zstd:level=x:speed=3");
  EXPECT_THROW(part.take_int("level", 1, -5, 22), Error);
  EXPECT_THROW(part.check_consumed("test"), Error);
  EXPECT_THROW(parse_spec_part("zstd::level=1"), Error);
  EXPECT_THROW(parse_spec_part("zstd:=1"), Error);
  SpecPart range = parse_spec_part("lz4:accel=0");
  EXPECT_THROW(range.take_int("accel", 1, 1, 10), Error);
  EXPECT_EQ(testing::error_of([] { parse_spec_part("zstd:level=1:level=19"); }),
            "option 'level' given twice in 'zstd:level=1:level=19'");
}


// The one line a refused flag value prints: names the flag and the text, says what it takes.
template <typename Parse>
std::string flag_error(Parse&& parse) { return testing::error_of(parse); }

TEST(Flag, CountsRefuseSignsJunkAndOutOfRange) {
  EXPECT_EQ(flag::count("--depth", "16", 1, 256), 16u);
  EXPECT_EQ(flag::count("--depth", "256", 1, 256), 256u);
  EXPECT_EQ(flag::counts("--threads", "1,2,4", 1, 64), (std::vector<std::uint64_t>{1, 2, 4}));
  for (const char* bad : {"-1", "0", "257", "+3", "", "1.5", "8x", " 8", "18446744073709551616"}) {
    try {
      flag::count("--depth", bad, 1, 256);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--depth: '") + bad + "' is not a whole number in [1, 256]");
    }
  }
  EXPECT_THROW(flag::counts("--threads", "1,,2", 1, 64), Error);
  EXPECT_THROW(flag::counts("--threads", "1,0", 1, 64), Error);
}

TEST(Flag, SizesHaveBoundsAndNameTheFlag) {
  EXPECT_EQ(flag::size("--buffer", "64MiB", 1), 64u << 20);
  EXPECT_EQ(flag::sizes("--chunks", "64KiB,1MiB", 1), (std::vector<std::uint64_t>{65536, 1 << 20}));
  EXPECT_EQ(flag_error([] { flag::sizes("--chunks", "1MiB,0", 1); }), "--chunks: '0' is less than the minimum, 1B");
  EXPECT_EQ(flag_error([] { flag::size("--sizes", "2MiB", 1, 1 << 20); }),
            "--sizes: '2MiB' is more than the maximum, 1MiB");
  EXPECT_EQ(flag_error([] { flag::size("--buffer", "-1", 1); }).rfind("--buffer: bad size '-1'", 0), 0u);
}

TEST(Flag, ListsRefuseEmptyValuesAndItems) {
  EXPECT_EQ(flag::list("--pages", "4k,thp"), (std::vector<std::string>{"4k", "thp"}));
  EXPECT_EQ(flag_error([] { flag::list("--pages", ""); }), "--pages: no value (expected a comma-separated list)");
  EXPECT_EQ(flag_error([] { flag::list("--pages", "4k,"); }), "--pages: empty item in '4k,' (separator ',')");
  EXPECT_EQ(flag_error([] { flag::sizes("--chunks", "", 1); }), "--chunks: no value (expected a comma-separated list)");
}

TEST(Cpus, ParsesRangesAndSinglesInTheOrderWritten) {
  const std::vector<int> allowed{0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(cpus::parse("--cpus", "0-3", allowed), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(cpus::parse("--cpus", "6,2,4", allowed), (std::vector<int>{6, 2, 4}));
  EXPECT_EQ(cpus::parse("--cpus", "5,0-1", allowed), (std::vector<int>{5, 0, 1}));
  EXPECT_EQ(cpus::format({0, 1, 8}), "0,1,8");
}

TEST(Cpus, RefusesEmptyReversedRepeatedAndForbiddenCpus) {
  const std::vector<int> allowed{0, 1, 2, 3};
  EXPECT_EQ(flag_error([] { cpus::parse("--cpus", "", {0, 1}); }), "--cpus: no value (expected a comma-separated list)");
  EXPECT_EQ(flag_error([] { cpus::parse("--cpus", "3-1", {0, 1, 2, 3}); }), "--cpus: '3-1' is a reversed range");
  EXPECT_EQ(flag_error([] { cpus::parse("--cpus", "0,4", {0, 1, 2, 3}); }),
            "--cpus: CPU 4 is not one this process may run on (0,1,2,3)");
  EXPECT_EQ(flag_error([] { cpus::parse("--cpus", "0-1,1", {0, 1}); }), "--cpus: CPU 1 is listed twice");
  for (const char* bad : {"-1", "a", "1-", "0--1", "1,,2", " 1", "+1"})
    EXPECT_THROW(cpus::parse("--cpus", bad, allowed), Error) << bad;
}

TEST(Cpus, PinsTheCallingThreadAndNamesACpuItCannotUse) {
  // On a thread of its own: the test's thread keeps its affinity for the tests after it.
  const int cpu = cpus::allowed().back();
  std::vector<int> after;
  std::string refused;
  std::thread([&] {
    cpus::pin_this_thread(cpu);
    after = cpus::allowed();
    refused = testing::error_of([] { cpus::pin_this_thread(CPU_SETSIZE - 1); });
  }).join();
  EXPECT_EQ(after, std::vector<int>{cpu});
  EXPECT_EQ(refused, fmt::format("pthread_setaffinity_np(cpu {}): Invalid argument", CPU_SETSIZE - 1));
}

TEST(ThreadName, NamesOneThreadAndCutsALongNameAt15Bytes) {
  std::jthread thread([](std::stop_token stop) {
    while (!stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  threads::name_thread(thread, "wz-test");
  EXPECT_EQ(threads::thread_name(thread), "wz-test");
  threads::name_thread(thread, "wz-a-name-longer-than-the-kernel-keeps");
  EXPECT_EQ(threads::thread_name(thread), "wz-a-name-longe");
}

TEST(Cpus, AllowedIsNeverEmptyAndThreadsAllDoublesToTheCount) {
  EXPECT_FALSE(cpus::allowed().empty());
  EXPECT_EQ(cpus::doubling_up_to(1), (std::vector<int>{1}));
  EXPECT_EQ(cpus::doubling_up_to(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(cpus::doubling_up_to(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(cpus::doubling_up_to(16), (std::vector<int>{1, 2, 4, 8, 16}));
}

enum class Fruit { apple, pear, plum };
constexpr EnumNames<Fruit, 3> kFruitNames{"fruit",
                                          {{{Fruit::apple, "apple"}, {Fruit::pear, "pear"}, {Fruit::plum, "plum"}}}};

TEST(EnumNames, NameAndParseComeFromOneTable) {
  for (const Fruit fruit : {Fruit::apple, Fruit::pear, Fruit::plum})
    EXPECT_EQ(kFruitNames.parse(kFruitNames.name(fruit)), fruit);
  static_assert(kFruitNames.name(Fruit::pear) == "pear");
  static_assert(kFruitNames.find("plum") == Fruit::plum);
  EXPECT_EQ(kFruitNames.name(static_cast<Fruit>(7)), "unknown");
  EXPECT_FALSE(kFruitNames.find("Apple").has_value());  // names are exact, as flags and records spell them
}

TEST(EnumNames, AnUnknownNameIsOneLineListingTheValidForms) {
  EXPECT_EQ(testing::error_of([] { kFruitNames.parse("kiwi"); }),
            "unknown fruit 'kiwi': valid forms are apple, pear, plum");
  EXPECT_EQ(testing::error_of([] { kFruitNames.parse(std::string(100, 'x')); }),
            "unknown fruit '" + std::string(80, 'x') + "...': valid forms are apple, pear, plum");
}

TEST(PollWait, WakesByTheEarliestDeadline) {
  using Clock = std::chrono::steady_clock;
  using std::chrono::milliseconds;
  const Clock::time_point now{std::chrono::hours(1)};
  const std::vector<milliseconds> later{milliseconds(700), milliseconds(250), milliseconds(900)};
  const auto deadline_of = [&](milliseconds after) { return now + after; };
  EXPECT_EQ(earliest_deadline(now + milliseconds(500), later, deadline_of), now + milliseconds(250));
  EXPECT_EQ(earliest_deadline(now + milliseconds(100), later, deadline_of), now + milliseconds(100));
  EXPECT_EQ(earliest_deadline(Clock::time_point::max(), std::vector<milliseconds>{}, deadline_of),
            Clock::time_point::max());
}

TEST(PollWait, TimeoutIsRoundedUpZeroOncePastAndCapped) {
  using Clock = std::chrono::steady_clock;
  using namespace std::chrono;
  const Clock::time_point now{hours(1)};
  const milliseconds most(1000);
  EXPECT_EQ(poll_timeout_ms(now, now + microseconds(1), most), 1);  // not 0: that would spin until then
  EXPECT_EQ(poll_timeout_ms(now, now + microseconds(250500), most), 251);
  EXPECT_EQ(poll_timeout_ms(now, now + milliseconds(250), most), 250);
  EXPECT_EQ(poll_timeout_ms(now, now, most), 0);
  EXPECT_EQ(poll_timeout_ms(now, now - seconds(5), most), 0);
  EXPECT_EQ(poll_timeout_ms(now, now + milliseconds(1000), most), 1000);
  EXPECT_EQ(poll_timeout_ms(now, now + hours(2), most), 1000);
  EXPECT_EQ(poll_timeout_ms(now, Clock::time_point::max(), most), 1000);  // no deadline: look around anyway
}

}  // namespace
}  // namespace wirezip
