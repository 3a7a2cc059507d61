// fuzz/rpc_fuzzer.cc: the executor protocol's request decoding
// (server::rpc::parse_execute, resolve_timeout) and the client's envelope
// reader (outcome_from_envelope), on hostile JSON-RPC messages.
//
// Invariants: params are accepted or refused with std::invalid_argument; an
// accepted timeout resolves inside (0, ceiling]; an envelope is read or
// refused with std::invalid_argument; what the server writes for an outcome
// reads back as the same outcome.
#include <stdexcept>

#include "fuzz_util.hpp"
#include "server/rpc.hpp"

namespace json = corral::core::json;
namespace rpc = corral::server::rpc;
using corral::fuzz::fail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);
  boost::system::error_code ec;
  const json::value message = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) return 0;
  const json::object* object = message.if_object();

  // A request: its params, as the session hands them over.
  const json::value* params = object ? object->if_contains("params") : nullptr;
  try {
    const rpc::ExecuteParams execute = rpc::parse_execute(params);
    corral::server::Options options;
    const auto timeout = rpc::resolve_timeout(execute.timeout, options);
    const auto ceiling = std::min(options.max_timeout, corral::server::kMaxSupportedTimeout);
    if (timeout.count() <= 0 || timeout > ceiling) fail("a timeout outside (0, ceiling]", text);
  } catch (const std::invalid_argument&) {
  }
  const json::value id = object && object->contains("id") ? object->at("id") : json::value();
  (void)rpc::error_message(id, rpc::kInvalidRequest, "refused");
  (void)rpc::result_message(id, message);

  // A response: its result, as the client reads it.
  const json::value* result = object ? object->if_contains("result") : nullptr;
  try {
    const corral::pool::Outcome outcome = rpc::outcome_from_envelope(result ? *result : message);
    // Exactly one side (the type holds no other state); a failure's code
    // is in the vocabulary.
    if (!outcome.ok() &&
        !corral::failure_code_from_string(corral::to_string(outcome.failure().code)))
      fail("a failure whose code is not in the vocabulary");
    const json::object written = rpc::envelope(outcome);
    const corral::pool::Outcome back = rpc::outcome_from_envelope(written);
    if (json::serialize(rpc::envelope(back)) != json::serialize(written))
      fail("an envelope that does not survive a round trip", json::serialize(written));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
