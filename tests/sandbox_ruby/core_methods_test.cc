// Ruby guests: the Ruby 3.1 core methods the prelude adds to mruby 3.1
// (src/sandbox/ruby/core_prelude.hpp). Expected values are CRuby 3.1's,
// checked against Debian's ruby 3.1 when the methods were written.
#include <chrono>
#include <string>

#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

// The JSON value of `code`, or the failure's code and message.
std::string value_of(RubySandbox& sandbox, const std::string& code) {
  try {
    return sandbox.eval(code).value();
  } catch (const Error& e) {
    return std::string("failed: ") + std::string(to_string(e.code())) + ": " + e.what();
  }
}

class RubyCore : public ::testing::Test {
 protected:
  std::string v(const std::string& code) { return value_of(sandbox_, code); }
  RubySandbox sandbox_{ruby_options()};
};

TEST_F(RubyCore, ArraySum) {
  EXPECT_EQ(v("[[1, 2, 3].sum, [1, 2, 3].sum(10), [].sum, [1, 2].sum { |x| x * 2 }, "
              "[1, 2].sum(10) { |x| x * 2 }]"),
            "[6,16,0,6,16]");
  EXPECT_EQ(v("[[[1], [2]].sum([]), %w[a b].sum(''), [].sum(0.0).class.to_s, "
              "[1, 2.5, 3].sum == 6.5, [Rational(1, 2), 1].sum == Rational(3, 2)]"),
            R"([[1,2],"ab","Float",true,true])");
  // Kahan-Babuska, as CRuby, but in this build's word-boxed Floats (2 bits
  // short of a double): closer than adding one by one, not always CRuby's
  // last digit. The big values cancel exactly where + alone gives 0.0.
  EXPECT_EQ(v("d = ([0.1] * 10).sum - 1.0; n = ([0.1] * 10).inject(:+) - 1.0; "
              "[d.abs < n.abs, d.abs < 1e-15, (([0.1] * 10).sum(0.0) - 1.0).abs < 1e-15, "
              "[1e100, 1.0, -1e100].sum, [1e100, 1.0, -1e100].inject(:+)]"),
            "[true,true,true,1,0]");
  EXPECT_EQ(v("[[Float::INFINITY, -Float::INFINITY].sum.nan?, [Float::NAN, 1.0].sum.nan?, "
              "[1.0, Float::INFINITY].sum == Float::INFINITY]"),
            "[true,true,true]");
  EXPECT_EQ(v("begin; %w[a b].sum; rescue TypeError; 'TypeError'; end"), R"("TypeError")");
  // No Bignum: an overflowing sum raises instead of wrapping.
  EXPECT_EQ(v("begin; [2**62, 2**62].sum; rescue RangeError; 'RangeError'; end"),
            R"("RangeError")");
}

TEST_F(RubyCore, EnumerableAndHashSum) {
  EXPECT_EQ(v("k = Class.new { include Enumerable; def each; yield 1; yield 2; end }; "
              "[k.new.sum, k.new.sum(0.5) == 3.5, k.new.sum { |x| x * 10 }]"),
            "[3,true,30]");
  EXPECT_EQ(
      v("[{a: 1, b: 2}.sum { |k, v| v }, {a: 1}.sum([]), "
        "(1..4).each_slice(2).sum { |a, b| a * b }, (([0.1] * 10).each.sum - 1.0).abs < 1e-15, "
        "%w[a b].each_with_index.sum([])]"),
      R"([3,["a",1],14,true,["a",0,"b",1]])");
  EXPECT_EQ(v("begin; {a: 1}.sum; rescue TypeError; 'TypeError'; end"), R"("TypeError")");
}

