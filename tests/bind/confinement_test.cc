// tests/bind/confinement_test.cc: confinement profiles in manifests (every
// key, every bad value named), per-command overrides and their inheritance,
// BindOptions::confinement, each operation's hardening and protections, the
// exact codecs' refusals before any process starts, exec size limits and a
// missing executable at call time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bind/bind_test_util.hpp"
#include "core/json.hpp"

namespace corral::bind {
namespace {

using testing::command;
using testing::flag;
using testing::tree;
namespace json = core::json;

std::string error_of(std::string_view manifest) {
  try {
    load_manifest(manifest);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ManifestConfinement, NoConfinementIsTheConfinedProfile) {
  CommandTree t = load_manifest("executable: /bin/sh\n");
  EXPECT_EQ(t.hardening.confinement, process::Confinement{});
  EXPECT_TRUE(t.hardening.confinement.user_namespace);
  EXPECT_EQ(t.hardening.confinement.filesystem, process::FilesystemView::minimal);
  EXPECT_FALSE(t.hardening.confinement.network);
  ASSERT_TRUE(t.hardening.environment_allow);
  EXPECT_TRUE(t.hardening.environment_allow->empty());
}

TEST(ManifestConfinement, EveryKeyLandsInTheTree) {
  CommandTree t = load_manifest(R"(
executable: /bin/sh
confinement:
  user: confined
  uid: 1000
  gid: 1001
  seccomp: false
  pid_namespace: false
  filesystem: host_read_only
  binds:
    - /srv/data
    - /srv/out:/out:rw
    - {source: /srv/cache, target: /cache, writable: true}
    - "/srv/ro:ro"
  network: host
  limits: {processes: 32, memory: 256MiB, cpus: 1.5}
  strict: true
)");
  const process::Confinement& c = t.hardening.confinement;
  EXPECT_TRUE(c.user_namespace);
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_EQ(c.gid, 1001u);
  EXPECT_FALSE(c.seccomp);
  EXPECT_FALSE(c.pid_namespace);
  EXPECT_EQ(c.filesystem, process::FilesystemView::host_read_only);
  EXPECT_EQ(c.binds, (std::vector<process::Bind>{{"/srv/data", "", false},
                                                 {"/srv/out", "/out", true},
                                                 {"/srv/cache", "/cache", true},
                                                 {"/srv/ro", "", false}}));
  EXPECT_TRUE(c.network);
  EXPECT_EQ(c.limits.processes, 32u);
  EXPECT_EQ(c.limits.memory_bytes, 256u << 20);
  EXPECT_EQ(c.limits.cpus, 1.5);
  EXPECT_TRUE(c.strict);
  EXPECT_TRUE(t.root.confinement.empty());  // the root's is the tree's

  CommandTree none = load_manifest(
      "executable: /bin/sh\nconfinement: {user: host, limits: {processes: none, memory: none, "
      "cpus: none}}\n");
  EXPECT_FALSE(none.hardening.confinement.user_namespace);
  EXPECT_EQ(none.hardening.confinement.limits,
            (process::ResourceLimits{std::nullopt, std::nullopt, std::nullopt}));

  CommandTree host = load_manifest("executable: /bin/sh\nconfinement: host\n");
  EXPECT_EQ(host.hardening.confinement, process::Confinement::none());
}

TEST(ManifestConfinement, BadValuesAreRefusedNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"confinement: {usr: host}", "unknown key \"usr\""},
      {"confinement: {user: root}", "confinement.user"},
      {"confinement: {uid: -1}", "confinement.uid"},
      {"confinement: {uid: 4294967295}", "confinement.uid"},
      {"confinement: {user: host, uid: 5}", "user namespace"},
      {"confinement: {seccomp: maybe}", "confinement.seccomp"},
      {"confinement: {pid_namespace: 1}", "confinement.pid_namespace"},
      {"confinement: {filesystem: chroot}", "confinement.filesystem"},
      {"confinement: {binds: /srv}", "confinement.binds"},
      {"confinement: {binds: [\"\"]}", "binds[0]"},
      {"confinement: {binds: [\"/a:b\"]}", "absolute"},
      {"confinement: {binds: [\"/a:/b:/c\"]}", "SRC[:DST][:rw]"},
      {"confinement: {binds: [{source: /a, mode: rw}]}", "unknown key \"mode\""},
      {"confinement: {network: internet}", "confinement.network"},
      {"confinement: {limits: {processes: 0}}", "limits.processes"},
      {"confinement: {limits: {processes: many}}", "limits.processes"},
      {"confinement: {limits: {memory: lots}}", "limits.memory"},
      {"confinement: {limits: {memory: 0}}", "limits.memory"},
      {"confinement: {limits: {cpus: 0}}", "limits.cpus"},
      {"confinement: {limits: {cpus: two}}", "limits.cpus"},
      {"confinement: {limits: {threads: 2}}", "unknown key \"threads\""},
      {"confinement: {strict: yes}", "confinement.strict"},
      {"confinement: jail", "confinement"},
      {"hardening: {network: host}\nconfinement: {network: host}", "confinement.network only"},
      {"commands: [{name: a, confinement: {filesystem: nope}}]",
       "manifest.commands[0].confinement.filesystem"},
  };
  for (const auto& [yaml, expected] : cases) {
    std::string error = error_of("executable: /bin/sh\n" + yaml + "\n");
    EXPECT_NE(error.find(expected), std::string::npos) << yaml << " -> " << error;
  }
}

TEST(ManifestConfinement, HardeningNetworkIsAnAliasOfConfinementNetwork) {
  CommandTree host = load_manifest("executable: /bin/sh\nhardening: {network: host}\n");
  EXPECT_TRUE(host.hardening.confinement.network);
  CommandTree none = load_manifest("executable: /bin/sh\nhardening: {network: none}\n");
  EXPECT_FALSE(none.hardening.confinement.network);
  EXPECT_TRUE(none.hardening.new_network_namespace);
}

TEST(ManifestConfinement, RelativeBindSourcesResolveAgainstTheManifestDirectory) {
  auto dir = std::filesystem::temp_directory_path() / ("corral_bind_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "data");
  std::filesystem::create_directories(dir / "out");
  {
    std::ofstream out(dir / "m.yaml");
    out << "executable: /bin/sh\nconfinement: {binds: [data]}\n"
           "commands: [{name: a, confinement: {binds: [\"out:/out:rw\"]}}]\n";
  }
  CommandTree t = load_manifest_file((dir / "m.yaml").string());
  EXPECT_EQ(t.hardening.confinement.binds[0].source, (dir / "data").string());
  EXPECT_EQ((*t.root.commands[0].confinement.binds)[0].source, (dir / "out").string());
  auto binding = Binding::bind(std::move(t));
  EXPECT_EQ(binding->find("sh_a")->hardening.confinement.binds,
            (std::vector<process::Bind>{{(dir / "out").string(), "/out", true}}));
  std::filesystem::remove_all(dir);
}

constexpr const char* kLayered = R"(
executable: /bin/sh
name: tool
confinement: {filesystem: host_read_only, limits: {processes: 64}}
commands:
  - name: build
    confinement: {network: host, binds: ["/tmp:/work:rw"], limits: {memory: 1GiB}}
    commands:
      - name: fast
        confinement: {limits: {cpus: 2}}
      - name: plain
  - name: trusted
    confinement: host
  - name: other
)";

TEST(ManifestConfinement, CommandsOverrideFieldByFieldAndSubcommandsInherit) {
  auto binding = Binding::bind(load_manifest(kLayered));
  auto profile = [&](const char* name) { return binding->find(name)->hardening.confinement; };

  process::Confinement fast = profile("tool_build_fast");
  EXPECT_EQ(fast.filesystem, process::FilesystemView::host_read_only);  // tree
  EXPECT_TRUE(fast.network);                                            // build
  EXPECT_EQ(fast.binds, (std::vector<process::Bind>{{"/tmp", "/work", true}}));
  EXPECT_EQ(fast.limits.processes, 64u);          // tree
  EXPECT_EQ(fast.limits.memory_bytes, 1u << 30);  // build
  EXPECT_EQ(fast.limits.cpus, 2.0);               // its own
  EXPECT_TRUE(fast.user_namespace);               // the default

  process::Confinement plain = profile("tool_build_plain");
  EXPECT_FALSE(plain.limits.cpus);
  EXPECT_TRUE(plain.network);

  EXPECT_EQ(profile("tool_trusted"), process::Confinement::none());
  process::Confinement other = profile("tool_other");
  EXPECT_FALSE(other.network);
  EXPECT_TRUE(other.binds.empty());
  EXPECT_EQ(other.limits.processes, 64u);
  EXPECT_TRUE(binding->find("tool_other")->hardening.new_network_namespace);
  EXPECT_FALSE(binding->find("tool_build_plain")->hardening.new_network_namespace);
}

TEST(ManifestConfinement, BindOptionsConfinementReplacesEveryProfile) {
  BindOptions options;
  options.confinement = process::Confinement::none();
  options.confinement->limits.processes = 7;
  auto binding = Binding::bind(load_manifest(kLayered), options);
  for (const auto& op : binding->operations()) {
    EXPECT_EQ(op.hardening.confinement, *options.confinement) << op.name;
  }
}

TEST(ManifestConfinement, EachOperationCarriesItsProtections) {
  auto binding = Binding::bind(load_manifest(kLayered));
  process::Supervisor supervisor;
  for (const auto& op : binding->operations()) {
    std::vector<process::Protection> expected = supervisor.protections(op.hardening);
    ASSERT_EQ(op.protections.size(), expected.size()) << op.name;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(op.protections[i].name, expected[i].name);
      EXPECT_EQ(op.protections[i].enforced, expected[i].enforced);
    }
  }
  auto profile = json::parse(profile_json(binding->find("tool_build_fast")->hardening));
  EXPECT_EQ(profile.at("filesystem"), "host_read_only");
  EXPECT_EQ(profile.at("network"), "host");
  EXPECT_EQ(profile.at("limits").at("cpus"), 2.0);
  EXPECT_EQ(profile.at("binds").at(0).at("target"), "/work");
  EXPECT_EQ(profile.at("environment").at("allow").as_array().size(), 0u);
}

