// corral's JSON writer (core::json::serialize): numbers as people and other
// JSON libraries write them, everything else as Boost.JSON writes it.
#include "core/json.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <random>

namespace corral::core {
namespace {

// The writer's text of `d`, checked to read back as the same double (with
// std::from_chars: Boost 1.81's own parser is off by one unit in the last
// place for some inputs, whoever wrote them) and as a double for Boost.
std::string written(double d) {
  const std::string text = json::serialize(json::value(d));
  double back = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), back);
  EXPECT_TRUE(ec == std::errc() && end == text.data() + text.size()) << text;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(back), std::bit_cast<std::uint64_t>(d)) << text;
  EXPECT_TRUE(json::parse(text).is_double()) << text;
  return text;
}

TEST(JsonWriter, DoublesInTheShortestFormThatReadsBack) {
  EXPECT_EQ(written(2.803851215), "2.803851215");  // Boost 1.81: 2.803851215E0
  EXPECT_EQ(written(0.1), "0.1");
  EXPECT_EQ(written(2.5), "2.5");
  EXPECT_EQ(written(-1.25), "-1.25");
  EXPECT_EQ(written(1e21), "1e+21");
  EXPECT_EQ(written(1e-7), "1e-7");  // JavaScript's spelling, not 1e-07
  EXPECT_EQ(written(1.5e-300), "1.5e-300");
  EXPECT_EQ(written(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(written(std::numeric_limits<double>::denorm_min()), "5e-324");
  EXPECT_EQ(written(18446744073709551616.0), "18446744073709551616.0");  // fixed is shorter
  EXPECT_EQ(written(1e22), "1e+22");
}

TEST(JsonWriter, AWholeDoubleKeepsItsPointSoItReadsBackAsADouble) {
  EXPECT_EQ(written(3.0), "3.0");
  EXPECT_EQ(written(0.0), "0.0");
  EXPECT_EQ(written(-0.0), "-0.0");
  EXPECT_EQ(written(123456789.0), "123456789.0");
}

TEST(JsonWriter, RandomDoublesReadBackExactly) {
  std::mt19937_64 random(12);
  for (int i = 0; i < 20000; ++i) {
    const double d = std::bit_cast<double>(random());
    if (!std::isfinite(d)) continue;
    const std::string text = written(d);
    ASSERT_EQ(text.find('E'), std::string::npos) << text;
  }
}

TEST(JsonWriter, NonFiniteDoublesAreNullSoTheTextStaysJson) {
  // Boost 1.81 writes Infinity and NaN, which no JSON parser reads.
  const json::value parsed = json::parse("[1e400, -1e400]");
  ASSERT_TRUE(std::isinf(parsed.at(0).as_double()));
  EXPECT_EQ(json::serialize(parsed), "[null,null]");
  EXPECT_EQ(json::serialize(json::value(std::nan(""))), "null");
}

TEST(JsonWriter, IntegersAsIntegers) {
  EXPECT_EQ(json::serialize(json::value(std::numeric_limits<std::int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(json::serialize(json::value(std::numeric_limits<std::int64_t>::max())),
            "9223372036854775807");
  EXPECT_EQ(json::serialize(json::value(std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615");
  EXPECT_EQ(json::serialize(json::parse("[0,-1,42]")), "[0,-1,42]");
}

TEST(JsonWriter, StringsAndStructureAsBoostWritesThem) {
  std::string every_byte;
  // Every ASCII byte: from 0x80 up Boost writes bytes as they are and corral's
  // writer makes them UTF-8 first (Utf8Replace and JsonWriter.NeverWritesInvalidUtf8).
  for (int c = 1; c < 128; ++c) every_byte += static_cast<char>(c);
  json::object o;
  o["every byte"] = every_byte;
  o["quote \" and \\ in a key"] = "é, 日本, 🙂";
  o["nested"] = json::array{json::object{},
                            json::array{},
                            nullptr,
                            true,
                            false,
                            7,
                            -7,
                            json::object{{"k", json::array{1, json::array{2}}}}};
  o["empty"] = "";
  o[""] = std::string(1, '\0');
  const json::value v = o;
  EXPECT_EQ(json::serialize(v), boost::json::serialize(v));
  // Every overload writes what the value overload writes.
  EXPECT_EQ(json::serialize(o), json::serialize(v));
  EXPECT_EQ(json::serialize(o.at("nested").as_array()), json::serialize(o.at("nested")));
  EXPECT_EQ(json::serialize(o.at("every byte").as_string()), json::serialize(o.at("every byte")));
  EXPECT_EQ(json::serialize(json::string_view("a\nb")), "\"a\\nb\"");
  EXPECT_EQ(json::serialize(json::array{}), "[]");
  EXPECT_EQ(json::serialize(json::object{}), "{}");
  // It reads back.
  EXPECT_EQ(json::parse(json::serialize(o)), json::value(o));
}

TEST(JsonWriter, DeepNestingNeedsNoDeepStack) {
  constexpr int kDepth = 5000;  // Boost's destructor recurses; keep it modest
  json::value v = json::array{};
  for (int i = 0; i < kDepth; ++i) v = json::array{std::move(v)};
  json::object holder{{"deep", std::move(v)}};
  const std::string text = json::serialize(holder);
  EXPECT_EQ(text, "{\"deep\":" + std::string(kDepth + 1, '[') + std::string(kDepth + 1, ']') + "}");
}

TEST(JsonWriter, TheExecutionsJsonFormWritesUsageNumbersPlainly) {
  ExecutionData data;
  data.value = "[0.1,2.5, 1e21]";
  data.usage = Usage{2.803851215, 0.5, 4096, 0, 3};
  const std::string text = to_json(Execution(data));
  // The value is JSON text already and goes out as it is, not rewritten.
  EXPECT_NE(text.find(R"({"value":[0.1,2.5, 1e21],"stdout")"), std::string::npos) << text;
  EXPECT_EQ(json::parse(text).at("value"), json::parse("[0.1,2.5,1e21]")) << text;
  EXPECT_NE(text.find(R"("wall_time":2.803851215)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("cpu_time":0.5)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("memory_peak":4096)"), std::string::npos) << text;
}

// Regression (fuzz_json): Boost 1.81 reads some decimal text one ulp off, so
// a double the writer printed came back as its neighbour and drifted on every
// hop. core::json::parse reads every double correctly rounded.
TEST(JsonParser, ReadsEveryDoubleTheWriterPrintsAsThatDouble) {
  const double d = json::parse("1.8446700004512874e+28").as_double();
  double exact = 0;
  const std::string text = "1.8446700004512874e+28";
  std::from_chars(text.data(), text.data() + text.size(), exact);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(d), std::bit_cast<std::uint64_t>(exact));

  std::mt19937_64 random(13);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::bit_cast<double>(random());
    if (!std::isfinite(v)) continue;
    const std::string written = json::serialize(json::value(v));
    const double back = json::parse(written).as_double();
    ASSERT_EQ(std::bit_cast<std::uint64_t>(back), std::bit_cast<std::uint64_t>(v)) << written;
  }
}

// The fuzzer's input: a 29-digit integer, too wide for any integer type.
TEST(JsonParser, WideNumbersSurviveAWriteAndAReadUnchanged) {
  const json::value first = json::parse("18446700004512875348590740990");
  ASSERT_TRUE(first.is_double());
  EXPECT_EQ(first.as_double(), 18446700004512875348590740990.0);
  const std::string once = json::serialize(first);
  EXPECT_EQ(json::serialize(json::parse(once)), once);
  EXPECT_EQ(json::serialize(json::parse("[1e400,-1e400,1e-400]")), "[null,null,0.0]");
}

TEST(JsonParser, RefusesWhatBoostRefusesAndNestsToTheDocumentedDepth) {
  for (const char* bad : {"", "1 2", "[1,]", "{\"a\":1,}", "01", "1.", "-", "[", "\"\\ud800\"x",
                          "nul", "/* c */ 1", "\"\xff\""}) {
    boost::system::error_code ec;
    (void)json::parse(bad, ec);
    EXPECT_TRUE(ec) << bad;
    std::error_code sec;
    (void)json::parse(bad, sec);
    EXPECT_TRUE(sec) << bad;
    EXPECT_THROW((void)json::parse(bad), boost::system::system_error) << bad;
  }
  const std::string ok =
      std::string(json::kMaxParseDepth, '[') + std::string(json::kMaxParseDepth, ']');
  EXPECT_NO_THROW((void)json::parse(ok));
  const std::string deep = "[" + ok + "]";
  boost::system::error_code ec;
  (void)json::parse(deep, ec);
  EXPECT_TRUE(ec);
  EXPECT_EQ(json::serialize(json::parse("{\"k\":[1,-2,18446744073709551615,0.5,true,null,\"s\"]}")),
            "{\"k\":[1,-2,18446744073709551615,0.5,true,null,\"s\"]}");
}

}  // namespace
}  // namespace corral::core
