// tests/bind/binding_test.cc: which commands become operations, their names,
// flags and schemas, argv layout, input refusal, and real calls.
#include <gtest/gtest.h>

#include <future>

#include "bind/bind_test_util.hpp"
#include "core/json.hpp"

namespace corral::bind {
namespace {

using namespace std::chrono_literals;
using testing::command;
using testing::flag;
using testing::lines;
using testing::names;
using testing::tree;
namespace json = core::json;

CommandSpec filters_tree() {
  CommandSpec hidden = command("secret");
  hidden.hidden = true;
  CommandSpec deprecated = command("old");
  deprecated.deprecated = true;
  CommandSpec omitted = command("mcp", {command("serve")});
  omitted.runnable = true;
  omitted.omit = true;
  CommandSpec hidden_parent = command("internal", {command("debug")});
  hidden_parent.hidden = true;
  return command(
      "tool", {command("deploy", {command("canary"), command("full")}), hidden, deprecated, omitted,
               hidden_parent, command("help"), command("completion"), command("status")});
}

TEST(BindingFilters, MandatoryFiltersThenPolicy) {
  auto binding = Binding::bind(tree(filters_tree()));
  // deploy is a pure group; secret/old hidden/deprecated; internal's child
  // has a hidden ancestor; help/completion at the root; mcp is omitted but
  // its child is not.
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"tool_deploy_canary", "tool_deploy_full",
                                                       "tool_mcp_serve", "tool_status"}));
}

TEST(BindingFilters, PolicyOnlyRemovesAndChildrenOfUnexposedParentsAreVisited) {
  BindOptions options;
  std::vector<std::string> asked;
  options.exposure = [&](const CommandInfo& info) {
    std::string path;
    for (const auto& p : info.path) path += (path.empty() ? "" : " ") + p;
    asked.push_back(path);
    return path != "deploy canary" && path != "mcp serve" ? path != "status" : false;
  };
  CommandSpec root = filters_tree();
  root.commands[0].runnable = true;  // deploy itself is runnable now
  auto binding = Binding::bind(tree(root), options);
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"tool_deploy", "tool_deploy_full"}));
  // The policy never saw what the mandatory filters removed.
  for (const auto& p : asked) {
    EXPECT_NE(p, "secret");
    EXPECT_NE(p, "help");
    EXPECT_NE(p, "internal debug");
  }
  auto policy_root = filters_tree();
  options.exposure = [](const CommandInfo& info) {
    return info.path != std::vector<std::string>{"deploy", "full"};
  };
  // A policy that says yes to everything cannot bring back a hidden command.
  options.exposure = [](const CommandInfo&) { return true; };
  EXPECT_EQ(Binding::bind(tree(policy_root), options)->operations().size(), 4u);
}

TEST(BindingNames, PrefixReplacesTheRootSegment) {
  BindOptions options;
  options.prefix = "ops";
  auto binding =
      Binding::bind(tree(command("tool", {command("deploy", {command("canary")})})), options);
  EXPECT_EQ(names(*binding), std::vector<std::string>{"ops_deploy_canary"});
}

TEST(BindingNames, CollisionFailsNamingBothCommands) {
  CommandSpec root = command("tool", {command("foo", {command("bar")}), command("foo_bar")});
  try {
    Binding::bind(tree(root));
    FAIL();
  } catch (const std::invalid_argument& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("tool foo bar"), std::string::npos) << message;
    EXPECT_NE(message.find("tool foo_bar"), std::string::npos) << message;
    EXPECT_NE(message.find("tool_foo_bar"), std::string::npos) << message;
  }
  BindOptions options;
  options.operation_names["foo_bar"] = "tool_foo-bar";
  auto binding = Binding::bind(tree(root), options);
  EXPECT_EQ(names(*binding), (std::vector<std::string>{"tool_foo_bar", "tool_foo-bar"}));
}

TEST(BindingNames, ManifestRenameAndBadNames) {
  CommandSpec renamed = command("foo_bar");
  renamed.operation_name = "tool_foo-bar";
  auto binding = Binding::bind(tree(command("tool", {command("foo", {command("bar")}), renamed})));
  EXPECT_EQ(binding->operations().size(), 2u);

  EXPECT_THROW(Binding::bind(tree(command("tool", {command("has space")}))), std::invalid_argument);
  EXPECT_THROW(Binding::bind(tree(command(std::string(130, 'x')))), std::invalid_argument);
  BindOptions unused;
  unused.operation_names["nope"] = "x";
  EXPECT_THROW(Binding::bind(tree(command("tool", {command("a")})), unused), std::invalid_argument);
}