TEST(BindConfinement, BindSourcesMustExistAndBeAbsolute) {
  CommandTree relative = tree(command("tool"));
  relative.hardening.confinement.binds = {{"data", "", false}};
  EXPECT_THROW(Binding::bind(std::move(relative)), std::invalid_argument);
  CommandTree missing = tree(command("tool"));
  missing.hardening.confinement.binds = {{"/nonexistent/corral/bind", "", false}};
  try {
    Binding::bind(std::move(missing));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corral/bind"), std::string::npos);
  }
  // The process layer's rule, at bind time: /proc, a target "/", too many.
  for (auto binds : {std::vector<process::Bind>{{"/proc/self", "", false}},
                     std::vector<process::Bind>{{"/usr", "/", false}},
                     std::vector<process::Bind>(257, process::Bind{"/usr", "", false})}) {
    CommandTree bad = tree(command("tool"));
    bad.hardening.confinement.binds = binds;
    EXPECT_THROW(Binding::bind(std::move(bad)), std::invalid_argument) << binds.size();
  }
}

TEST(BindConfinement, EachCallRunsWithItsOperationsHardening) {
  CommandSpec a = command("a");
  CommandSpec b = command("b");
  b.confinement.user_namespace = false;  // only the profile differs
  CommandTree t = tree(command("tool", {a, b}));
  t.hardening.environment_set["GREETING"] = "hi";
  auto binding = Binding::bind(std::move(t));
  EXPECT_TRUE(binding->find("tool_a")->hardening.confinement.user_namespace);
  EXPECT_FALSE(binding->find("tool_b")->hardening.confinement.user_namespace);
  EXPECT_EQ(binding->find("tool_b")->hardening.environment_set.at("GREETING"), "hi");
  Execution e = binding->call("tool_b", R"({"args":["x"]})");
  EXPECT_EQ(e.stdout_text(), "b\n--\nx\n");
}

