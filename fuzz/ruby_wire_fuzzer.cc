// fuzz/ruby_wire_fuzzer.cc: JSON into mruby values and back
// (sandbox::ruby::from_json / to_json, src/sandbox/ruby/values.cc), through
// a real Guest (a run's arguments, its value, a tool's answer), and the
// frames a Ruby helper sends its host (sandbox::ruby::Reader, wire.hpp).
//
// Input: byte 0 picks the mode, the rest is its text.
//   0  from_json then to_json on one long-lived mrb_state;
//   1  a Guest runs `echo(x) = x` with the text as its one argument
//      (RunRequest::Kind::call, args_json "[text]");
//   2  a Guest runs `relay(x) = Tools.echo(x)`, whose tool answers the text
//      (the argument the guest sends is checked too);
//   3  the text is a helper->host frame body, read as engine_ruby.cc reads
//      out/call/done frames, written again and read back.
//
// Invariants: no crash; JSON that goes in and that the guest does not alter
// comes back equal: the same structure, keys in the same order, strings
// byte for byte, numbers equal as numbers (an integer past int64 becomes a
// Float, as in JavaScript) or a typed refusal: to_json refuses only a value
// nested deeper than 128 levels or a non-finite Float (a number JSON text
// overflows), and with a message naming the place; a Guest run ends ok or in
// unserializable_value / memory_limit / invalid_request (arguments too deep
// for the parser) only. A well-formed frame reads back as it was written.
#include <mruby.h>

#include <cmath>
#include <cstring>

#include "core/json.hpp"
#include "fuzz_util.hpp"
#include "sandbox/ruby/guest.hpp"
#include "sandbox/ruby/values.hpp"
#include "sandbox/ruby/wire.hpp"

namespace json = corral::core::json;
namespace ruby = corral::sandbox::ruby;
using corral::fuzz::fail;

namespace {

std::optional<json::value> parse(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) return std::nullopt;
  return v;
}

mrb_state* shared_state() {
  static mrb_state* mrb = mrb_open();
  return mrb;
}

// The double a Ruby Float holds for `d`. Debian's libmruby 3.1 is built with
// word boxing, which keeps a Float inline by dropping its two lowest
// mantissa bits: 0.1 comes back as 0.09999999999999998 (fuzz/README.md,
// findings). The comparison allows exactly that loss, no other.
double held(double d) { return mrb_float(mrb_float_value(shared_state(), d)); }

// Numbers as Ruby leaves them: an integer stays one while it fits int64;
// everything else compares as a double, `in` as a Float holds it.
bool same_number(const json::value& in, const json::value& out) {
  if (in.is_int64() && out.is_int64()) return in.get_int64() == out.get_int64();
  const auto as_double = [](const json::value& v) {
    if (v.is_int64()) return static_cast<double>(v.get_int64());
    if (v.is_uint64()) return static_cast<double>(v.get_uint64());
    return v.get_double();
  };
  if (in.is_int64()) return as_double(in) == as_double(out);  // an integer stays exact
  return held(as_double(in)) == as_double(out);
}

// Equal as Ruby keeps them: object members in order.
bool same(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) return same_number(a, b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case boost::json::kind::array: {
      const auto &x = a.get_array(), &y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!same(x[i], y[i])) return false;
      return true;
    }
    case boost::json::kind::object: {
      const auto &x = a.get_object(), &y = b.get_object();
      if (x.size() != y.size()) return false;
      auto i = x.begin();
      auto j = y.begin();
      for (; i != x.end(); ++i, ++j)
        if (i->key() != j->key() || !same(i->value(), j->value())) return false;
      return true;
    }
    default:
      return a == b;
  }
}

// What to_json may refuse: depth past 128 or a non-finite number.
struct Shape {
  std::size_t depth = 0;
  bool non_finite = false;
};
void shape_of(const json::value& v, std::size_t depth, Shape& s) {
  s.depth = std::max(s.depth, depth);
  if (v.is_double() && !std::isfinite(v.get_double())) s.non_finite = true;
  if (v.is_array())
    for (const auto& e : v.get_array()) shape_of(e, depth + 1, s);
  if (v.is_object())
    for (const auto& e : v.get_object()) shape_of(e.value(), depth + 1, s);
}

void check_round_trip(const json::value& in, std::string_view written, std::string_view what) {
  if (!corral::fuzz::is_utf8(written)) fail("JSON out of Ruby that is not UTF-8", written);
  const auto out = parse(written);
  if (!out) fail("JSON out of Ruby that does not parse", written);
  if (!same(in, *out)) fail(what.data(), written);
}

void check_refusal(const json::value& in, std::string_view why, std::string_view what) {
  Shape s;
  shape_of(in, 0, s);
  if (s.depth <= ruby::kMaxDepth && !s.non_finite) fail(what.data(), why);
  if (why.empty() || !corral::fuzz::is_utf8(why)) fail("a refusal without a UTF-8 reason", why);
  // The place is cut (values.cc): a long key or a deep value names itself briefly.
  if (why.size() > 1024) fail("a refusal longer than 1 KiB", why);
}

