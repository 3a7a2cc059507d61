// tests/deploy/manifests_test.cc: the image and the manifests under deploy/
// held to the daemon they run. No Docker engine or cluster runs here, so the
// files are read (yaml-cpp) and checked against the daemon's own settings,
// and a real daemon answers every path they poll.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/units.hpp"
#include "daemon/admin.hpp"
#include "daemon/settings.hpp"
#include "gtest/gtest.h"

namespace {

const std::filesystem::path kDeploy = std::filesystem::path(CORRAL_SOURCE_DIR) / "deploy";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every environment variable the daemon reads, from its own declarations.
std::set<std::string> declared_variables() {
  CLI::App app;
  corral::daemon::SettingsParser parser(app);
  std::vector<std::string> errors;
  const char* argv[] = {"corral"};
  app.parse(1, argv);
  parser.parse(errors, [](const char*) -> const char* { return nullptr; });
  std::set<std::string> names;
  for (const auto& p : parser.provenance()) names.insert(p.env);
  return names;
}

// The daemon's settings as the environment `env` makes them.
corral::daemon::Settings settings_from(const std::map<std::string, std::string>& env) {
  CLI::App app;
  corral::daemon::SettingsParser parser(app);
  const char* argv[] = {"corral"};
  app.parse(1, argv);
  std::vector<std::string> errors;
  auto settings = parser.parse(errors, [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_TRUE(errors.empty()) << errors.front();
  return settings.value_or(corral::daemon::Settings{});
}

// Kubernetes memory quantities: 512Mi, 1Gi, 1G, plain bytes.
double quantity_bytes(const std::string& q) {
  static const std::map<std::string, double> units = {{"Ki", 1024.0},
                                                      {"Mi", 1024.0 * 1024},
                                                      {"Gi", 1024.0 * 1024 * 1024},
                                                      {"k", 1e3},
                                                      {"M", 1e6},
                                                      {"G", 1e9},
                                                      {"", 1}};
  std::size_t end = 0;
  const double value = std::stod(q, &end);
  return value * units.at(q.substr(end));
}

double seconds_of(const std::string& text) {
  return std::chrono::duration<double>(*corral::core::parse_duration(text, "duration")).count();
}

struct Deployment {
  YAML::Node container;
  YAML::Node pod;
  std::map<std::string, std::string> env;
};

Deployment load_deployment() {
  Deployment d;
  YAML::Node doc = YAML::LoadFile((kDeploy / "kubernetes" / "deployment.yaml").string());
  d.pod = doc["spec"]["template"]["spec"];
  d.container = d.pod["containers"][0];
  for (const auto& e : d.container["env"]) {
    if (e["value"])
      d.env[e["name"].as<std::string>()] = e["value"].as<std::string>();
    else
      d.env[e["name"].as<std::string>()] = "";
  }
  return d;
}

TEST(Manifests, EveryVariableNamedIsADeclaredSetting) {
  const std::set<std::string> declared = declared_variables();
  ASSERT_TRUE(declared.contains("CORRAL_MAX_QUEUE"));
  for (const auto& [name, value] : load_deployment().env)
    EXPECT_TRUE(declared.contains(name)) << "deployment.yaml names " << name;
  YAML::Node compose = YAML::LoadFile((kDeploy / "compose.yaml").string());
  for (const auto& e : compose["services"]["corral"]["environment"])
    EXPECT_TRUE(declared.contains(e.first.as<std::string>()))
        << "compose.yaml names " << e.first.as<std::string>();
  const std::regex env_word("\\b(CORRAL_[A-Z_]+)\\b");
  const std::string dockerfile = read(kDeploy / "Dockerfile");
  for (auto it = std::sregex_iterator(dockerfile.begin(), dockerfile.end(), env_word);
       it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(declared.contains((*it)[1].str())) << "Dockerfile names " << (*it)[1].str();
}

TEST(Manifests, ProbesPointAtThePortTheDaemonListensOn) {
  Deployment d = load_deployment();
  const auto settings = settings_from(d.env);
  std::map<std::string, int> named_ports;
  for (const auto& p : d.container["ports"])
    named_ports[p["name"].as<std::string>()] = p["containerPort"].as<int>();
  for (const char* probe : {"readinessProbe", "livenessProbe"}) {
    YAML::Node port = d.container[probe]["httpGet"]["port"];
    ASSERT_TRUE(port) << probe;
    const int resolved = port.IsScalar() && named_ports.contains(port.as<std::string>())
                             ? named_ports.at(port.as<std::string>())
                             : port.as<int>();
    EXPECT_EQ(resolved, settings.port) << probe;
  }
  EXPECT_EQ(d.container["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  EXPECT_EQ(d.container["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(settings.host, "0.0.0.0") << "a pod must listen beyond loopback";
  YAML::Node service = YAML::LoadFile((kDeploy / "kubernetes" / "service.yaml").string());
  EXPECT_TRUE(named_ports.contains(service["spec"]["ports"][0]["targetPort"].as<std::string>()));
}

TEST(Manifests, TerminationGraceExceedsTheShutdownGrace) {
  Deployment d = load_deployment();
  const auto settings = settings_from(d.env);
  const double grace = std::chrono::duration<double>(settings.shutdown_grace).count();
  EXPECT_GT(d.pod["terminationGracePeriodSeconds"].as<double>(), grace);
}

TEST(Manifests, MemoryLimitCoversThreeTimesEveryRunAtItsLimit) {
  Deployment d = load_deployment();
  const auto settings = settings_from(d.env);
  const double limit =
      quantity_bytes(d.container["resources"]["limits"]["memory"].as<std::string>());
  const double needed = 3.0 * static_cast<double>(settings.workers) *
                        static_cast<double>(settings.executions_per_worker) *
                        static_cast<double>(settings.memory_limit);
  EXPECT_GE(limit, needed);
}

TEST(Manifests, ComposePublishesThePortAndOutwaitsTheGrace) {
  YAML::Node service = YAML::LoadFile((kDeploy / "compose.yaml").string())["services"]["corral"];
  std::map<std::string, std::string> env;
  for (const auto& e : service["environment"])
    env[e.first.as<std::string>()] = e.second.as<std::string>();
  const auto settings = settings_from(env);
  const std::string published = service["ports"][0].as<std::string>();
  EXPECT_EQ(published.substr(published.rfind(':') + 1), std::to_string(settings.port));
  EXPECT_GT(seconds_of(service["stop_grace_period"].as<std::string>()),
            std::chrono::duration<double>(settings.shutdown_grace).count());
  EXPECT_EQ(service["build"]["dockerfile"].as<std::string>(), "deploy/Dockerfile");
}

TEST(Manifests, ImageRunsAsAnUnprivilegedUserChecksItselfAndPollsHealthz) {
  const std::string dockerfile = read(kDeploy / "Dockerfile");
  EXPECT_NE(dockerfile.find("\nUSER corral\n"), std::string::npos);
  EXPECT_NE(dockerfile.find("RUN /out/usr/local/bin/corral check"), std::string::npos);
  EXPECT_NE(dockerfile.find("http://127.0.0.1:${CORRAL_PORT}/healthz"), std::string::npos);
  EXPECT_NE(dockerfile.find("EXPOSE 8080"), std::string::npos);
  EXPECT_NE(dockerfile.find("CORRAL_PORT=8080"), std::string::npos);
  // Both stages from one base.
  const std::regex from("\nFROM ([^ \n]+)");
  std::set<std::string> bases;
  for (auto it = std::sregex_iterator(dockerfile.begin(), dockerfile.end(), from);
       it != std::sregex_iterator(); ++it)
    bases.insert((*it)[1].str());
  EXPECT_EQ(bases, std::set<std::string>{"${BASE_IMAGE}"});
}

}  // namespace

namespace {

TEST(Docs, OperationsDocumentsEverySetting) {
  const std::string doc = read(std::filesystem::path(CORRAL_SOURCE_DIR) / "docs" / "operations.md");
  CLI::App app;
  corral::daemon::SettingsParser parser(app);
  const char* argv[] = {"corral"};
  app.parse(1, argv);
  std::vector<std::string> errors;
  parser.parse(errors, [](const char*) -> const char* { return nullptr; });
  for (const auto& p : parser.provenance()) {
    EXPECT_NE(doc.find("| `" + p.flag + "` | `" + p.env + "` |"), std::string::npos)
        << p.flag << " is not in the settings table of docs/operations.md";
  }
}

}  // namespace
