// corral/language.hpp: the languages guest code is written in, named the way
// every surface spells them ("javascript", "typescript", "ruby": the executor
// protocol's `language`, `corral run --language`, MCP `execute`).
//
// Part of corral::core, so a program that only sends code elsewhere (the
// executor client, `corral exec`) names a language without linking an engine.
#pragma once

#include <string_view>

namespace corral {

// Language: what a run's code is written in.
//   javascript: V8 (the default).
//   typescript: V8, after TypeScript's types are erased in place (lines and
//               columns unchanged); syntax with no erasable form (`enum`,
//               parameter properties, ...) is a compile_error. Plain
//               JavaScript runs unchanged. docs/sandbox.md, "TypeScript".
//   ruby:       mruby 3.1 (docs/ruby.md).
enum class Language { javascript, ruby, typescript };

// Parses "javascript" / "typescript" / "ruby"; throws std::invalid_argument
// naming "language" for anything else.
Language parse_language(std::string_view text);
std::string_view to_string(Language language) noexcept;

// The executor protocol's version, what `protocolVersion` answers; client
// and server compare it (docs/protocol.md). Also corral::server::kProtocolVersion.
inline constexpr const char* kExecutorProtocolVersion = "corral-executor/1";

}  // namespace corral
