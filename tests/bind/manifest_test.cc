// tests/bind/manifest_test.cc: manifests in YAML and JSON, their strictness,
// and the example manifest run for real.
#include <gtest/gtest.h>

#include "bind/bind_test_util.hpp"
#include "core/json.hpp"

namespace corral::bind {
namespace {

namespace json = core::json;
using testing::names;

constexpr const char* kYaml = R"(
corral: 1
name: tool
executable: /bin/sh
description: a tool
supervisor: {slots: 3, deadline: 10s, cleanup_budget: 2s, output_budget: 64KiB, unit: process_group}
hardening:
  network: none
  rlimits: {cpu: 5s, address_space: 1GiB, open_files: 64, processes: 32}
  environment: {allow: [PATH], set: {LANG: C}}
  working_directory: /tmp
persistent_flags:
  - {name: verbose, type: count}
commands:
  - name: deploy
    commands:
      - name: canary
        description: ship a little
        flags:
          - {name: percent, type: uint8, required: true, default: 5}
          - {name: note, type: string, deprecated: "use --message"}
        args:
          - {name: service, required: true}
          - {name: more, variadic: true}
  - name: "yes"
    operation_name: tool_affirm
)";

TEST(Manifest, YamlFieldsLandInTheTree) {
  CommandTree t = load_manifest(kYaml);
  EXPECT_EQ(t.executable, "/bin/sh");
  EXPECT_EQ(t.root.name, "tool");
  EXPECT_FALSE(t.root.runnable);
  EXPECT_EQ(t.supervisor.slots, 3);
  EXPECT_EQ(t.supervisor.deadline, std::chrono::seconds(10));
  EXPECT_EQ(t.supervisor.cleanup_budget, std::chrono::seconds(2));
  EXPECT_EQ(t.supervisor.output_budget, 64u * 1024);
  EXPECT_EQ(t.supervisor.unit, process::UnitKind::process_group);
  EXPECT_TRUE(t.hardening.new_network_namespace);
  EXPECT_EQ(t.hardening.rlimits.cpu_seconds, 5u);
  EXPECT_EQ(t.hardening.rlimits.address_space, 1ull << 30);
  EXPECT_EQ(t.hardening.rlimits.open_files, 64u);
  EXPECT_EQ(t.hardening.rlimits.processes, 32u);
  EXPECT_EQ(*t.hardening.environment_allow, std::vector<std::string>{"PATH"});
  EXPECT_EQ(t.hardening.environment_set.at("LANG"), "C");
  EXPECT_EQ(t.hardening.working_directory, "/tmp");
  const CommandSpec& canary = t.root.commands[0].commands[0];
  EXPECT_EQ(canary.flags[0].default_json, "5");
  EXPECT_TRUE(canary.flags[0].required);
  EXPECT_TRUE(canary.flags[1].deprecated);
  EXPECT_EQ(canary.args->size(), 2u);
  EXPECT_TRUE((*canary.args)[1].variadic);
  EXPECT_EQ(t.root.commands[1].name, "yes");  // quoted: a string, not a boolean

  auto binding = Binding::bind(std::move(t));
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"tool_deploy_canary", "tool_affirm"}));
  EXPECT_EQ(binding->status().unit, process::UnitKind::process_group);
  EXPECT_EQ(binding->argv_for("tool_deploy_canary",
                              R"({"flags":{"percent":10,"verbose":1},"args":["api"]})"),
            (std::vector<std::string>{"/bin/sh", "deploy", "canary", "--percent=10", "--verbose=1",
                                      "--", "api"}));
}

TEST(Manifest, JsonIsReadTheSameWay) {
  CommandTree t = load_manifest(R"({"executable":"/bin/sh","name":"tool",
      "commands":[{"name":"run","flags":[{"name":"n","type":"int","default":2}]}]})");
  EXPECT_EQ(t.root.commands[0].flags[0].type, "int");
  EXPECT_EQ(t.root.commands[0].flags[0].default_json, "2");
  EXPECT_TRUE(t.root.commands[0].runnable);
}

