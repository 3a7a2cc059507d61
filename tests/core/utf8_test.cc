// tests/core/utf8_test.cc: the one UTF-8 decoder and its policy (replace
// ill-formed subparts with U+FFFD, cut between characters) against hostile
// byte strings, and the JSON writer that applies it as a last net.
#include "core/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/json.hpp"

namespace corral::core {
namespace {

const std::string kFffd(kReplacementCharacter);

std::string replaced(std::string text) {
  replace_invalid_utf8(text);
  return text;
}

std::string repeat_fffd(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += kFffd;
  return out;
}

TEST(Utf8Replace, ValidTextIsUntouchedAndNotReported) {
  for (std::string text : {std::string(), std::string("plain ascii"), std::string("h\u00e9 \u20ac"),
                           std::string("\U0001F600 \U0010FFFF \uFFFD"), std::string("\0x", 2)}) {
    std::string copy = text;
    EXPECT_TRUE(is_valid_utf8(text));
    EXPECT_FALSE(replace_invalid_utf8(copy));
    EXPECT_EQ(copy, text);
  }
}

TEST(Utf8Replace, SingleBadBytesEachBecomeOneReplacement) {
  for (int byte = 0x80; byte <= 0xFF; ++byte) {
    std::string text = "a";
    text += static_cast<char>(byte);
    text += "b";
    // A lead byte followed by 'b' is cut before its continuation: still one
    // subpart, so every single high byte here reads as one U+FFFD.
    std::string copy = text;
    EXPECT_TRUE(replace_invalid_utf8(copy)) << byte;
    EXPECT_EQ(copy, "a" + kFffd + "b") << byte;
    EXPECT_FALSE(is_valid_utf8(text)) << byte;
  }
}

TEST(Utf8Replace, BytesF5ToFfNeverStartACharacter) {
  for (int byte = 0xF5; byte <= 0xFF; ++byte) {
    std::string text(1, static_cast<char>(byte));
    text += "\x80\x80\x80";
    // The lead byte is one subpart, each stray continuation another.
    EXPECT_EQ(replaced(text), repeat_fffd(4)) << byte;
  }
  EXPECT_EQ(replaced("\xC0\x80"), repeat_fffd(2));  // 0xC0, 0xC1: always overlong
  EXPECT_EQ(replaced("\xC1\xBF"), repeat_fffd(2));
}

TEST(Utf8Replace, OverlongEncodingsAreRejected) {
  EXPECT_EQ(replaced("\xC0\xAF"), repeat_fffd(2));          // '/' in two bytes
  EXPECT_EQ(replaced("\xE0\x80\xAF"), repeat_fffd(3));      // '/' in three
  EXPECT_EQ(replaced("\xE0\x9F\xBF"), repeat_fffd(3));      // U+07FF in three
  EXPECT_EQ(replaced("\xF0\x80\x80\xAF"), repeat_fffd(4));  // '/' in four
  EXPECT_EQ(replaced("\xF0\x8F\xBF\xBF"), repeat_fffd(4));  // U+FFFF in four
  EXPECT_TRUE(is_valid_utf8("\xE0\xA0\x80"));               // U+0800: the first three-byte one
  EXPECT_TRUE(is_valid_utf8("\xF0\x90\x80\x80"));           // U+10000
}

TEST(Utf8Replace, EncodedSurrogatesAreRejected) {
  for (int second = 0xA0; second <= 0xBF; ++second) {
    std::string text = "\xED";
    text += static_cast<char>(second);
    text += "\x80";
    EXPECT_FALSE(is_valid_utf8(text)) << second;
    EXPECT_EQ(replaced(text), repeat_fffd(3)) << second;
  }
  // A surrogate pair written as two three-byte sequences (CESU-8).
  EXPECT_EQ(replaced("\xED\xA0\xBD\xED\xB8\x80"), repeat_fffd(6));
  EXPECT_TRUE(is_valid_utf8("\xED\x9F\xBF"));  // U+D7FF, just below
  EXPECT_TRUE(is_valid_utf8("\xEE\x80\x80"));  // U+E000, just above
}

TEST(Utf8Replace, CodePointsPast10FFFFAreRejected) {
  EXPECT_EQ(replaced("\xF4\x90\x80\x80"), repeat_fffd(4));  // U+110000
  EXPECT_EQ(replaced("\xF7\xBF\xBF\xBF"), repeat_fffd(4));  // U+1FFFFF
  EXPECT_EQ(replaced("\xF8\x88\x80\x80\x80"), repeat_fffd(5));
  EXPECT_EQ(replaced("\xFC\x84\x80\x80\x80\x80"), repeat_fffd(6));
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
}

TEST(Utf8Replace, TruncatedSequencesAreOneReplacementEach) {
  EXPECT_EQ(replaced("\xE2\x82"), kFffd);  // "€" cut at the end
  EXPECT_EQ(replaced("x\xF0\x9F\x98"), "x" + kFffd);
  EXPECT_EQ(replaced("\xE2\x82x"), kFffd + "x");  // cut in the middle
  EXPECT_EQ(replaced("\xF0\x9F\xE2\x82\xAC"), kFffd + "\u20ac");
  EXPECT_EQ(replaced("\xC3"), kFffd);
}

TEST(Utf8Replace, MaximalSubpartsAsUnicodeRecommends) {
  // Unicode 15, table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  EXPECT_EQ(replaced("a\xF1\x80\x80\xE1\x80\xC2"
                     "b\x80"
                     "c\x80\xBF"
                     "d"),
            std::string("a") + repeat_fffd(3) + "b" + kFffd + "c" + repeat_fffd(2) + "d");
}