TEST_F(RubyCore, RangeSumIsArithmeticForIntegerRanges) {
  EXPECT_EQ(v("[(1..10).sum, (1...10).sum, (5..1).sum, (3..1).sum(7), (1..3).sum { |x| x * x }, "
              "(-3..3).sum, (4..4).sum, (1..3.5).sum, ('a'..'c').sum('')]"),
            R"([55,45,0,7,14,0,4,6,"abc"])");
  EXPECT_EQ(v("[(1..3).sum(0.5) == 6.5, (1..3).sum(Rational(1, 2)) == Rational(13, 2)]"),
            "[true,true]");
  // Billions of elements in well under the timeout (iterating would take
  // minutes), including one whose n * (first + last) overflows 64 bits.
  Options quick = ruby_options();
  quick.timeout = std::chrono::seconds(2);
  RubySandbox sandbox(quick);
  EXPECT_EQ(value_of(sandbox, "[(1..10**9).sum, (1..4 * 10**9).sum, (-10**9..10**9).sum]"),
            "[500000000500000000,8000000002000000000,0]");
  EXPECT_EQ(value_of(sandbox, "(2**61..2**61).sum"), "2305843009213693952");
  EXPECT_EQ(value_of(sandbox, "begin; (1..10**10).sum; rescue RangeError; 'RangeError'; end"),
            R"("RangeError")");
  // A block (or a Float init) iterates, as in CRuby: the timeout ends it.
  expect_failure(FailureCode::timeout, [&] { sandbox.eval("(1..10**18).sum { |x| x }"); });
  expect_failure(FailureCode::timeout, [&] { sandbox.eval("(1..).sum"); });
  EXPECT_EQ(value_of(sandbox, "6 * 7"), "42");
}

TEST_F(RubyCore, IntegerParityPredDigitsFdiv) {
  EXPECT_EQ(v("[2.even?, 3.even?, 3.odd?, -3.odd?, 0.even?, 4.pred, 1234.digits, 255.digits(16), "
              "0.digits, 10.digits(2.5)]"),
            "[true,false,true,true,true,3,[4,3,2,1],[15,15],[0],[0,1,0,1]]");
  EXPECT_EQ(v("[-> { -5.digits }, -> { 10.digits(1) }, -> { 10.digits(-2) }].map { |f| "
              "begin; f.call; rescue => e; e.class.to_s; end }"),
            R"(["Math::DomainError","ArgumentError","ArgumentError"])");
  EXPECT_EQ(v("[7.fdiv(2), 1.5.fdiv(2), 1.fdiv(0) == Float::INFINITY]"), "[3.5,0.75,true]");
}

TEST_F(RubyCore, IntegerPowGcdLcmBitLengthSqrt) {
  EXPECT_EQ(v("[2.pow(10), 2.pow(100, 7), 3.pow(2, -5), (-3).pow(3, 5), "
              "12345678901.pow(98765, 10**15 + 37), 2.pow(10**18, 1_000_000_007)]"),
            "[1024,2,-1,3,283321354533632,719476260]");
  EXPECT_EQ(v("[[3, -2, 5], [3, 2.0, 5], [3, 2, 0]].map { |b, e, m| "
              "begin; b.pow(e, m); rescue => x; x.class.to_s; end }"),
            R"(["RangeError","TypeError","ZeroDivisionError"])");
  EXPECT_EQ(v("[12.gcd(18), -12.gcd(18), 0.gcd(0), 4.lcm(6), -4.lcm(6), 0.lcm(5), 4.gcdlcm(6), "
              "begin; 4.gcd(2.0); rescue TypeError; 'TypeError'; end]"),
            R"([6,6,0,12,12,0,[2,12],"TypeError"])");
  EXPECT_EQ(v("[255.bit_length, 256.bit_length, 0.bit_length, -1.bit_length, -256.bit_length, "
              "(2**62).bit_length]"),
            "[8,9,0,0,8,63]");
  EXPECT_EQ(v("[Integer.sqrt(17), Integer.sqrt(16), Integer.sqrt(0), Integer.sqrt(24.9), "
              "Integer.sqrt(2**62), Integer.sqrt(9223372036854775807), Integer.sqrt(10**18 - 1), "
              "begin; Integer.sqrt(-1); rescue Math::DomainError; 'DomainError'; end]"),
            R"([4,4,0,4,2147483648,3037000499,999999999,"DomainError"])");
}

TEST_F(RubyCore, IntegerRoundingWithNegativeDigits) {
  EXPECT_EQ(v("[1234.round(-2), 1250.round(-2), -1250.round(-2), 1250.round(-2, half: :even), "
              "1350.round(-2, half: :even), 1250.round(-2, half: :down), 15.round(-1, half: nil), "
              "5.round(-20), 1234.round(1), 1234.round]"),
            "[1200,1300,-1300,1200,1400,1200,20,0,1234,1234]");
  EXPECT_EQ(v("[1234.floor(-2), -1234.floor(-2), 1234.ceil(-2), -1234.ceil(-2), "
              "-1234.truncate(-2), 1299.truncate(-2), 7.floor, 7.ceil(2)]"),
            "[1200,-1300,1300,-1200,-1200,1200,7,7]");
  EXPECT_EQ(v("begin; 1.round(-1, half: :foo); rescue ArgumentError => e; e.message; end"),
            R"("invalid rounding mode: foo")");
}