// Each refusal is invalid_request, names what is wrong, and starts nothing.
void expect_refused(Binding& binding, const std::string& op, const std::string& input,
                    const std::string& expected) {
  const std::uint64_t started = binding.status().runs_started;
  try {
    binding.call(op, input);
    ADD_FAILURE() << input << " was accepted";
  } catch (const SandboxError& e) {
    EXPECT_EQ(e.code(), FailureCode::invalid_request) << input;
    EXPECT_FALSE(e.execution());
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << input << " -> " << e.what();
  }
  EXPECT_EQ(binding.status().runs_started, started) << input;
}

std::unique_ptr<Binding> typed_binding() {
  CommandSpec leaf = command("run");
  leaf.flags = {flag("f", "float64"),   flag("g", "float32"),    flag("i", "int64"),
                flag("u", "uint64"),    flag("s", "string"),     flag("fs", "float64Slice"),
                flag("is", "intSlice"), flag("m", "stringToInt")};
  return Binding::bind(tree(command("tool", {leaf})));
}

TEST(ExactCodecs, NonFiniteAndInexactNumbersAreRefusedBeforeAnyProcess) {
  auto binding = typed_binding();
  expect_refused(*binding, "tool_run", R"({"flags":{"f":1e400}})", "would be infinite");
  expect_refused(*binding, "tool_run", R"({"flags":{"f":-1e400}})", "would be infinite");
  expect_refused(*binding, "tool_run", R"({"flags":{"fs":[1, 1e999]}})", "would be infinite");
  expect_refused(*binding, "tool_run", R"({"flags":{"i":9007199254740993.0}})", "rounded");
  expect_refused(*binding, "tool_run", R"({"flags":{"f":9007199254740993.0}})", "rounded");
  expect_refused(*binding, "tool_run", R"({"flags":{"i":1.0000000000000001}})", "rounded");
  expect_refused(*binding, "tool_run", R"({"flags":{"f":1e-400}})", "rounded");
  expect_refused(*binding, "tool_run", R"({"flags":{"u":18446744073709551617}})", "rounded");
  // 2^64 is a double exactly, but out of the flag's range.
  expect_refused(*binding, "tool_run", R"({"flags":{"u":18446744073709551616}})", "integer");
  expect_refused(*binding, "tool_run", R"({"flags":{"m":{"a":9007199254740993.0}}})", "rounded");
  // An exact integer a double cannot hold, sent to a float flag.
  expect_refused(*binding, "tool_run", R"({"flags":{"f":9007199254740993}})", "exactly");
  expect_refused(*binding, "tool_run", R"({"flags":{"g":16777217}})", "exactly");
  expect_refused(*binding, "tool_run", R"({"flags":{"g":16777217.0}})", "exactly");
  // An integer flag gets exact digits: past 2^53 a double is refused.
  expect_refused(*binding, "tool_run", R"({"flags":{"i":9007199254740992.0}})", "integer");
  expect_refused(*binding, "tool_run", R"({"flags":{"is":[1.5]}})", "integer");

  // What a double does hold passes, digits unchanged.
  EXPECT_EQ(binding->argv_for(
                "tool_run",
                R"({"flags":{"f":0.1,"i":9007199254740993,"u":18446744073709551615,"g":0.5}})"),
            (std::vector<std::string>{testing::printer(), "run", "--f=0.1", "--g=0.5",
                                      "--i=9007199254740993", "--u=18446744073709551615", "--"}));
  // 0.1000000000000000055511151231257827021181583404541015625 is 0.1's
  // exact binary value: also faithful.
  EXPECT_EQ(binding->argv_for(
                "tool_run",
                R"({"flags":{"f":0.1000000000000000055511151231257827021181583404541015625}})"),
            (std::vector<std::string>{testing::printer(), "run", "--f=0.1", "--"}));
  EXPECT_EQ(binding->argv_for("tool_run", R"({"flags":{"i":42.0,"f":1E+2,"fs":[2.50,-0.0]}})"),
            (std::vector<std::string>{testing::printer(), "run", "--f=100", "--i=42", "--fs=2.5",
                                      "--fs=-0", "--"}));
}

