// fuzz/executor_fuzzer.cc: the executor session's message handler without a
// socket (core::jsonrpc::decode) and the byte-exact id round trip (rpc::Id and
// the builders that write it), on hostile WebSocket text messages.
//
// Invariants: decode throws nothing (std::bad_alloc aside); a reply is one
// JSON-RPC 2.0 error object (-32700 or -32600) whose id decodes back to the
// same bytes; a request's or response's id is a token of the input, reads as
// the same value the whole message's parse gives, and what the builders
// write with it decodes back to exactly those bytes; a notification has no
// id; an input that is one scalar token is an Id that writes back verbatim.
#include <new>
#include <stdexcept>

#include "core/jsonrpc.hpp"
#include "fuzz_util.hpp"

namespace json = corral::core::json;
namespace rpc = corral::core::jsonrpc;
using corral::fuzz::fail;
using Kind = rpc::Incoming::Kind;

namespace {

rpc::Incoming decode_or_fail(std::string_view text) {
  try {
    return rpc::decode(text);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    fail("decode threw", e.what());
  } catch (...) {
    fail("decode threw a non-exception", text);
  }
}

// `message` (which corral wrote) decodes as a response to exactly `id`.
void expect_answer_to(const rpc::Id& id, const std::string& message, bool is_error) {
  if (!corral::fuzz::is_utf8(message)) fail("an answer that is not UTF-8", message);
  const rpc::Incoming back = decode_or_fail(message);
  if (back.kind != Kind::response) fail("an answer that does not decode as a response", message);
  if (back.id.text() != id.text()) fail("an id that does not come back byte-exact", message);
  if (back.error.has_value() != is_error) fail("an answer of the wrong kind", message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);
  const rpc::Incoming in = decode_or_fail(text);

  boost::system::error_code ec;
  const json::value whole = json::parse(json::string_view(text.data(), text.size()), ec);

  switch (in.kind) {
    case Kind::reply: {
      boost::system::error_code reply_ec;
      const json::value reply = json::parse(in.reply, reply_ec);
      if (reply_ec) fail("a reply that is not JSON", in.reply);
      const json::object* object = reply.if_object();
      const json::value* error = object ? object->if_contains("error") : nullptr;
      const json::value* code =
          error && error->is_object() ? error->get_object().if_contains("code") : nullptr;
      if (!code || !code->is_int64() ||
          (code->get_int64() != rpc::kParseError && code->get_int64() != rpc::kInvalidRequest))
        fail("a reply without a -32700 or -32600 error", in.reply);
      if ((code->get_int64() == rpc::kParseError) != ec.failed())
        fail("a parse error for JSON, or another error for text that is not", in.reply);
      expect_answer_to(in.id, in.reply, true);
      break;
    }
    case Kind::request:
    case Kind::response: {
      if (ec) fail("a request or response decoded from text that is not JSON", text);
      if (text.find(in.id.text()) == std::string_view::npos)
        fail("an id that is not a token of the input", in.id.text());
      const auto token = rpc::Id::from_token(in.id.text());
      if (!token || *token != in.id) fail("an id whose text is not one scalar token", in.id.text());
      const json::value* original = whole.as_object().if_contains("id");
      if (!original) fail("a request or response without an id", text);
      if (in.id.value() != *original)
        fail("an id that reads as another value than the message's", in.id.text());
      if (in.kind == Kind::request) {
        if (!whole.as_object().contains("method")) fail("a request without a method", text);
        if (in.params && !in.params->is_object() && !in.params->is_array())
          fail("a request whose params are not structured", text);
      } else if (in.error.has_value() != whole.as_object().contains("error")) {
        fail("a response whose error is not the message's", text);
      }
      expect_answer_to(in.id, rpc::result_message(in.id, json::value("corral-executor/1")), false);
      expect_answer_to(in.id, rpc::error_message(in.id, rpc::kMethodNotFound, in.method), true);
      break;
    }
    case Kind::ignore:
      if (ec || !whole.is_object() || whole.as_object().contains("id") ||
          !whole.as_object().contains("method"))
        fail("an ignored message that is not a notification", text);
      break;
  }

  // The input as one id token.
  if (const auto id = rpc::Id::from_token(text)) {
    if (id->text() != text) fail("an id token that changed", text);
    expect_answer_to(*id, rpc::result_message_text(*id, "null"), false);
  }
  return 0;
}