TEST_F(RubyCore, ComparableClampTakesARange) {
  EXPECT_EQ(v("[15.clamp(1, 10), 15.clamp(1..10), 15.clamp(..10), 15.clamp(1..), -1.clamp(0..), "
              "'b'.clamp('c'..'d'), 2.5.clamp(1..2)]"),
            R"([10,10,10,15,0,"c",2])");
  EXPECT_EQ(v("[-> { 15.clamp(1...10) }, -> { 5.clamp(7, 3) }, -> { 5.clamp(7..3) }].map { |f| "
              "begin; f.call; rescue ArgumentError => e; e.message; end }"),
            R"(["cannot clamp with an exclusive range","min argument must be smaller than max )"
            R"(argument","min argument must be smaller than max argument"])");
}

TEST_F(RubyCore, EnumerableChunkingAndEntries) {
  EXPECT_EQ(v("[[1, 2, 4, 5, 7].chunk_while { |a, b| b == a + 1 }.to_a, "
              "[1, 2, 4, 5, 7].slice_when { |a, b| b != a + 1 }.to_a, "
              "[].chunk_while { |a, b| true }.to_a, "
              "(1..).chunk_while { |a, b| b == a + 1 && b % 3 != 0 }.first(2)]"),
            "[[[1,2],[4,5],[7]],[[1,2],[4,5],[7]],[],[[1,2],[3,4,5]]]");
  EXPECT_EQ(v("[[1, 1, 2, 3, 3].chunk { |x| x.odd? }.to_a, "
              "[1, 2, -1, 3].chunk { |x| x > 0 ? :pos : nil }.to_a, "
              "[1, -1, 3].chunk { |x| x > 0 ? :_alone : :neg }.to_a, "
              "begin; [1].chunk { :_x }.to_a; rescue RuntimeError; 'reserved'; end]"),
            R"([[[true,[1,1]],[false,[2]],[true,[3,3]]],[["pos",[1,2]],["pos",[3]]],)"
            R"([["_alone",[1]],["neg",[-1]],["_alone",[3]]],"reserved"])");
  EXPECT_EQ(
      v("[(1..3).each_entry.to_a, %w[a b].each_with_index.each_entry.to_a, "
        "[1, nil, 2].each.compact, (1..).lazy.map { |x| x.even? ? nil : x }.compact.first(2)]"),
      R"([[1,2,3],[["a",0],["b",1]],[1,2],[1,3]])");
}

TEST_F(RubyCore, EnumerableFilterMapTallyAndLazy) {
  EXPECT_EQ(v("[(1..5).filter_map { |x| x * 2 if x.odd? }, "
              "%w[a b c].each_with_index.filter_map { |x, i| x * i if i > 0 }, "
              "{a: 1, b: 2}.filter_map { |k, v| k if v > 1 }, "
              "(1..).lazy.filter_map { |x| x * 2 if x.even? }.first(2), "
              "(1..).lazy.filter(&:even?).first(2)]"),
            R"([[2,6,10],["b","cc"],["b"],[4,8],[2,4]])");
  EXPECT_EQ(v("[%w[a b a].tally, %w[a b a].tally({'a' => 5}), "
              "%w[a b].each_with_index.tally.keys]"),
            R"([{"a":2,"b":1},{"a":7,"b":1},[["a",0],["b",1]]])");
}

TEST_F(RubyCore, MinMaxWithACount) {
  EXPECT_EQ(v("[[5, 3, 1, 4].min(2), [5, 3, 1, 4].max(2), [5, 3, 1, 4].min(0), "
              "[5, 3, 1, 4].min(10), [5, 3, 1, 4].min(2) { |a, b| b <=> a }, (1..10).max(2), "
              "(1..10).min(3), [3, 1].min, (1..5).max { |a, b| (a % 3) <=> (b % 3) }]"),
            "[[1,3],[5,4],[],[1,3,4,5],[5,4],[10,9],[1,2,3],1,2]");
  EXPECT_EQ(v("[%w[aa b ccc dd].max_by(2, &:size), %w[aa b ccc dd].min_by(2, &:size), "
              "{a: 1, b: 2, c: 0}.min_by(2) { |_, v| v }, %w[a b].max_by(2).class.to_s, "
              "begin; [1].min(-1); rescue ArgumentError => e; e.message; end]"),
            R"j([["ccc","aa"],["b","aa"],[["c",0],["a",1]],"Enumerator","negative size (-1)"])j");
}

