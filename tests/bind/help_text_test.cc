// tests/bind/help_text_test.cc: bind::help::parse on the shapes real
// programs print (fuzz/corpus/help_text holds whole pages of ls, grep, tar,
// git, restic and the argparse fixture; here, the lines that decide) and on
// hostile text.
#include "bind/help_text.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace corral::bind::help {
namespace {

const HelpFlag* find(const HelpPage& page, const std::string& name) {
  for (const HelpFlag& flag : page.flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

TEST(HelpText, CobraTypesEnumsDefaultsAndGlobals) {
  const HelpPage page = parse(R"(Create things.

Usage:
  tool create [flags] NAME

Flags:
  -n, --replicas int            how many (default 3)
  -o, --output string           output format, one of (json|yaml|wide) (default "json")
      --labels strings          labels to add
      --timeout duration        how long to wait (default 1m0s)
      --dry-run                 only print
      --cacert file             a file (default: use the system's)
      --mode string             one of (fast|safe) (default "auto")

Global Flags:
      --verbose   say more
)");
  EXPECT_EQ(page.style, Style::cobra);
  EXPECT_EQ(page.description, "Create things.");
  EXPECT_FALSE(page.group_only);
  const HelpFlag* replicas = find(page, "replicas");
  ASSERT_NE(replicas, nullptr);
  EXPECT_EQ(replicas->short_name, "n");
  EXPECT_EQ(replicas->type, "int");
  EXPECT_EQ(replicas->default_json, "3");
  const HelpFlag* output = find(page, "output");
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(output->choices, (std::vector<std::string>{"json", "yaml", "wide"}));
  EXPECT_EQ(output->default_json, "\"json\"");
  EXPECT_EQ(find(page, "labels")->type, "stringSlice");
  EXPECT_EQ(find(page, "timeout")->type, "duration");
  EXPECT_EQ(find(page, "timeout")->default_json, "\"1m0s\"");
  EXPECT_EQ(find(page, "dry-run")->type, "bool");
  const HelpFlag* cacert = find(page, "cacert");
  EXPECT_EQ(cacert->type, "string");
  EXPECT_FALSE(cacert->default_json) << "words are not a default";
  EXPECT_FALSE(cacert->review.empty());
  EXPECT_TRUE(find(page, "verbose")->global);
  // A default the values read do not hold would fail the bind.
  const HelpFlag* mode = find(page, "mode");
  EXPECT_EQ(mode->choices, (std::vector<std::string>{"fast", "safe"}));
  EXPECT_FALSE(mode->default_json);
}

TEST(HelpText, CobraGroupsAndCommandLists) {
  const HelpPage page = parse(R"(Usage:
  tool [command]

Available Commands:
  completion    Generate the autocompletion script
  get           Display one or many resources
  rebuild-index Build a new index
  help          Help about any command

Use "tool [command] --help" for more information about a command.
)");
  EXPECT_TRUE(page.group_only);
  ASSERT_EQ(page.commands.size(), 2u);
  EXPECT_EQ(page.commands[0].name, "get");
  EXPECT_EQ(page.commands[1].name, "rebuild-index");
  EXPECT_EQ(page.commands[1].description, "Build a new index");
}

TEST(HelpText, GnuShortOnlyOptionalValuesAndContinuations) {
  const HelpPage page = parse(R"(Usage: ls [OPTION]... [FILE]...
List information about the FILEs.

  -a, --all                  do not ignore entries starting with .
      --block-size=SIZE      with -l, scale sizes by SIZE when printing them;
                               e.g., '--block-size=M'
  -1                         list one file per line
      --color[=WHEN]         color the output WHEN
  -w, --width=COLS           set output width to COLS
  -T, --tabsize=N            assume tab stops at each N
  -name                      a single-dash long option corral cannot write

Exit status:
 0  if OK,
)");
  EXPECT_EQ(page.style, Style::gnu);
  EXPECT_EQ(page.description, "List information about the FILEs.");
  EXPECT_EQ(find(page, "all")->type, "switch");
  EXPECT_EQ(find(page, "block-size")->description,
            "with -l, scale sizes by SIZE when printing them; e.g., '--block-size=M'");
  const HelpFlag* one = find(page, "1");
  ASSERT_NE(one, nullptr);
  EXPECT_FALSE(one->long_form);
  EXPECT_EQ(one->short_name, "1");
  EXPECT_FALSE(find(page, "color")->review.empty());
  EXPECT_EQ(find(page, "width")->type, "string");
  EXPECT_EQ(find(page, "tabsize")->type, "int");
  EXPECT_EQ(find(page, "name"), nullptr);
  EXPECT_EQ(page.flags.size(), 6u);
  EXPECT_TRUE(page.commands.empty());
}

TEST(HelpText, GitCommandGroupsAndParseOptions) {
  const HelpPage top = parse(R"(usage: git [-v | --version] [-h | --help] [-C <path>]
           <command> [<args>]

These are common Git commands used in various situations:

start a working area (see also: git help tutorial)
   clone     Clone a repository into a new directory
   init      Create an empty Git repository

'git help -a' and 'git help -g' list available subcommands.
)");
  EXPECT_EQ(top.style, Style::git);
  EXPECT_EQ(top.description, "");
  ASSERT_EQ(top.commands.size(), 2u);
  EXPECT_EQ(top.commands[1].name, "init");
  EXPECT_TRUE(top.group_only);
  const HelpPage log = parse(R"(usage: git log [<options>] [<revision-range>] [[--] <path>...]

    -q, --quiet           suppress diff output
    --decorate-refs <pattern>
                          only decorate refs that match <pattern>
    --[no-]signed         sign it
    -L <range:file>       trace the evolution of line range
)");
  EXPECT_EQ(find(log, "decorate-refs")->description, "only decorate refs that match <pattern>");
  EXPECT_EQ(find(log, "decorate-refs")->value_name, "pattern");
  EXPECT_FALSE(find(log, "signed")->review.empty());
  EXPECT_FALSE(find(log, "L")->long_form);
  EXPECT_EQ(find(log, "L")->type, "string");
}

TEST(HelpText, GitSubcommandsFromUsageLines) {
  const HelpPage remote = parse(R"(usage: git remote [-v | --verbose]
   or: git remote add [-t <branch>] <name> <url>
   or: git remote rename [--[no-]progress] <old> <new>
   or: git remote remove <name>

    -v, --verbose         be verbose; must be placed before a subcommand
)");
  ASSERT_EQ(remote.commands.size(), 3u);
  EXPECT_EQ(remote.commands[2].name, "remove");
  EXPECT_FALSE(remote.group_only) << "`git remote` alone lists the remotes";
  const HelpPage stash = parse(R"(usage: git stash list [<log-options>]
   or: git stash show [<diff-options>] [<stash>]
)");
  EXPECT_EQ(stash.commands.size(), 2u);
  EXPECT_TRUE(stash.group_only);
  // Found by fuzz_help_text: help named in usage lines is no command.
  const HelpPage bisect = parse(R"(usage: git bisect start [<bad>]
   or: git bisect help
   or: git bisect reset
)");
  EXPECT_EQ(bisect.commands.size(), 2u);
  for (const HelpCommand& c : bisect.commands) EXPECT_NE(c.name, "help");
  const HelpPage log = parse(R"(usage: git log [<options>] [<revision-range>]
   or: git show [<options>] <object>...
)");
  EXPECT_TRUE(log.commands.empty());
}

TEST(HelpText, ArgparseChoicesAndSubcommands) {
  const HelpPage page = parse(R"(usage: notes [-h] [--json] {add,list} ...

Keep short notes.

positional arguments:
  {add,list}
    add              add a note
    list             list notes

options:
  -h, --help         show this help message and exit
  --format {json,yaml}
                     how to print
  -t TAG, --tag TAG  a tag; may be repeated
)");
  EXPECT_EQ(page.style, Style::argparse);
  EXPECT_EQ(page.description, "Keep short notes.");
  ASSERT_EQ(page.commands.size(), 2u);
  EXPECT_EQ(page.commands[0].description, "add a note");
  EXPECT_EQ(find(page, "format")->choices, (std::vector<std::string>{"json", "yaml"}));
  EXPECT_EQ(find(page, "tag")->short_name, "t");
  EXPECT_EQ(find(page, "tag")->type, "stringArray");
}

TEST(HelpText, KubectlDefaultsAfterTheEquals) {
  const HelpPage page = parse(R"(Display one or many resources.

Options:
    -A, --all-namespaces=false:
	If present, list across all namespaces.

    --chunk-size=500:
	Return large lists in chunks.

    --field-selector='':
	Selector (field query) to filter on.

    -f, --filename=[]:
	Filename, directory, or URL to files.

    -o, --output='':
	Output format. One of: (json, yaml, wide). See custom columns.

Usage:
  kubectl get [(-o|--output=)json|yaml|name|go-template|go-template-file|template|templatefile|jsonpath|jsonpath-as-json|jsonpath-file|custom-columns|custom-columns-file|wide] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [flags] [options]
)");
  const HelpFlag* all = find(page, "all-namespaces");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->type, "bool");
  EXPECT_EQ(all->default_json, "false");
  EXPECT_EQ(all->description, "If present, list across all namespaces.");
  EXPECT_EQ(find(page, "chunk-size")->type, "int");
  EXPECT_EQ(find(page, "chunk-size")->default_json, "500");
  EXPECT_EQ(find(page, "field-selector")->type, "string");
  EXPECT_FALSE(find(page, "field-selector")->default_json);
  EXPECT_EQ(find(page, "filename")->type, "stringArray");
  EXPECT_EQ(find(page, "output")->choices, (std::vector<std::string>{"json", "yaml", "wide"}));
}

TEST(HelpText, ManualPagesAreRecognised) {
  EXPECT_TRUE(parse("GIT-LOG(1)        Git Manual        GIT-LOG(1)\n\nNAME\n").manual_page);
  EXPECT_FALSE(parse("Usage: x (1)\n").manual_page);
}

TEST(HelpText, HostileTextIsBoundedAndLinear) {
  // Many distinct flags, one enormous line, control bytes and lone dashes.
  std::string many;
  for (int i = 0; i < 200'000; ++i) many += "  --f" + std::to_string(i) + " string   x\n";
  const auto started = std::chrono::steady_clock::now();
  HelpPage page = parse(many);
  EXPECT_EQ(page.flags.size(), kMaxFlags);
  std::string line = "  --long   " + std::string(10 << 20, 'd');
  page = parse(line);
  ASSERT_EQ(page.flags.size(), 1u);
  EXPECT_LE(page.flags[0].description.size(), kMaxDescription);
  page = parse(std::string(1 << 20, '\n') + "  -\n  --\n  ---x\n  -=\n  --=x\n  -\x01\n\xff\xfe");
  EXPECT_TRUE(page.flags.empty());
  std::string braces = "  --x {" + std::string(1 << 20, '{') + "\n";
  page = parse(braces);
  EXPECT_LE(page.flags.size(), 1u);
  std::string commands = "Commands:\n";
  for (int i = 0; i < 100'000; ++i) commands += "  c" + std::to_string(i) + "  d\n";
  page = parse(commands);
  EXPECT_EQ(page.commands.size(), kMaxCommands);
  // Seconds would mean a quadratic pass somewhere.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

}  // namespace
}  // namespace corral::bind::help
