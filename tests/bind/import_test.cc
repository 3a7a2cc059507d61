// tests/bind/import_test.cc: `import_manifest` (what `corral bind` runs)
// against real programs: coreutils, grep and tar (GNU getopt_long), git
// (parse-options), restic (Cobra, from Debian) and tests/bind/fixtures/notes
// (Python's argparse). Each generated manifest is compared with the one
// checked in under tests/bind/import/ when the program's version is the one
// it was made from (tests/bind/import/NAME.version), and always bound and
// called. CORRAL_UPDATE_IMPORT_FIXTURES=1 rewrites the fixtures.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bind/bind_test_util.hpp"
#include "corral/bind_import.hpp"
#include "corral/failure.hpp"

namespace corral::bind {
namespace {

namespace fs = std::filesystem;
using testing::names;

const std::string kFixtures = CORRAL_SOURCE_DIR "/tests/bind/import/";
const std::string kNotes = CORRAL_SOURCE_DIR "/tests/bind/fixtures/notes";
const std::string kHostile = CORRAL_SOURCE_DIR "/tests/bind/fixtures/hostile_help";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line `PROGRAM --version` (or `PROGRAM version`, Cobra's
// habit) prints, outside any sandbox.
std::string version_of(const std::string& program) {
  const std::string command =
      program + " --version 2>/dev/null || " + program + " version 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char line[512] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  ::pclose(pipe);
  std::string text = got ? line : "";
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

bool on_path(const std::string& program) {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    if (::access((std::string(dir) + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

struct Case {
  std::string fixture;  // tests/bind/import/<fixture>.yaml
  std::string program;
  std::size_t least_operations;
  std::string operation;  // one to call
  std::string input;
  std::string expect_stdout;  // a part of what the call prints
  std::string expect_flag;    // a flag of that operation's schema
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.fixture; }

class ImportReal : public ::testing::TestWithParam<Case> {};

TEST_P(ImportReal, WritesTheCheckedInManifestAndItBindsAndCalls) {
  const Case& c = GetParam();
  const std::string program = c.program == "notes" ? kNotes : c.program;
  if (c.program != "notes" && !on_path(c.program)) {
    // scripts/setup installs every one of them; a machine set up by hand
    // may lack one.
    GTEST_SKIP() << c.program << " is not installed";
  }
  ImportOptions options;
  options.program = program;
  ImportResult result = import_manifest(options);
  // Paths differ between checkouts: the fixture names the notes program by
  // a placeholder.
  std::string manifest = result.manifest;
  if (const std::size_t at = manifest.find(kNotes); at != std::string::npos) {
    manifest.replace(at, kNotes.size(), "NOTES");
  }

  const std::string fixture = kFixtures + c.fixture + ".yaml";
  const std::string version = c.program == "notes" ? "argparse" : version_of(program);
  if (std::getenv("CORRAL_UPDATE_IMPORT_FIXTURES") != nullptr) {
    std::ofstream(fixture) << manifest;
    std::ofstream(kFixtures + c.fixture + ".version") << version << "\n";
  }
  std::string recorded = read_file(kFixtures + c.fixture + ".version");
  if (!recorded.empty() && recorded.back() == '\n') recorded.pop_back();
  if (recorded == version) {
    EXPECT_EQ(manifest, read_file(fixture)) << "regenerate with CORRAL_UPDATE_IMPORT_FIXTURES=1";
  } else {
    std::cout << c.program << " is \"" << version << "\", the fixture was made from \"" << recorded
              << "\": the manifest is bound and called, not compared\n";
  }

  std::unique_ptr<Binding> binding = Binding::bind(load_manifest(result.manifest));
  EXPECT_GE(binding->operations().size(), c.least_operations) << result.manifest.substr(0, 2000);
  const Operation* op = binding->find(c.operation);
  ASSERT_NE(op, nullptr) << c.operation;
  EXPECT_NE(op->input_schema.find("\"" + c.expect_flag + "\""), std::string::npos)
      << op->input_schema;
  Execution execution = binding->call(c.operation, c.input);
  EXPECT_NE(execution.stdout_text().find(c.expect_stdout), std::string::npos)
      << execution.stdout_text() << execution.stderr_text();
}

INSTANTIATE_TEST_SUITE_P(
    Programs, ImportReal,
    ::testing::Values(
        Case{"ls", "ls", 1, "ls", R"({"flags":{"all":true,"1":true},"args":["/"]})", "usr\n",
             "almost-all"},
        Case{"grep", "grep", 1, "grep", R"({"flags":{"version":true}})", "GNU grep",
             "fixed-strings"},
        Case{"tar", "tar", 1, "tar", R"({"flags":{"version":true}})", "GNU tar", "gzip"},
        // git init writes in the run's private /tmp.
        Case{"git", "git", 20, "git_init", R"({"flags":{"quiet":false},"args":["/tmp/r"]})",
             "Initialized empty Git repository in /tmp/r/.git/", "bare"},
        Case{"restic", "restic", 20, "restic_version", "{}", "restic ", "json"},
        Case{"notes", "notes", 3, "notes_add",
             R"({"flags":{"priority":"high","tag":["a","b"]},"args":["milk"]})",
             R"("priority": "high", "tag": ["a", "b"], "text": "milk")", "priority"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.fixture; });

TEST(Import, AnArgparseEnumAndRepeatedFlagAreTyped) {
  ImportOptions options;
  options.program = kNotes;
  std::unique_ptr<Binding> binding =
      Binding::bind(load_manifest(import_manifest(options).manifest));
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"notes_add", "notes_list", "notes_remove"}));
  const std::string add = binding->find("notes_add")->input_schema;
  EXPECT_NE(add.find(R"("enum":["low","normal","high"])"), std::string::npos) << add;
  EXPECT_NE(add.find(R"("tag":{"type":"array")"), std::string::npos) << add;
  try {
    binding->argv_for("notes_add", R"({"flags":{"priority":"urgent"}})");
    ADD_FAILURE() << "an enum value the program refuses passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::invalid_request);
  }
  EXPECT_NE(binding->find("notes_list")->input_schema.find(R"("limit":{"type":"integer")"),
            std::string::npos);
}

TEST(Import, StartsAtASubcommandWithTheWordsAsFixedArgs) {
  ImportOptions options;
  options.program = kNotes;
  options.start = {"add"};
  const std::string manifest = import_manifest(options).manifest;
  EXPECT_NE(manifest.find("fixed_args: [\"add\"]"), std::string::npos) << manifest;
  std::unique_ptr<Binding> binding = Binding::bind(load_manifest(manifest));
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"notes_add"}));
  Execution e = binding->call("notes_add", R"({"args":["eggs"]})");
  EXPECT_NE(e.stdout_text().find(R"("text": "eggs")"), std::string::npos) << e.stdout_text();
}

TEST(Import, HostileHelpEndsBoundedAndSaysWhy) {
  ImportOptions options;
  options.program = kHostile;
  options.per_page = std::chrono::seconds(2);
  options.max_depth = 3;
  const auto started = std::chrono::steady_clock::now();
  ImportResult result = import_manifest(options);
  const auto took = std::chrono::steady_clock::now() - started;
  std::string notes;
  for (const std::string& note : result.notes) notes += note + "\n";
  EXPECT_NE(notes.find("sleep --help: "), std::string::npos) << notes;
  EXPECT_NE(notes.find("deadline exceeded"), std::string::npos) << notes;
  // The flood is stopped by its CPU limit or its deadline: never read.
  EXPECT_NE(notes.find("flood --help: "), std::string::npos) << notes;
  EXPECT_NE(notes.find("repeats their parent's command list"), std::string::npos) << notes;
  EXPECT_NE(notes.find("stopped at depth 3"), std::string::npos) << notes;
  // Two pages of at most 2 s each, the rest at once.
  EXPECT_LT(took, std::chrono::seconds(20));
  // deep -> d2 -> d3 read, d4 listed but past the depth.
  EXPECT_NE(result.manifest.find("- name: d4"), std::string::npos) << result.manifest;
  EXPECT_EQ(result.manifest.find("- name: d5"), std::string::npos) << result.manifest;
  // What was written binds, and nothing of the walk is left running.
  EXPECT_NO_THROW(Binding::bind(load_manifest(result.manifest)));
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string cmdline = read_file(entry.path().string() + "/cmdline");
    EXPECT_NE(cmdline, std::string("sleep\0001000\000", 11)) << entry.path();
    EXPECT_EQ(cmdline.find("never ends"), std::string::npos) << entry.path();
  }
}

TEST(Import, ABudgetStopsTheWalkAndWhatWasReadIsKept) {
  ImportOptions options;
  options.program = kHostile;
  options.max_pages = 1;
  ImportResult result = import_manifest(options);
  EXPECT_EQ(result.runs, 1u);
  EXPECT_EQ(result.pages, 1u);
  ASSERT_FALSE(result.notes.empty());
  EXPECT_NE(result.notes.back().find("stopped after 1 help pages"), std::string::npos)
      << result.notes.back();
  EXPECT_NO_THROW(Binding::bind(load_manifest(result.manifest)));
}

TEST(Import, WhatCannotBeReadIsRefusedWithTheReason) {
  ImportOptions missing;
  missing.program = "/nonexistent/program";
  EXPECT_THROW(import_manifest(missing), ExecutableNotFound);
  ImportOptions silent;
  // Debian's /bin/sh (dash) answers --help and -h with "Illegal option".
  silent.program = "/bin/sh";
  try {
    import_manifest(silent);
    ADD_FAILURE() << "/bin/sh has no help to read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no flags and no commands"), std::string::npos)
        << e.what();
  }
  ImportOptions dash;
  dash.program = kNotes;
  dash.start = {"--help"};
  EXPECT_THROW(import_manifest(dash), std::invalid_argument);
}

TEST(Import, SuggestedNamesFitTheRule) {
  EXPECT_EQ(suggested_operation_name("git_v1.2"), "git_v1_2");
  EXPECT_EQ(suggested_operation_name(""), "operation");
  const std::string long_name = suggested_operation_name(std::string(100, 'x'));
  EXPECT_EQ(long_name.size(), 64u);
  EXPECT_NE(long_name, suggested_operation_name(std::string(99, 'x') + "y"));
}

}  // namespace
}  // namespace corral::bind