TEST(ExactCodecs, DuplicateKeysAreRefusedAtAnyDepth) {
  auto binding = typed_binding();
  expect_refused(*binding, "tool_run", R"({"flags":{"s":"a","s":"b"}})", "\"s\" appears twice");
  expect_refused(*binding, "tool_run", R"({"args":[],"args":["x"]})", "\"args\" appears twice");
  expect_refused(*binding, "tool_run", R"({"flags":{"m":{"k":1,"k":2}}})", "\"k\" appears twice");
  // Escapes spell the same key.
  expect_refused(*binding, "tool_run", R"({"flags":{"s":"a","\u0073":"b"}})", "appears twice");
  // The same key in two objects is fine.
  EXPECT_NO_THROW(binding->argv_for("tool_run", R"({"flags":{"m":{"s":1},"s":"x"}})"));
}

TEST(ExecLimits, ArgumentListsOverTheKernelsLimitAreRefusedBeforeAnyProcess) {
  auto binding = Binding::bind(tree(command("tool")));
  // One argument over MAX_ARG_STRLEN (131072 with its NUL).
  json::object one{{"args", json::array{json::value(std::string(131072, 'a'))}}};
  expect_refused(*binding, "tool", json::serialize(one), "limit for one argument");
  // Exactly at the limit is fine.
  json::object fits{{"args", json::array{json::value(std::string(131071, 'a'))}}};
  EXPECT_NO_THROW(binding->argv_for("tool", json::serialize(fits)));
  // Many arguments of legal size, together over _SC_ARG_MAX.
  const std::size_t total = std::min<std::size_t>(::sysconf(_SC_ARG_MAX), 6u << 20);
  json::array many;
  for (std::size_t n = 0; n <= total / 100000; ++n)
    many.push_back(json::value(std::string(100000, 'b')));
  expect_refused(*binding, "tool", json::serialize(json::object{{"args", std::move(many)}}),
                 "exec takes at most");
  // The environment counts too.
  CommandTree big = tree(command("tool"));
  big.hardening.environment_set["HUGE"] = std::string(200000, 'c');
  auto env_binding = Binding::bind(std::move(big));
  expect_refused(*env_binding, "tool", "{}", "an environment variable");
}

