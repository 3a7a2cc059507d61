// tests/bind/cli_test.cc: the `corral tools` and `corral call` subcommands,
// driven through the real binary.
#include <gtest/gtest.h>

#include "core/json.hpp"
#include "core/utf8.hpp"
#include "corral/process.hpp"

namespace corral::bind {
namespace {

namespace json = core::json;

struct Ran {
  std::string out;
  std::string err;
  int exit_code;
};

Ran corral(std::vector<std::string> args) {
  process::Supervisor supervisor;
  args.insert(args.begin(), CORRAL_TEST_CLI);
  try {
    Execution e = supervisor.run(process::Command{args, {}});
    return {e.stdout_text(), e.stderr_text(), *e.exit_code()};
  } catch (const CommandError& e) {
    return {e.execution()->stdout_text(), e.execution()->stderr_text(),
            e.execution()->exit_code().value_or(-1)};
  }
}

const std::string kManifest = CORRAL_SOURCE_DIR "/examples/git.yaml";

TEST(CorralCli, ToolsPrintsOperationsAndSchemas) {
  Ran r = corral({"tools", "--manifest", kManifest});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json::parse(r.out);
  auto& ops = out.at("operations").as_array();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].at("name"), "git_version");
  EXPECT_EQ(ops[1].at("inputSchema").at("type"), "object");
  EXPECT_EQ(ops[1].at("outputSchema").at("required").as_array().size(), 4u);
}

TEST(CorralCli, CallPrintsTheOutputView) {
  Ran r = corral({"call", "--manifest", kManifest, "git_version", "{}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto view = json::parse(r.out);
  EXPECT_EQ(view.at("exitCode"), 0);
  EXPECT_EQ(view.at("stdout").as_string().rfind("git version", 0), 0u);
}

TEST(CorralCli, CallPrintsOutputThatIsNotUtf8AsReplacementCharacters) {
  const std::string manifest = CORRAL_SOURCE_DIR "/tests/mcp/fixtures/not_utf8.yaml";
  Ran r = corral({"call", "--manifest", manifest, "bytes_bad_byte", "{}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(core::is_valid_utf8(r.out)) << r.out;
  auto view = json::parse(r.out);
  EXPECT_EQ(view.at("stdout").as_string(), "a\uFFFDb");
  EXPECT_EQ(view.at("stderr").as_string(), "\uFFFD");
  EXPECT_EQ(view.at("replaced"), true);

  // The 10-byte budget ends inside a euro sign: the cut falls before it.
  Ran cut = corral({"call", "--manifest", manifest, "bytes_cut_char", "{}"});
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_TRUE(core::is_valid_utf8(cut.out)) << cut.out;
  auto cut_view = json::parse(cut.out);
  EXPECT_EQ(cut_view.at("stdout").as_string(), "aaaaaaaa");
  EXPECT_EQ(cut_view.at("truncated"), true);
  EXPECT_FALSE(cut_view.as_object().contains("replaced"));
}

TEST(CorralCli, FailuresExitOneWithTheCode) {
  Ran bad = corral({"call", "--manifest", kManifest, "git_version", R"({"flags":{"nope":1}})"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("corral: invalid_request:"), std::string::npos) << bad.err;

  Ran failed =
      corral({"call", "--manifest", kManifest, "git_hash-object", R"({"args":["/nope"]})"});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("corral: command_failed:"), std::string::npos) << failed.err;
  EXPECT_EQ(json::parse(failed.out).at("exitCode"), 128);

  Ran missing = corral({"tools", "--manifest", "/nonexistent.yaml"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("invalid_request"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace corral::bind