TEST_F(RubyCore, ArrayJoinStarAndSortByBang) {
  EXPECT_EQ(v("[[1, 2] * ',', [[1, [2]], 3] * '-', [1, 2] * 2]"), R"(["1,2","1-2-3",[1,2,1,2]])");
  EXPECT_EQ(v("a = [3, 1, 2]; r = a.sort_by! { |x| -x }; [a, r.equal?(a), a.sort_by!.class.to_s]"),
            R"([[3,2,1],true,"Enumerator"])");
}

TEST_F(RubyCore, HashToHWithABlockAndTransformKeysWithAHash) {
  EXPECT_EQ(v("[{a: 1}.to_h { |k, v| [v.to_s, k] }, {a: 1}.to_h, "
              "begin; {a: 1}.to_h { 5 }; rescue TypeError; 'TypeError'; end]"),
            R"([{"1":"a"},{"a":1},"TypeError"])");
  EXPECT_EQ(v("h = {a: 1, b: 2}; [h.transform_keys(a: :x), h.transform_keys({a: :x}, &:to_s), "
              "h.transform_keys(&:to_s), h.dup.transform_keys!(b: :y)]"),
            R"([{"x":1,"b":2},{"x":1,"b":2},{"a":1,"b":2},{"a":1,"y":2}])");
}

TEST_F(RubyCore, InspectPrintsASharedValueEveryTime) {
  Execution e = sandbox_.eval(
      "a = [1]; h = {x: 1}; s = Struct.new(:v).new(2); p [a, a], [h, h], [s, s]; "
      "r = [1]; r << r; p r; q = {}; q[:q] = q; p q; nil");
  EXPECT_EQ(e.stdout_text(),
            "[[1], [1]]\n[{:x=>1}, {:x=>1}]\n[#<struct v=2>, #<struct v=2>]\n[1, [...]]\n"
            "{:q=>{...}}\n");
}

TEST_F(RubyCore, StringScanUnaryPlusMinusAsciiOnlyAndSymbolAffixes) {
  EXPECT_EQ(v("[ 'a1a2a'.scan('a'), 'aaaa'.scan('aa'), 'abc'.scan(''), 'abc'.scan('x'), "
              "begin; 'abc'.scan(1); rescue TypeError; 'TypeError'; end]"),
            R"([["a","a","a"],["aa","aa"],["","","",""],[],"TypeError"])");
  EXPECT_EQ(v("out = []; r = 'a1a'.scan('a') { |m| out << m }; [out, r]"), R"([["a","a"],"a1a"])");
  EXPECT_EQ(v("f = 'a'.freeze; m = 'b'; [(+f).frozen?, (+m).equal?(m), (-m).frozen?, "
              "(-m).equal?(m), (-f).equal?(f)]"),
            "[false,true,true,false,true]");
  EXPECT_EQ(v("['ab'.ascii_only?, \"\\u00e9\".ascii_only?, :abc.start_with?('x', 'a'), "
              ":abc.end_with?('bc'), :abc.start_with?('b')]"),
            "[true,false,true,true,false]");
}

TEST_F(RubyCore, KernelPrintfPpPutcDisplayAndPublicSend) {
  Execution e = sandbox_.eval(
      "r1 = printf('%05.1f|%-3s|', 3.14159, 'a'); $stdout.printf('%d', 7); $stderr.printf('e%d', "
      "1); "
      "r2 = pp({a: 1}); r3 = pp(1, 2); r4 = pp; putc 65; putc 'xyz'; 12.display; "
      "[r1, r2, r3, r4, 1.public_send(:+, 2)]");
  EXPECT_EQ(e.stdout_text(), "003.1|a  |7{:a=>1}\n1\n2\nAx12");
  EXPECT_EQ(e.stderr_text(), "e1");
  EXPECT_EQ(e.value(), R"([null,{"a":1},[1,2],null,3])");
}

