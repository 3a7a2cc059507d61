// fuzz/frames_fuzzer.cc: the pool's frame reader and message readers, as the
// pool runs them on bytes from an untrusted worker.
//
// Input: byte 0 picks the reader's maximum frame size, byte 1 seeds how the
// rest is cut into appends (as reads from a socket arrive); the rest is the
// byte stream. Invariants: the frames handed out are exactly the stream's
// frames in order, whatever the cuts; none is longer than the maximum;
// `oversized` is reported exactly when the next header says so; every body
// goes through parse_message and the field readers without a crash; a
// message re-encoded with encode_frame reads back unchanged, tail included;
// a tail that is_json_value_text accepts, spliced into a result envelope as
// the pool and server do, makes an envelope that parses.
#include <stdexcept>

#include "core/envelope.hpp"
#include "fuzz_util.hpp"
#include "pool/frames.hpp"

namespace json = corral::core::json;
using corral::fuzz::fail;
using corral::pool::FrameReader;

namespace {

void read_fields(const json::object& message) {
  (void)corral::pool::get_count(message, "id");
  (void)corral::pool::get_count(message, "call");
  (void)corral::pool::get_string(message, "name");
  (void)corral::pool::get_string(message, "args");
  if (const json::value* limits = message.if_contains("limits"); limits && limits->is_object()) {
    try {
      const corral::sandbox::Options options =
          corral::pool::limits_from_object(limits->get_object());
      // What the pool writes back must read back.
      (void)corral::pool::limits_from_object(corral::pool::limits_to_object(options));
    } catch (const std::invalid_argument&) {
    }
  }
  for (const char* key : {"execution", "failure"}) {
    if (const json::value* v = message.if_contains(key); v && v->is_object()) {
      try {
        if (key[0] == 'e') {
          (void)corral::core::execution_from_object(v->get_object());
        } else {
          (void)corral::core::failure_from_object(v->get_object());
        }
      } catch (const std::invalid_argument&) {
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t max_frame = std::size_t{data[0]} * 16;
  std::uint32_t cut_seed = data[1] | 1u;
  const std::string_view stream = corral::fuzz::text_of(data + 2, size - 2);

  // The frames a whole-stream reading finds.
  std::vector<std::string> expected;
  bool expect_oversized = false;
  for (std::size_t at = 0;;) {
    if (stream.size() - at < corral::pool::kFrameHeaderBytes) break;
    const auto* p = reinterpret_cast<const unsigned char*>(stream.data() + at);
    const std::size_t n = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) |
                          (std::size_t{p[2]} << 8) | std::size_t{p[3]};
    if (n > max_frame) {
      expect_oversized = true;
      break;
    }
    if (stream.size() - at - corral::pool::kFrameHeaderBytes < n) break;
    expected.emplace_back(stream.substr(at + corral::pool::kFrameHeaderBytes, n));
    at += corral::pool::kFrameHeaderBytes + n;
  }

  FrameReader reader(max_frame);
  std::vector<std::string> got;
  bool oversized = false;
  for (std::size_t at = 0; at < stream.size() && !oversized;) {
    cut_seed = cut_seed * 1103515245u + 12345u;
    const std::size_t chunk = std::min<std::size_t>(stream.size() - at, 1 + (cut_seed >> 16) % 64);
    reader.append(stream.data() + at, chunk);
    at += chunk;
    std::string body;
    while (true) {
      const FrameReader::Status status = reader.next(body);
      if (status == FrameReader::Status::need_more) break;
      if (status == FrameReader::Status::oversized) {
        oversized = true;
        break;
      }
      if (body.size() > max_frame) fail("a frame longer than the maximum");
      got.push_back(body);
    }
  }
  if (got != expected) fail("the frames depend on how the stream was cut");
  if (oversized != expect_oversized) fail("oversized reported wrongly");

  for (const std::string& body : got) {
    std::optional<corral::pool::Message> message = corral::pool::parse_message(body);
    if (!message) continue;
    read_fields(message->fields);
    if (message->tail && corral::core::is_json_value_text(*message->tail)) {
      const std::string envelope = corral::core::envelope_text(
          corral::core::execution_from_fields(message->fields, std::string(*message->tail)));
      boost::system::error_code ec;
      (void)json::parse(envelope, ec);
      if (ec) fail("an accepted value spliced into an envelope does not parse", body);
    }
    const std::string frame = corral::pool::encode_frame(message->fields, message->tail);
    FrameReader again(frame.size());
    again.append(frame.data(), frame.size());
    std::string body2;
    if (again.next(body2) != FrameReader::Status::frame) fail("encode_frame does not read back");
    std::optional<corral::pool::Message> message2 = corral::pool::parse_message(body2);
    // Equal after one write (a number past a double's range reads as
    // infinity and is written as null, as the writer documents).
    if (!message2 || json::serialize(message2->fields) != json::serialize(message->fields) ||
        message2->tail != message->tail)
      fail("a message does not survive a round trip", body);
  }
  return 0;
}
