// src/pool/frames.hpp: the IPC framing between the pool and a worker.
//
// A frame (core/frame.hpp: a 4-byte big-endian length, then the body) holds
// one JSON object. Both sides refuse a frame longer than their maximum before
// buffering it, and never send one. Messages (every one has "t", its type, and "id", the
// execution it belongs to, except "ready"):
//
//   pool -> worker
//     {"t":"run","id":N,"shape":"execute"|"eval","code":S,"tools":[S..],
//      "limits":{"timeout_ms":ms|null,"memory_limit":n|null,"stdout_limit":n|null,
//                "stderr_limit":n|null,"max_tool_calls":n|null,"profile":S,
//                "language":"ruby"?}}      (language absent: javascript)
//     {"t":"answer","id":N,"call":K,"ok":B,"payload":S}  JSON text or a message
//     {"t":"cancel","id":N}
//   worker -> pool
//     {"t":"ready","protections":{...}}
//     {"t":"call","id":N,"call":K,"name":S,"args":S}       args: JSON text
//     {"t":"done","id":N,"execution":{...}}\nVALUE | {"t":"done","id":N,"failure":{...}}
//       (+ "ending":true when the worker exits right after: a Ruby run it
//        could not interrupt; the pool sends it no further run)
//
// A done with an execution carries every field but the value in its JSON
// object (core::execution_fields), then a newline, then the value's JSON
// text as the engine made it: the pool checks that text (is_json_value_text)
// and carries it on as text, so a result is parsed once on its way from the
// engine to the socket and never rebuilt. No other message has a tail (the
// writer never puts a raw newline in the JSON object).
//
// The worker is untrusted: the pool validates every field of what it reads
// and kills the worker on the first frame that does not parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/frame.hpp"
#include "core/json.hpp"
#include "corral/sandbox.hpp"

namespace corral::pool {

namespace json = core::json;  // Boost.JSON with corral's writer

using core::FrameReader;
using core::kFrameHeaderBytes;

// The frame (header + body) that carries `message`, and after a newline
// `tail` when there is one (a done's value text). The caller checks its body
// (size() - kFrameHeaderBytes) against the channel's max_frame.
std::string encode_frame(const json::object& message,
                         std::optional<std::string_view> tail = std::nullopt);

struct Message {
  json::object fields;  // has a string "t"
  // The bytes after the first newline, when the body has one; points into
  // the body parsed.
  std::optional<std::string_view> tail;
};

// Parses a frame body as an object with a string "t" (and its tail);
// nullopt if it is not one.
std::optional<Message> parse_message(std::string_view body);

json::object limits_to_object(const sandbox::Options& limits);
// Throws std::invalid_argument for anything that is not a limits object.
sandbox::Options limits_from_object(const json::object& object);

// Reads a non-negative integer field; nullopt if absent or of another type.
std::optional<std::uint64_t> get_count(const json::object& object, std::string_view key);
// Reads a string field; nullptr if absent or of another type.
const json::string* get_string(const json::object& object, std::string_view key);

}  // namespace corral::pool
