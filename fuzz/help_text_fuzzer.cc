// fuzz/help_text_fuzzer.cc: bind::help::parse on hostile help text (what
// `corral bind` reads from any program it is pointed at).
//
// Invariants: parse never throws or crashes; it keeps at most kMaxFlags
// flags and kMaxCommands commands, each description at most kMaxDescription
// bytes; flag names are non-empty, a short name is one character, a flag
// without a long form has one; every type is a codec the binding knows; and
// no command is named help or completion.
#include <set>

#include "bind/codecs.hpp"
#include "bind/help_text.hpp"
#include "fuzz_util.hpp"

using corral::fuzz::fail;
namespace help = corral::bind::help;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const help::HelpPage page = help::parse(corral::fuzz::text_of(data, size));
  if (page.flags.size() > help::kMaxFlags) fail("more flags than kMaxFlags");
  if (page.commands.size() > help::kMaxCommands) fail("more commands than kMaxCommands");
  if (page.description.size() > help::kMaxDescription) fail("an unbounded description");
  std::set<std::string> names;
  for (const help::HelpFlag& flag : page.flags) {
    if (flag.name.empty()) fail("a flag without a name");
    if (!names.insert(flag.name).second) fail("a flag twice", flag.name);
    if (flag.short_name.size() > 1)
      fail("a short name of more than one character", flag.short_name);
    if (!flag.long_form && flag.short_name.empty()) fail("a short-only flag without its letter");
    if (flag.description.size() > help::kMaxDescription) fail("an unbounded flag description");
    if (!corral::bind::builtin_codec(flag.type)) fail("a type with no codec", flag.type);
  }
  for (const help::HelpCommand& command : page.commands) {
    if (command.name.empty()) fail("a command without a name");
    if (command.name == "help" || command.name == "completion") fail("a builtin command listed");
    if (command.description.size() > help::kMaxDescription)
      fail("an unbounded command description");
  }
  return 0;
}