TEST(CallTime, AnExecutableRemovedAfterTheBindIsUnavailableNamingIt) {
  auto path =
      std::filesystem::temp_directory_path() / ("corral_gone_" + std::to_string(getpid()) + ".sh");
  std::filesystem::copy_file(testing::printer(), path,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  CommandTree t = tree(command("tool"));
  t.executable = path.string();
  auto binding = Binding::bind(std::move(t));
  std::filesystem::remove(path);
  try {
    binding->call("tool", "{}");
    FAIL();
  } catch (const SetupError& e) {
    EXPECT_EQ(e.code(), FailureCode::unavailable);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(CallTime, AnExecutableMissingAtBindTimeIsExecutableNotFound) {
  CommandTree t = tree(command("tool"));
  t.executable = "/nonexistent/corral-tool";
  try {
    Binding::bind(std::move(t));
    FAIL();
  } catch (const ExecutableNotFound& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corral-tool"), std::string::npos);
  }
}

TEST(CallTime, AFailedCallsExecutionCarriesTheOutputView) {
  CommandTree t = tree(command("tool"));
  t.hardening.environment_set["EXIT_WITH"] = "3";
  auto binding = Binding::bind(std::move(t));
  try {
    binding->call("tool", R"({"args":["x"]})");
    FAIL();
  } catch (const CommandError& e) {
    auto view = json::parse(e.execution()->value());
    EXPECT_EQ(view.at("exitCode"), 3);
    EXPECT_EQ(view.at("stdout"), "--\nx\n");
  }
}

}  // namespace
}  // namespace corral::bind