TEST(Utf8Replace, AppendCopiesValidRunsAroundEachReplacement) {
  std::string out = "> ";
  EXPECT_TRUE(append_valid_utf8(out, "ok\xFFok"));
  EXPECT_EQ(out, "> ok" + kFffd + "ok");
  EXPECT_FALSE(append_valid_utf8(out, "!"));
  EXPECT_EQ(out, "> ok" + kFffd + "ok!");
}

TEST(Utf8Cut, NeverSplitsACharacter) {
  const std::string text = "a\u00e9\u20ac\U0001F600";  // 1 + 2 + 3 + 4 bytes
  const std::size_t expected[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
  for (std::size_t max = 0; max <= text.size(); ++max) {
    EXPECT_EQ(utf8_cut(text, max), expected[max]) << max;
    EXPECT_TRUE(is_valid_utf8(std::string_view(text).substr(0, utf8_cut(text, max)))) << max;
  }
  EXPECT_EQ(utf8_cut(text, 100), text.size());
}

TEST(Utf8Cut, IllFormedTextIsNotEmptied) {
  const std::string stray(16, '\x80');  // continuation bytes only
  EXPECT_EQ(utf8_cut(stray, 8), 8u);
  EXPECT_EQ(utf8_cut("\xFF\xFF\xFF\xFF", 2), 2u);
  // A lead byte whose sequence is ill-formed anyway is not backed over.
  EXPECT_EQ(utf8_cut("ab\xE2x\x80", 3), 3u);
}

TEST(Utf8Complete, DropsOnlyATrailingPrefixOfACharacter) {
  EXPECT_EQ(utf8_complete("abc"), 3u);
  EXPECT_EQ(utf8_complete("ab\xE2\x82"), 2u);
  EXPECT_EQ(utf8_complete("ab\xF0\x9F\x98"), 2u);
  EXPECT_EQ(utf8_complete("ab\xC3"), 2u);
  EXPECT_EQ(utf8_complete("ab\xE2\x82\xAC"), 5u);  // whole
  EXPECT_EQ(utf8_complete("ab\xFF"), 3u);          // ill-formed, not a prefix: kept
  EXPECT_EQ(utf8_complete("ab\xED\xA0"), 4u);      // a surrogate's start is no prefix
  EXPECT_EQ(utf8_complete(""), 0u);
}

TEST(JsonWriter, NeverWritesInvalidUtf8) {
  // The writer is the last net: text that skipped the policy is still JSON.
  const std::string hostile = std::string("a\xFF") + "\xED\xA0\x80" + "\xC0\xAF" + "\xE2\x82";
  const std::string text = json::serialize(json::string_view(hostile.data(), hostile.size()));
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(json::parse(text).as_string(), std::string("a") + repeat_fffd(1 + 3 + 2 + 1));
  // Valid multi-byte text and escapes pass as before.
  EXPECT_EQ(json::serialize(json::string_view("\u00e9\"\n\U0001F600")),
            "\"\u00e9\\\"\\n\U0001F600\"");
}

}  // namespace
}  // namespace corral::core