TEST_F(RubyCore, CatchAndThrow) {
  EXPECT_EQ(v("[catch(:a) { throw :a, 5 }, catch(:a) { 10 }, catch(:a) { throw :a }, "
              "catch { |t| throw t, 7 }, catch(:a) { catch(:b) { throw :a, 1 }; 2 }, "
              "catch(:a) { begin; throw :a, 3; rescue => e; :rescued; end }, "
              "(r = []; catch(:a) { begin; throw :a; ensure; r << :ensured; end }; r)]"),
            R"([5,10,null,7,1,3,["ensured"]])");
  EXPECT_EQ(v("begin; catch(:a) { throw :b }; rescue UncaughtThrowError => e; "
              "[e.message, e.tag, e.is_a?(ArgumentError)]; end"),
            R"(["uncaught throw :b","b",true])");
}

TEST_F(RubyCore, RandWithARangeIsDeterministicInTheHermeticProfile) {
  const char* code =
      "[Array.new(20) { rand(1..6) }, rand(1...1), rand(1..1), rand(2.0..2.0), "
      "Array.new(20) { rand(1..6) }.all? { |x| (1..6).include?(x) }, "
      "Array.new(20) { rand(1.0...2.0) }.all? { |x| x >= 1.0 && x < 2.0 }, "
      "Random.new(3).rand(10..12).between?(10, 12), Random.rand(5..5), "
      "begin; Random.new(1).rand(1..0); rescue ArgumentError; 'ArgumentError'; end]";
  const std::string first = v(code);
  EXPECT_EQ(first, v(code));  // the same stream in every run
  EXPECT_TRUE(contains(first, R"(,null,1,2,true,true,true,5,"ArgumentError"])")) << first;
}

TEST_F(RubyCore, StructKeywordInit) {
  EXPECT_EQ(v("S = Struct.new(:a, :b, keyword_init: true); "
              "[S.new(a: 1).to_a, S.new(a: 1, b: 2) == S.new(b: 2, a: 1), S.new.to_a, "
              "S.keyword_init?, S.inspect, S.members, "
              "begin; S.new(1, 2); rescue ArgumentError; 'positional'; end, "
              "begin; S.new(a: 1, c: 3); rescue ArgumentError => e; e.message; end]"),
            R"j([[1,null],true,[null,null],true,"S(keyword_init: true)",["a","b"],"positional",)j"
            R"("unknown keywords: c"])");
  EXPECT_EQ(v("T = Struct.new(:a, keyword_init: false); P = Struct.new(:x, :y); "
              "K = Struct.new(:x, keyword_init: true) { def twice; x * 2; end }; "
              "[T.new(1).a, P.new(1, 2).y, K.new(x: 4).twice]"),
            "[1,2,8]");
}

TEST_F(RubyCore, RangeStepAndPercent) {
  EXPECT_EQ(v("[(1..10).step(3).to_a, ((1..10) % 3).to_a, (1...10).step(3).to_a, "
              "(10..1).step(-3).to_a, (1..10).step(-1).to_a, (1..).step(2).first(3), "
              "('a'..'e').step(2).to_a, (r = []; (1..5).step(2) { |x| r << x }; r)]"),
            R"([[1,4,7,10],[1,4,7,10],[1,4,7],[10,7,4,1],[],[1,3,5],["a","c","e"],[1,3,5]])");
  // Floats step by multiplication, as CRuby: no accumulated error.
  EXPECT_EQ(
      v("[(1.0..2.0).step(0.5).to_a, (1.0...2.0).step(0.5).to_a, (1..2).step(0.5).to_a, "
        "(0.0..1.0).step(0.1).to_a.size, ((0.0..1.0).step(0.1).to_a.last - 1.0).abs < 1e-15]"),
      "[[1,1.5,2],[1,1.5],[1,1.5,2],11,true]");
  EXPECT_EQ(v("[-> { (1..10).step(0) }, -> { (1..10).step(-1) { } }, -> { (1..10).step('a') }]"
              ".map { |f| begin; f.call; rescue => e; e.class.to_s; end }"),
            R"(["ArgumentError","ArgumentError","TypeError"])");
}