void values(std::string_view text) {
  mrb_state* mrb = shared_state();
  const auto in = parse(text);
  const int arena = mrb_gc_arena_save(mrb);
  mrb_value value;
  const bool read = ruby::from_json(mrb, text, value);
  if (read != in.has_value()) fail("from_json and json::parse disagree on the text", text);
  if (read) {
    std::string out, why;
    if (ruby::to_json(mrb, value, out, why, "value", std::size_t{1} << 30) ==
        ruby::JsonStatus::ok) {
      check_round_trip(*in, out, "a value that does not come back equal");
    } else {
      check_refusal(*in, why, "to_json refused a value it can write");
    }
  }
  mrb_gc_arena_restore(mrb, arena);
  mrb_full_gc(mrb);
}

// The guest's side of the wire: output dropped, the one tool answers
// `answer` and records what it was sent.
class Host : public ruby::GuestHost {
 public:
  void write(int, std::string_view) override {}
  Answer call_tool(std::uint32_t index, std::string args_json, std::string& out,
                   std::uint8_t&) override {
    if (index != 0) fail("a tool index nobody bound");
    sent = std::move(args_json);
    out = answer;
    return Answer::ok;
  }
  std::string answer;
  std::string sent;
};

void guest(std::string_view text, bool through_tool) {
  const auto in = parse(text);
  if (!in) return;  // not one JSON value: nothing a host would send
  static ruby::Counters counters;
  static Host host;
  static ruby::Guest* echo = [] {
    ruby::GuestSetup setup;
    setup.memory_limit = std::uint64_t{256} << 20;
    setup.snippets = {{"echo", "def echo(x)\n  x\nend\n"}};
    return new ruby::Guest(std::move(setup), host, counters);
  }();
  static ruby::Guest* relay = [] {
    ruby::GuestSetup setup;
    setup.memory_limit = std::uint64_t{256} << 20;
    setup.tools = {"Tools.echo"};
    setup.snippets = {{"relay", "def relay(x)\n  Tools.echo(x)\nend\n"}};
    return new ruby::Guest(std::move(setup), host, counters);
  }();
  ruby::GuestRequest request;
  request.kind = corral::sandbox::RunRequest::Kind::call;
  std::string args = "[";
  args.append(text);
  args += ']';
  if (through_tool) {
    // The argument goes in as the plain string "x"; the tool's answer is the text.
    request.entrypoint = "relay";
    request.args_json = R"(["x"])";
    host.answer = std::string(text);
    host.sent.clear();
  } else {
    request.entrypoint = "echo";
    request.args_json = args;
  }
  counters.reset();
  ruby::Guest& g = through_tool ? *relay : *echo;
  const ruby::GuestResult result = g.run(request);
  g.prepare();
  if (through_tool && result.code == ruby::kNoFailure && host.sent != "\"x\"")
    fail("the tool was sent something else than the guest's argument", host.sent);
  using corral::FailureCode;
  if (result.code == ruby::kNoFailure) {
    check_round_trip(*in, result.value, "a run's value that does not come back equal");
  } else if (result.code == static_cast<std::uint8_t>(FailureCode::unserializable_value)) {
    check_refusal(*in, result.message, "a run refused a value it can write");
  } else if (result.code == static_cast<std::uint8_t>(FailureCode::invalid_request)) {
    if (through_tool || parse(args)) fail("a run refused arguments that parse", result.message);
  } else if (result.code != static_cast<std::uint8_t>(FailureCode::memory_limit)) {
    fail("a run ended in an unexpected failure", result.message);
  }
}

// A helper->host frame body, as engine_ruby.cc reads it.
void frame(std::string_view body) {
  ruby::Reader reader(body);
  const auto type = static_cast<ruby::Frame>(reader.u8());
  ruby::Writer again(type);
  if (type == ruby::Frame::out) {
    const std::uint8_t channel = reader.u8();
    const std::string_view bytes = reader.str();
    again.u8(channel).str(bytes);
  } else if (type == ruby::Frame::call) {
    const std::uint32_t index = reader.u32();
    const std::string_view args = reader.str();
    again.u32(index).str(args);
  } else if (type == ruby::Frame::done) {
    const std::uint8_t code = reader.u8();
    const std::string_view message = reader.str();
    const std::string_view value = reader.str();
    const double cpu = reader.f64();
    const std::uint8_t discard = reader.u8();
    again.u8(code).str(message).str(value).f64(cpu).u8(discard);
  } else {
    return;
  }
  if (!reader.ok() || !reader.at_end()) return;
  if (!again.seal()) fail("a frame the reader took does not fit when written again");
  const std::string& written = again.bytes();
  const std::uint32_t length = corral::core::frame_length(written.data());
  if (length != body.size() || std::string_view(written).substr(4) != body)
    fail("a frame that does not read back as written");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = corral::fuzz::text_of(data + 1, size - 1);
  switch (data[0] & 3) {
    case 0:
      values(text);
      break;
    case 1:
      guest(text, false);
      break;
    case 2:
      guest(text, true);
      break;
    case 3:
      frame(text);
      break;
  }
  return 0;
}
