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

}  // namespace
}  // namespace corral::core