TEST_F(RubyCore, RangeCoverTakesARange) {
  EXPECT_EQ(v("[(1..5).cover?(2..3), (1..5).cover?(2..6), (1...5).cover?(2..4), "
              "(1...5).cover?(2..5), (1..5).cover?(2...6), (1..5).cover?(3..1), "
              "(1..).cover?(2..), (1..5).cover?(1..), (..5).cover?(..3), (1..5).cover?(0..3), "
              "(1..5).cover?(3), (1..5).cover?(6)]"),
            "[true,false,true,false,true,false,true,false,true,false,true,false]");
}

TEST_F(RubyCore, TimeStrftime) {
  EXPECT_EQ(
      v("Time.at(0).utc.strftime('%Y-%m-%d %H:%M:%S %z %Z %a %A %b %B %j %e %l %I %p %P "
        "%L %N %3N %s %% %F %T %D %R %r %c %u %w %C %y %k %-d %-m %^a %_5Y %U %W %G %V %h "
        "%v %:z %Q|')"),
      R"("1970-01-01 00:00:00 +0000 UTC Thu Thursday Jan January 001  1 12 12 AM am 000 )"
      R"(000000000 000 0 % 1970-01-01 00:00:00 01/01/70 00:00 12:00:00 AM Thu Jan  1 )"
      R"(00:00:00 1970 4 4 19 70  0 1 1 THU  1970 00 00 1970 01 Jan  1-JAN-1970 +00:00 %Q|")");
  EXPECT_EQ(
      v("Time.at(1700000000, 123456).utc.strftime('%Y-%m-%dT%H:%M:%S.%L%z %-I%P %6N %^B "
        "%-j %10A|%-10A|%::z')"),
      R"("2023-11-14T22:13:20.123+0000 10pm 123456 NOVEMBER 318    Tuesday|Tuesday|+00:00:00")");
  // ISO weeks across a year boundary: 2021-01-03 is in 2020's week 53.
  EXPECT_EQ(
      v("[Time.utc(2021, 1, 3).strftime('%G-W%V-%u'), Time.utc(2024, 12, 30).strftime('%G-%V'), "
        "Time.at(0).utc.utc_offset, Time.now.utc.strftime('%Y')]"),
      R"(["2020-W53-7","2025-01",0,"1970"])");
}

TEST_F(RubyCore, AnErrorInAnAddedMethodNamesTheGuestsLine) {
  // Every run after the first loads the compiled prelude, whose frames a
  // backtrace skips.
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(run);
    Caught caught =
        expect_failure(FailureCode::guest_error, [&] { sandbox_.eval("x = 1\n5.clamp(7, 3)"); });
    if (run > 0) {
      EXPECT_EQ(
          caught.message.rfind(
              "(eval):2:in clamp: min argument must be smaller than max argument (ArgumentError)",
              0),
          0u)
          << caught.message;
    }
  }
}

TEST_F(RubyCore, HostileArgumentsStayWithinTheLimits) {
  Options tight = ruby_options();
  tight.timeout = std::chrono::milliseconds(1500);
  tight.memory_limit = std::uint64_t{16} << 20;
  RubySandbox sandbox(tight);
  // Logarithmic or constant time, whatever the size.
  EXPECT_EQ(value_of(sandbox,
                     "[3.pow(2**61, 1_000_000_007).class.to_s, "
                     "(2**61).digits.size, (2**61 + 1).gcd(2**60 + 3).class.to_s, "
                     "Integer.sqrt(2**61).class.to_s, (2**61).bit_length]"),
            R"(["Integer",19,"Integer","Integer",62])");
  expect_failure(FailureCode::memory_limit,
                 [&] { sandbox.eval("Time.at(0).strftime('%100000000Y')"); });
  // One endless chunk, an inspect nested past the stack: each ends in its
  // bound (which one comes first depends on the machine), the host lives.
  for (const char* code :
       {"(1..).chunk_while { true }.first(1)", "a = []; 100000.times { a = [a] }; p a"}) {
    SCOPED_TRACE(code);
    try {
      sandbox.eval(code);
      ADD_FAILURE() << "expected the run to fail";
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == FailureCode::timeout || e.code() == FailureCode::memory_limit ||
                  e.code() == FailureCode::guest_error)
          << e.what();
    }
  }
  expect_failure(FailureCode::guest_error, [&] { sandbox.eval("3.pow(2, 2**62 + 1)"); });
  EXPECT_EQ(value_of(sandbox, "6 * 7"), "42");
}

}  // namespace
}  // namespace corral::sandbox::testing
