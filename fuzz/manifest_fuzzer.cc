// fuzz/manifest_fuzzer.cc: bind::load_manifest on hostile YAML and JSON, and
// the codec of every flag type the manifest names, narrowed by its
// constraints.
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
      auto codec = corral::bind::builtin_codec(flag.type);
      if (!codec) continue;
      (void)codec->schema();
      if (flag.constraints_json.empty()) continue;
      try {
        // What the bind makes of a flag's enum, pattern, min and max.
        (void)corral::bind::narrowed(codec, flag.constraints_json)->schema();
      } catch (const std::invalid_argument&) {
      }
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
