#include "core/units.hpp"

#include <gtest/gtest.h>

namespace corral::core {
namespace {

using namespace std::chrono_literals;

TEST(ParseDuration, AcceptsUnitsAndNone) {
  EXPECT_EQ(parse_duration("250ms", "--timeout"), 250ms);
  EXPECT_EQ(parse_duration("5s", "--timeout"), 5s);
  EXPECT_EQ(parse_duration("1.5", "--timeout"), 1500ms);
  EXPECT_EQ(parse_duration("2m", "--timeout"), 120s);
  EXPECT_EQ(parse_duration("none", "--timeout"), std::nullopt);
}

TEST(ParseDuration, RejectsZeroNegativeNonFiniteAndJunkNamingTheOption) {
  for (const char* bad : {"0", "-1s", "inf", "nan", "", "s", "5 parsecs", "1e400"}) {
    try {
      parse_duration(bad, "--timeout");
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--timeout"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseSize, AcceptsUnitsAndNone) {
  EXPECT_EQ(parse_size("1048576", "--memory-limit"), 1048576u);
  EXPECT_EQ(parse_size("64MiB", "--memory-limit"), 64u << 20);
  EXPECT_EQ(parse_size("1GiB", "--memory-limit"), 1u << 30);
  EXPECT_EQ(parse_size("2kB", "--memory-limit"), 2000u);
  EXPECT_EQ(parse_size("none", "--memory-limit"), std::nullopt);
  EXPECT_THROW(parse_size("0", "--memory-limit"), std::invalid_argument);
  EXPECT_THROW(parse_size("12 bananas", "--memory-limit"), std::invalid_argument);
}

// The refusal's message, or "" when `text` was accepted.
template <typename Parse>
std::string refusal(Parse parse, std::string_view text) {
  try {
    parse(text, "--memory-limit");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string size_refusal(std::string_view text) { return refusal(parse_size, text); }
std::string duration_refusal(std::string_view text) { return refusal(parse_duration, text); }

TEST(ParseSize, BinaryAndDecimalUnitsInAnyCaseMeanOneThingEach) {
  // K, M, G, T alone or with i / iB: powers of 1024; with B alone: of 1000.
  for (const char* mib : {"64MiB", "64M", "64m", "64Mi", "64mi", "64mib", "64MIB", "64 MiB"})
    EXPECT_EQ(parse_size(mib, "--memory-limit"), std::uint64_t{64} << 20) << mib;
  for (const char* mb : {"64MB", "64mb", "64Mb", "64 MB"})
    EXPECT_EQ(parse_size(mb, "--memory-limit"), 64'000'000u) << mb;
  EXPECT_EQ(parse_size("2k", "--memory-limit"), 2048u);
  EXPECT_EQ(parse_size("2KB", "--memory-limit"), 2000u);
  EXPECT_EQ(parse_size("3G", "--memory-limit"), std::uint64_t{3} << 30);
  EXPECT_EQ(parse_size("3GB", "--memory-limit"), 3'000'000'000u);
  EXPECT_EQ(parse_size("1TiB", "--memory-limit"), std::uint64_t{1} << 40);
  EXPECT_EQ(parse_size("1TB", "--memory-limit"), 1'000'000'000'000u);
  EXPECT_EQ(parse_size("512B", "--memory-limit"), 512u);
  EXPECT_EQ(parse_size("512b", "--memory-limit"), 512u);
  EXPECT_EQ(parse_size(" 64MiB ", "--memory-limit"), std::uint64_t{64} << 20);
  EXPECT_EQ(parse_size("1.5KiB", "--memory-limit"), 1536u);
  EXPECT_EQ(parse_size("1.0001KiB", "--memory-limit"), 1024u);  // rounds down to a byte
  EXPECT_EQ(parse_size("1e3", "--memory-limit"), 1000u);
}

TEST(ParseSize, WholeNumbersAreExactUpToTheBound) {
  EXPECT_EQ(parse_size("1125899906842623", "--memory-limit"), kMaxSize - 1);
  EXPECT_EQ(parse_size("1125899906842624", "--memory-limit"), kMaxSize);
  EXPECT_EQ(parse_size("1024TiB", "--memory-limit"), kMaxSize);
  EXPECT_NE(size_refusal("1125899906842625").find("too large (at most 1024TiB)"),
            std::string::npos);
}

TEST(ParseSize, HostileTextIsRefusedWithTheAcceptedForms) {
  const std::string forms = "a size is a number of bytes, or a number with a unit";
  for (const char* unit : {"64mbit", "64 bananas", "64MiB!", "64MiBs", "64 MiB 2", "64iB", "64E",
                           "64PB", "64\xff", "64MiB\n", "0x10"}) {
    const std::string message = size_refusal(unit);
    EXPECT_NE(message.find("--memory-limit: "), std::string::npos) << unit;
    EXPECT_NE(message.find(forms), std::string::npos) << message;
  }
  for (const char* junk : {"MiB", "nan", "inf", "+5", ".", "\xc3\x28"}) {
    const std::string message = size_refusal(junk);
    EXPECT_NE(message.find("does not start with a number; " + forms), std::string::npos) << message;
  }
  for (const char* empty : {"", " \t "})
    EXPECT_NE(size_refusal(empty).find("is empty; " + forms), std::string::npos) << empty;
  for (const char* huge :
       {"99999999999999999999GiB", "99999999999999999999", "18446744073709551616", "1e400",
        "1e400KiB", "1025TiB", "17179869184GiB", "1.8e19"}) {
    EXPECT_NE(size_refusal(huge).find("is too large (at most 1024TiB)"), std::string::npos)
        << huge << ": " << size_refusal(huge);
  }
  for (const char* nothing : {"0", "0B", "0.0MiB", "-1", "-64MiB", "-0", "1e-400"})
    EXPECT_NE(size_refusal(nothing).find("must be greater than zero"), std::string::npos)
        << nothing;
  EXPECT_NE(size_refusal("0.5").find("must be at least 1 byte"), std::string::npos);
}

TEST(ParseSize, TheMessageQuotesWhatItRefusesReadably) {
  // Bytes that are not UTF-8 or not printable are shown as \xNN, and a long
  // text is cut: the message is one line of valid text.
  const std::string message = size_refusal("64\xff\n\"MiB");
  EXPECT_NE(message.find(R"("\xff\x0a\"MiB" is not a size unit)"), std::string::npos) << message;
  const std::string long_junk = size_refusal("1" + std::string(10'000, 'x'));
  EXPECT_LT(long_junk.size(), 400u);
  EXPECT_NE(long_junk.find("...\""), std::string::npos) << long_junk;
}

TEST(ParseDuration, UnitsFractionsAndBlanks) {
  EXPECT_EQ(parse_duration("1000us", "--timeout"), 1ms);
  EXPECT_EQ(parse_duration("1h", "--timeout"), 3600s);
  // Whole milliseconds, rounded up: a bound never ends before it was asked to.
  EXPECT_EQ(parse_duration("1.5ms", "--timeout"), 2ms);
  EXPECT_EQ(parse_duration("1001us", "--timeout"), 2ms);
  EXPECT_EQ(parse_duration("0.0015s", "--timeout"), 2ms);
  EXPECT_EQ(parse_duration(" 30 s ", "--timeout"), 30s);
  EXPECT_EQ(parse_duration("2147483647ms", "--timeout"), kMaxDuration);
}

TEST(FormatDuration, SpellsWhatParseDurationReadsBack) {
  EXPECT_EQ(format_duration(250ms), "250ms");
  EXPECT_EQ(format_duration(5s), "5s");
  EXPECT_EQ(format_duration(1500ms), "1.5s");
  EXPECT_EQ(format_duration(1001ms), "1.001s");
  EXPECT_EQ(format_duration(kMaxDuration), "2147483.647s");
  for (std::chrono::milliseconds d : {1ms, 999ms, 1000ms, 1010ms, 61'234ms, kMaxDuration})
    EXPECT_EQ(parse_duration(format_duration(d), "d"), d) << format_duration(d);
  // The fuzzer's find: 2147483.623 * 1000 is 2147483623.0000002 in doubles,
  // which rounding up made one millisecond more. Every duration near the
  // ceiling, where the products' errors are largest, reads back exactly.
  EXPECT_EQ(parse_duration("2147483.623s", "d"), 2'147'483'623ms);
  for (std::int64_t ms = kMaxDuration.count() - 5000; ms <= kMaxDuration.count(); ++ms) {
    const std::chrono::milliseconds d(ms);
    ASSERT_EQ(parse_duration(format_duration(d), "d"), d) << format_duration(d);
  }
  // A real fraction still rounds up.
  EXPECT_EQ(parse_duration("2147483.6225s", "d"), 2'147'483'623ms);
}

TEST(ParseDuration, TooLongIsRefusedNotWrapped) {
  // 1e10 s would overflow a clock's arithmetic: refused, with the bound.
  for (const char* huge : {"1e10", "1e10s", "2147483648ms", "596524h", "1e400", "1e400h",
                           "99999999999999999999999999999h"}) {
    EXPECT_NE(duration_refusal(huge).find("is too long (at most 2147483647ms, about 24.8 days)"),
              std::string::npos)
        << huge << ": " << duration_refusal(huge);
  }
}

TEST(ParseDuration, HostileTextIsRefusedWithTheAcceptedForms) {
  const std::string forms = "a duration is a number with a unit: us, ms, s, m or h";
  for (const char* bad : {"5 parsecs", "5S", "5sec", "5ms!", "1d", "5s5", "5\xff"})
    EXPECT_NE(duration_refusal(bad).find(forms), std::string::npos) << duration_refusal(bad);
  for (const char* junk : {"", "s", "nan", "inf", "+1s", "\xc3\x28"})
    EXPECT_NE(duration_refusal(junk).find(forms), std::string::npos) << duration_refusal(junk);
  for (const char* nothing : {"0", "0s", "-1s", "-0", "1e-400"})
    EXPECT_NE(duration_refusal(nothing).find("must be greater than zero"), std::string::npos)
        << nothing;
  for (const char* tiny : {"0.0001us", "100us", "0.5ms", "0.0009s"})
    EXPECT_NE(duration_refusal(tiny).find("must be at least 1ms"), std::string::npos) << tiny;
}

}  // namespace
}  // namespace corral::core
