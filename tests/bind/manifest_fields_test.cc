// tests/bind/manifest_fields_test.cc: what the manifest's narrowing, spelling,
// argv and selection fields refuse, and how they inherit (the happy paths are
// the docs' examples: docs_examples_test.cc).
#include <gtest/gtest.h>

#include "bind/bind_test_util.hpp"
#include "corral/failure.hpp"

namespace corral::bind {
namespace {

using testing::names;

// The bind's error for `yaml`, or "" when it binds.
std::string bind_error(const std::string& yaml) {
  try {
    Binding::bind(load_manifest(yaml));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string call_refusal(Binding& binding, const std::string& op, const std::string& input) {
  try {
    binding.argv_for(op, input);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::invalid_request);
    return e.what();
  }
  return "";
}

std::vector<std::string> argv(Binding& binding, const std::string& op, const std::string& input) {
  std::vector<std::string> out = binding.argv_for(op, input);
  out.erase(out.begin());  // the executable's resolved path
  return out;
}

using Args = std::vector<std::string>;

TEST(ManifestFields, ConstraintsThatDoNotFitTheTypeFailTheBind) {
  const std::string head = "executable: /bin/echo\nflags:\n  - ";
  EXPECT_NE(bind_error(head + "{name: n, type: int, enum: [a, b]}").find("is not a valid"),
            std::string::npos);
  EXPECT_NE(bind_error(head + "{name: n, type: int, pattern: '^1'}").find("applies to strings"),
            std::string::npos);
  EXPECT_NE(bind_error(head + "{name: s, min: 1}").find("applies to numbers"), std::string::npos);
  EXPECT_NE(bind_error(head + "{name: m, type: stringToString, enum: [a]}").find("map flag"),
            std::string::npos);
  EXPECT_NE(bind_error(head + "{name: s, pattern: '(a'}").find("bad pattern"), std::string::npos);
  EXPECT_NE(bind_error(head + "{name: s, enum: []}").find("non-empty"), std::string::npos);
  EXPECT_NE(bind_error(head + "{name: s, enum: [[a]]}").find("enum lists"), std::string::npos);
  // A default outside the constraints is caught where the default is checked.
  EXPECT_NE(bind_error(head + "{name: n, type: int, max: 5, default: 7}").find("bad default"),
            std::string::npos);
  EXPECT_EQ(bind_error(head + "{name: n, type: uint8, min: -5, max: 300}"), "");
}

TEST(ManifestFields, TheTighterBoundOfTypeAndConstraintIsPublished) {
  auto binding = Binding::bind(
      load_manifest("executable: /bin/echo\nflags:\n  - {name: n, type: uint8, min: -5, max: 9}"));
  const std::string schema = binding->operations()[0].input_schema;
  EXPECT_NE(schema.find(R"("n":{"type":"integer","minimum":0,"maximum":9})"), std::string::npos)
      << schema;
  EXPECT_NE(call_refusal(*binding, "echo", R"({"flags":{"n":10}})").find("above the maximum 9"),
            std::string::npos);
  EXPECT_NE(call_refusal(*binding, "echo", R"({"flags":{"n":-1}})").find("below the minimum"),
            std::string::npos);
}

TEST(ManifestFields, AHugeEnumKeepsItsRefusalShort) {
  std::string yaml = "executable: /bin/echo\nflags:\n  - name: s\n    enum: [";
  for (int i = 0; i < 10'000; ++i) yaml += (i ? ",v" : "v") + std::to_string(i);
  yaml += "]\n";
  auto binding = Binding::bind(load_manifest(yaml));
  const std::string refusal = call_refusal(*binding, "echo", R"({"flags":{"s":"nope"}})");
  EXPECT_NE(refusal.find("the enum's 10000 values"), std::string::npos) << refusal.substr(0, 200);
  EXPECT_LT(refusal.size(), 300u);
  EXPECT_EQ(argv(*binding, "echo", R"({"flags":{"s":"v9999"}})"), (Args{"--s=v9999", "--"}));
}

TEST(ManifestFields, SpellingsThatCannotWorkFailTheBind) {
  const std::string head = "executable: /bin/echo\nflags:\n  - ";
  EXPECT_NE(bind_error(head + "{name: quiet, long: false, type: switch}").find("needs a short"),
            std::string::npos);
  EXPECT_NE(bind_error(head + "{name: quiet, short: qq}").find("one letter"), std::string::npos);
  EXPECT_NE(bind_error(head + "{name: v, type: bool, style: separate}").find("type switch"),
            std::string::npos);
  EXPECT_NE(bind_error(head + "{name: v, short: v, long: false, type: bool}").find("type switch"),
            std::string::npos);
  EXPECT_THROW(load_manifest(head + "{name: v, short: -v}"), std::invalid_argument);
  EXPECT_THROW(load_manifest(head + "{name: v, style: spaced}"), std::invalid_argument);
  EXPECT_THROW(load_manifest(head + "{name: two words}"), std::invalid_argument);
}

TEST(ManifestFields, ASeparateValueThatCouldBeAnOptionIsRefusedButNumbersPass) {
  auto binding = Binding::bind(load_manifest(R"(
executable: /bin/echo
flags:
  - {name: offset, type: int, style: separate}
  - {name: label, style: separate}
  - {name: tags, type: stringArray, short: t, long: false}
)"));
  EXPECT_EQ(argv(*binding, "echo", R"({"flags":{"offset":-5,"label":"x"}})"),
            (Args{"--offset", "-5", "--label", "x", "--"}));
  EXPECT_EQ(argv(*binding, "echo", R"({"flags":{"label":"-0.5e3"}})"),
            (Args{"--label", "-0.5e3", "--"}));
  EXPECT_EQ(argv(*binding, "echo", R"({"flags":{"label":""}})"), (Args{"--label", "", "--"}));
  EXPECT_EQ(argv(*binding, "echo", R"({"flags":{"tags":["a","b"]}})"),
            (Args{"-t", "a", "-t", "b", "--"}));
  for (const char* hostile : {"-rf", "--force", "-", "-inf", "-0x10"}) {
    const std::string input = std::string(R"({"flags":{"label":")") + hostile + "\"}}";
    EXPECT_NE(call_refusal(*binding, "echo", input).find("starts with '-'"), std::string::npos)
        << hostile;
  }
  EXPECT_NE(
      call_refusal(*binding, "echo", R"({"flags":{"tags":["ok","-x"]}})").find("starts with '-'"),
      std::string::npos);
}

TEST(ManifestFields, FixedArgsSeparatorAndExitCodesInheritDownTheTree) {
  auto binding = Binding::bind(load_manifest(R"(
executable: /bin/echo
name: tool
fixed_args: [--root]
separator: false
ok_exit_codes: [0, 3]
commands:
  - name: group
    fixed_args: [--group, "two words"]
    commands:
      - name: leaf
      - name: strict
        separator: true
        ok_exit_codes: [0]
)"));
  EXPECT_EQ(names(*binding), (Args{"tool_group_leaf", "tool_group_strict"}));
  EXPECT_EQ(argv(*binding, "tool_group_leaf", R"({"args":["a"]})"),
            (Args{"--root", "group", "--group", "two words", "leaf", "a"}));
  EXPECT_NE(call_refusal(*binding, "tool_group_leaf", R"({"args":["--x"]})").find("separator"),
            std::string::npos);
  EXPECT_EQ(argv(*binding, "tool_group_strict", R"({"args":["-x"]})"),
            (Args{"--root", "group", "--group", "two words", "strict", "--", "-x"}));
  EXPECT_THROW(load_manifest("executable: /bin/echo\nok_exit_codes: [256]"), std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: /bin/echo\nok_exit_codes: [-1]"), std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: /bin/echo\nok_exit_codes: [a]"), std::invalid_argument);
  EXPECT_THROW(load_manifest("executable: /bin/echo\nfixed_args: [1]"), std::invalid_argument);
}

TEST(ManifestFields, AnExitCodeOutsideTheListStillFails) {
  // sh -c 'exit N' with N from the input: the list decides, not the status.
  auto binding = Binding::bind(load_manifest(R"(
executable: /bin/sh
fixed_args: [-c, 'exit "$0"']
separator: false
ok_exit_codes: [0, 3]
)"));
  Execution three = binding->call("sh", R"({"args":["3"]})");
  EXPECT_FALSE(three.failed());
  EXPECT_EQ(three.exit_code(), 3);
  EXPECT_NE(three.value().find(R"("exitCode":3)"), std::string::npos) << three.value();
  try {
    binding->call("sh", R"({"args":["4"]})");
    ADD_FAILURE() << "exit 4 passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::command_failed);
    ASSERT_TRUE(e.execution());
    EXPECT_EQ(e.execution()->exit_code(), 4);
  }
}

TEST(ManifestFields, SelectorsMatchWordsAndWildcards) {
  const std::string tree = R"(
executable: /bin/echo
name: k
commands:
  - name: get
    runnable: true
    flags: [{name: output}, {name: watch, type: switch}]
    commands: [{name: pods}, {name: nodes}]
  - name: delete
    commands: [{name: pods}]
  - name: config
    commands: [{name: view}, {name: set}]
)";
  auto bind = [&](const std::string& expose) {
    return Binding::bind(load_manifest(tree + "expose:\n" + expose));
  };
  EXPECT_EQ(names(*bind("  include: ['* pods']")), (Args{"k_get_pods", "k_delete_pods"}));
  EXPECT_EQ(names(*bind("  exclude: [delete, config set]")),
            (Args{"k_get", "k_get_pods", "k_get_nodes", "k_config_view"}));
  EXPECT_EQ(names(*bind("  include: [get]\n  exclude: [get nodes]")),
            (Args{"k_get", "k_get_pods"}));
  auto flags = bind("  include: [get]\n  exclude_flags: ['get --watch', '--output']");
  const std::string schema = flags->find("k_get_pods")->input_schema;
  EXPECT_EQ(schema.find("watch"), std::string::npos) << schema;
  EXPECT_EQ(schema.find("output"), std::string::npos) << schema;
  for (const char* bad : {"  include: ['']", "  include: [get --watch]", "  exclude_flags: [get]",
                          "  exclude_flags: ['--']", "  other: [x]"}) {
    EXPECT_THROW(load_manifest(tree + "expose:\n" + bad), std::invalid_argument) << bad;
  }
}

TEST(ManifestFields, PrefixFromTheManifestYieldsToTheHost) {
  CommandTree t = load_manifest("executable: /bin/echo\nprefix: shout\ncommands: [{name: x}]");
  EXPECT_EQ(names(*Binding::bind(t)), (Args{"shout_x"}));
  BindOptions options;
  options.prefix = "host";
  EXPECT_EQ(names(*Binding::bind(t, options)), (Args{"host_x"}));
}

TEST(ManifestFields, NamesOutsideWhatClientsTakeFailWithAName) {
  const std::string dotted = bind_error("executable: /bin/echo\ncommands: [{name: v1.2}]");
  EXPECT_NE(dotted.find(R"(for example "echo_v1_2")"), std::string::npos) << dotted;
  const std::string long_a(70, 'a');
  const std::string first = bind_error("executable: /bin/echo\ncommands: [{name: " + long_a + "}]");
  const std::string second =
      bind_error("executable: /bin/echo\ncommands: [{name: " + long_a + "b}]");
  auto suggestion = [](const std::string& error) {
    const std::size_t at = error.rfind("for example \"");
    return error.substr(at + 13, error.size() - at - 14);
  };
  EXPECT_EQ(suggestion(first).size(), 64u) << first;
  EXPECT_NE(suggestion(first), suggestion(second));
  // What it suggests binds.
  EXPECT_EQ(bind_error("executable: /bin/echo\ncommands: [{name: " + long_a +
                       ", operation_name: " + suggestion(first) + "}]"),
            "");
  EXPECT_NE(bind_error("executable: /bin/echo\ncommands: [{name: a, operation_name: x.y}]"), "");
  EXPECT_EQ(bind_error("executable: /bin/echo\ncommands: [{name: a, operation_name: " +
                       std::string(64, 'x') + "}]"),
            "");
}

}  // namespace
}  // namespace corral::bind