TEST(BindingFlags, OrderShadowingAndExclusions) {
  CommandSpec leaf = command("run");
  leaf.flags = {flag("zeta", "string"), flag("alpha", "int")};
  FlagSpec hidden = flag("hidden", "string");
  hidden.hidden = true;
  FlagSpec deprecated = flag("deprecated", "string");
  deprecated.deprecated = true;
  leaf.flags.push_back(hidden);
  leaf.flags.push_back(deprecated);
  leaf.flags.push_back(flag("help", "bool"));
  CommandSpec root = command("tool", {leaf});
  root.persistent_flags = {flag("verbose", "count"), flag("alpha", "string")};
  BindOptions options;
  options.flag_filter = [](const CommandInfo&, const FlagSpec& f) { return f.name != "zeta"; };
  auto binding = Binding::bind(tree(root), options);
  auto argv = binding->argv_for("tool_run", R"({"flags":{"verbose":2,"alpha":5},"args":["x"]})");
  EXPECT_EQ(argv, (std::vector<std::string>{testing::printer(), "run", "--alpha=5", "--verbose=2",
                                            "--", "x"}));
  auto schema = json::parse(binding->find("tool_run")->input_schema);
  auto& props = schema.at("properties").at("flags").at("properties").as_object();
  EXPECT_EQ(props.size(), 2u);  // alpha (local int shadows inherited string), verbose
  EXPECT_EQ(props.at("alpha").at("type").as_string(), "integer");
  EXPECT_THROW(binding->argv_for("tool_run", R"({"flags":{"zeta":"x"}})"), SandboxError);
  EXPECT_THROW(binding->argv_for("tool_run", R"({"flags":{"hidden":"x"}})"), SandboxError);
}

TEST(BindingFlags, TypeWithoutCodecFailsNamingCommandFlagAndType) {
  CommandSpec leaf = command("run");
  leaf.flags = {flag("mode", "modeValue")};
  try {
    Binding::bind(tree(command("tool", {leaf})));
    FAIL();
  } catch (const std::invalid_argument& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("tool run"), std::string::npos) << m;
    EXPECT_NE(m.find("--mode"), std::string::npos) << m;
    EXPECT_NE(m.find("modeValue"), std::string::npos) << m;
  }
  // Not an error when the command is excluded anyway.
  leaf.hidden = true;
  EXPECT_NO_THROW(Binding::bind(tree(command("tool", {leaf, command("ok")}))));
  // A registered codec makes it bindable, narrowed by its constraints.
  leaf.hidden = false;
  BindOptions options;
  options.codecs["mode"] = TextCodec{R"({"enum":["fast","slow"]})"};
  auto binding = Binding::bind(tree(command("tool", {leaf})), options);
  auto schema = json::parse(binding->operations()[0].input_schema);
  EXPECT_EQ(
      schema.at("properties").at("flags").at("properties").at("mode").at("enum").as_array().size(),
      2u);
  EXPECT_THROW(binding->argv_for("tool_run", R"({"flags":{"mode":"medium"}})"), SandboxError);
  options.codecs["mode"] = TextCodec{R"({"type":"integer"})"};
  EXPECT_THROW(Binding::bind(tree(command("tool", {leaf})), options), std::invalid_argument);
}

TEST(BindingSchema, RequiredFlagsDefaultsAndArgs) {
  CommandSpec leaf = command("push");
  FlagSpec retries = flag("retries", "int");
  retries.default_json = "3";
  retries.description = "how often";
  leaf.flags = {flag("channel", "string", true), retries};
  leaf.args = std::vector<ArgSpec>{{"message", "", true, false}, {"extra", "", false, false}};
  auto binding = Binding::bind(tree(command("tool", {leaf})));
  auto schema = json::parse(binding->operations()[0].input_schema);
  EXPECT_EQ(schema.at("required").as_array(), json::array{"flags"});
  EXPECT_EQ(schema.at("additionalProperties"), false);
  auto& flags = schema.at("properties").at("flags");
  EXPECT_EQ(flags.at("additionalProperties"), false);
  EXPECT_EQ(flags.at("required").as_array(), json::array{"channel"});
  EXPECT_EQ(flags.at("properties").at("retries").at("default"), 3);
  EXPECT_EQ(flags.at("properties").at("retries").at("description"), "how often");
  auto& args = schema.at("properties").at("args");
  EXPECT_EQ(args.at("minItems"), 1);
  EXPECT_EQ(args.at("maxItems"), 2);
  auto output = json::parse(binding->operations()[0].output_schema);
  EXPECT_EQ(output.at("required").as_array().size(), 4u);

  EXPECT_THROW(binding->argv_for("tool_push", R"({"args":["m"]})"), SandboxError);
  EXPECT_THROW(binding->argv_for("tool_push", R"({"flags":{"channel":"c"}})"), SandboxError);
  EXPECT_THROW(binding->argv_for("tool_push", R"({"flags":{"channel":"c"},"args":["a","b","c"]})"),
               SandboxError);
  EXPECT_THROW(binding->argv_for("tool_push", R"({"flags":{"channel":"c"},"args":[1]})"),
               SandboxError);
  EXPECT_THROW(binding->argv_for("tool_push", R"({"flags":{"channel":"c"},"extra":1})"),
               SandboxError);
  EXPECT_THROW(binding->argv_for("tool_push", "not json"), SandboxError);
  EXPECT_THROW(binding->argv_for("tool_nope", "{}"), SandboxError);

  FlagSpec bad_default = flag("n", "int");
  bad_default.default_json = "\"three\"";
  leaf.flags = {bad_default};
  EXPECT_THROW(Binding::bind(tree(command("tool", {leaf}))), std::invalid_argument);
}