TEST(Manifest, StrictAboutKeysAndValues) {
  EXPECT_THROW(load_manifest("executable: /bin/sh\ncomands: []\n"), std::invalid_argument);
  EXPECT_THROW(load_manifest("name: x\n"), std::invalid_argument);  // no executable
  EXPECT_THROW(load_manifest("executable: /bin/sh\ncorral: 2\n"), std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: /bin/sh\nflags: [{name: --x}]\n"), std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: /bin/sh\nsupervisor: {unit: jail}\n"),
               std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: /bin/sh\nhardening: {network: maybe}\n"),
               std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: /bin/sh\nargs: [{name: a, variadic: true}, {name: b}]\n"),
               std::invalid_argument);
  EXPECT_THROW(load_manifest("{not json"), std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: [unclosed\n"), std::invalid_argument);
  try {
    load_manifest("executable: /bin/sh\ncommands: [{name: a, flagz: []}]\n");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.commands[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("flagz"), std::string::npos) << e.what();
  }
}

// YAML scalars become JSON numbers by the same grammar the std::regex checks
// had (now one linear pass each); anything else stays a string.
TEST(Manifest, YamlScalarsAreTypedByOneLinearGrammar) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"12", "12"},
      {"-12", "-12"},
      {"+7", "7"},
      {"1.5", "1.5"},
      {"1.", "1.0"},
      {".5", "0.5"},
      {"1e3", "1E3"},
      {"-2.5E-1", "-0.25"},
      {"1e", "\"1e\""},
      {".", "\".\""},
      {"+", "\"+\""},
      {"1.2.3", "\"1.2.3\""},
      {"0x10", "\"0x10\""},
      {"1e+", "\"1e+\""},
      {"'5'", "\"5\""},
      {"true", "true"},
      {"~", "null"},
      {"123456789012345678901234567890", "\"123456789012345678901234567890\""},
  };
  for (const auto& [yaml, json_text] : cases) {
    CommandTree t =
        load_manifest("executable: /bin/sh\nflags: [{name: f, default: " + yaml + "}]\n");
    const std::optional<std::string>& got = t.root.flags.at(0).default_json;
    if (json_text == "null") {
      EXPECT_FALSE(got) << yaml;  // a null default is no default
    } else if (!got) {
      ADD_FAILURE() << yaml << ": no default";
    } else if (json_text == "1E3") {
      EXPECT_EQ(json::parse(*got).to_number<double>(), 1000.0) << yaml;
    } else {
      EXPECT_EQ(*got, json_text) << yaml;
    }
  }
}

// A long run of digits (or of almost-number) is typed in linear time and
// without recursion (std::regex recursed per character).
TEST(Manifest, LongScalarsAreTypedWithoutRecursion) {
  const std::string digits(200'000, '7');
  CommandTree t = load_manifest("executable: /bin/sh\nflags: [{name: f, default: " + digits + "." +
                                digits + "x}]\n");
  ASSERT_TRUE(t.root.flags.at(0).default_json);
  EXPECT_EQ(t.root.flags.at(0).default_json->size(), 2 * digits.size() + 4);
}

TEST(ManifestExample, GitHashObjectRunsForReal) {
  CommandTree t = load_manifest_file(CORRAL_SOURCE_DIR "/examples/git.yaml");
  // Confined, with the one folder the call reads bound in.
  BindOptions options;
  options.confinement.emplace();
  options.confinement->binds = {{CORRAL_SOURCE_DIR "/examples", "", false}};
  auto binding = Binding::bind(std::move(t), options);
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"git_version", "git_hash-object"}));
  auto schema = json::parse(binding->find("git_hash-object")->input_schema);
  EXPECT_FALSE(
      schema.at("properties").at("flags").at("properties").as_object().contains("literally"));

  std::string file = CORRAL_SOURCE_DIR "/examples/git.yaml";
  Execution e = binding->call(
      "git_hash-object", json::serialize(json::object{{"args", json::array{json::value(file)}}}));
  EXPECT_EQ(e.stdout_text().size(), 41u);  // 40 hex digits and a newline
  Execution v = binding->call("git_version", R"({"flags":{"build-options":true}})");
  EXPECT_EQ(v.stdout_text().rfind("git version", 0), 0u);
  EXPECT_NE(v.stdout_text().find("cpu:"), std::string::npos);
  try {
    binding->call("git_hash-object", R"({"args":["/nonexistent/file"]})");
    FAIL();
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), FailureCode::command_failed);
    EXPECT_FALSE(e.execution()->stderr_text().empty());
  }
}

}  // namespace
}  // namespace corral::bind
