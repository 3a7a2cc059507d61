// fuzz/manifest_fuzzer.cc: bind::load_manifest on hostile YAML and JSON, and
// the codec of every flag type the manifest names.
//
// Invariant: a manifest loads or throws std::invalid_argument; nothing else
// (no yaml-cpp exception, no crash, no stack overflow on deep nesting).
#include <stdexcept>

#include "bind/codecs.hpp"
#include "corral/bind.hpp"
#include "fuzz_util.hpp"

namespace {

void visit(const corral::bind::CommandSpec& spec, int depth) {
  for (const auto* flags : {&spec.flags, &spec.persistent_flags}) {
    for (const auto& flag : *flags) {
      if (auto codec = corral::bind::builtin_codec(flag.type)) (void)codec->schema();
    }
  }
  for (const auto& child : spec.commands) visit(child, depth + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = corral::fuzz::text_of(data, size);
  try {
    const corral::bind::CommandTree tree = corral::bind::load_manifest(text);
    visit(tree.root, 0);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