TEST(BindingCall, FlagLookingArgsStayArgs) {
  CommandSpec leaf = command("rm");
  leaf.flags = {flag("force", "bool"), flag("tag", "stringArray")};
  auto binding = Binding::bind(tree(command("tool", {leaf})));
  Execution e = binding->call(
      "tool_rm",
      R"({"flags":{"tag":["a","-b"],"force":false},"args":["-rf","--force=true","/", "--"]})");
  EXPECT_EQ(lines(e.stdout_text()),
            (std::vector<std::string>{"rm", "--force=false", "--tag=a", "--tag=-b", "--", "-rf",
                                      "--force=true", "/", "--"}));
  auto view = json::parse(e.value());
  EXPECT_EQ(view.at("exitCode"), 0);
  EXPECT_EQ(view.at("truncated"), false);
  EXPECT_EQ(view.at("stdout").as_string(), e.stdout_text());
  EXPECT_EQ(json::parse(output_view(e)), view);
}

TEST(BindingCall, InvalidValuesNeverStartAProcess) {
  CommandSpec leaf = command("run");
  leaf.flags = {flag("n", "uint8")};
  auto binding = Binding::bind(tree(command("tool", {leaf})));
  try {
    binding->call("tool_run", R"({"flags":{"n":300}})");
    FAIL();
  } catch (const SandboxError& e) {
    EXPECT_EQ(e.code(), FailureCode::invalid_request);
    EXPECT_FALSE(e.execution());
  }
  EXPECT_EQ(binding->status().runs_started, 0u);
}

TEST(BindingCall, NonZeroExitIsCommandFailedWithTheView) {
  CommandTree t = tree(command("tool"));
  t.hardening.environment_set["EXIT_WITH"] = "4";
  auto binding = Binding::bind(std::move(t));
  try {
    binding->call("tool", R"({"args":["out"]})");
    FAIL();
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), FailureCode::command_failed);
    auto view = json::parse(output_view(*e.execution()));
    EXPECT_EQ(view.at("exitCode"), 4);
    EXPECT_EQ(view.at("stdout"), "--\nout\n");
  }
}

TEST(BindingCall, DiscoveryNeverTakesASlot) {
  CommandTree t;
  t.executable = "/bin/sleep";
  t.root = command("sleep");
  auto binding = Binding::bind(std::move(t));
  process::CancelSource cancel;
  process::RunOptions run;
  run.cancel = cancel;
  auto running = std::async(std::launch::async, [&] {
    try {
      binding->call("sleep", R"({"args":["600"]})", run);  // sleep -- 600
    } catch (const Error& e) {
      return e.code();
    }
    return FailureCode::internal;
  });
  auto until = process::Clock::now() + 10s;
  while (binding->status().running == 0 && process::Clock::now() < until) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(binding->status().running, 1);
  EXPECT_EQ(binding->operations().size(), 1u);
  EXPECT_NE(binding->find("sleep"), nullptr);
  EXPECT_NO_THROW(binding->argv_for("sleep", "{}"));
  try {
    binding->call("sleep", R"({"args":["0"]})");
    FAIL() << "expected busy";
  } catch (const CapacityError& e) {
    EXPECT_EQ(e.code(), FailureCode::busy);
  }
  cancel.cancel();
  EXPECT_EQ(running.get(), FailureCode::cancelled);
}

TEST(BindingCall, ExecutableMustExistAtBindTime) {
  CommandTree t = tree(command("tool"));
  t.executable = "/nonexistent/tool";
  EXPECT_THROW(Binding::bind(std::move(t)), std::invalid_argument);
}

}  // namespace
}  // namespace corral::bind
