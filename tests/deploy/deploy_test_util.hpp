// tests/deploy/deploy_test_util.hpp: what the deploy tests share: the
// manifests rendered by Debian's kubectl (its kustomize is v2.0.3, the
// oldest the layout must work with), the daemon's own settings, and child
// processes (a real `corral serve`, a real Prometheus, promtool).
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/settings.hpp"
#include "gtest/gtest.h"

extern char** environ;

namespace corral::deploy::testing {

inline const std::filesystem::path kSource = CORRAL_SOURCE_DIR;
inline const std::filesystem::path kDeploy = kSource / "deploy";
inline const std::filesystem::path kKubernetes = kDeploy / "kubernetes";

inline std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `text` as one shell word.
inline std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct CommandResult {
  int status = -1;     // the exit code; -1 when it did not exit normally
  std::string output;  // stdout and stderr together
};

// Runs `command` with /bin/sh and collects what it prints.
inline CommandResult run(const std::string& command) {
  CommandResult r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Debian's kubectl (package kubernetes-client 1.20, kustomize v2.0.3):
// unpacked by scripts/setup into build/third_party/kubernetes-client where
// another package owns /usr/bin/kubectl, else /usr/bin/kubectl if Debian's.
// Empty when neither exists.
inline std::string debian_kubectl() {
  const std::filesystem::path unpacked =
      kSource / "build/third_party/kubernetes-client/usr/bin/kubectl";
  if (::access(unpacked.c_str(), X_OK) == 0) return unpacked.string();
  const CommandResult owner = run("dpkg-query -S /usr/bin/kubectl");
  if (owner.status == 0 && owner.output.rfind("kubernetes-client:", 0) == 0)
    return "/usr/bin/kubectl";
  return {};
}

// The objects `kubectl kustomize dir` renders; a failed render fails the test.
inline std::vector<YAML::Node> render(const std::filesystem::path& dir) {
  const std::string kubectl = debian_kubectl();
  if (kubectl.empty()) {
    ADD_FAILURE() << "no Debian kubectl: run scripts/setup (it unpacks kubernetes-client)";
    return {};
  }
  const CommandResult r = run(quoted(kubectl) + " kustomize " + quoted(dir.string()));
  if (r.status != 0) {
    ADD_FAILURE() << "kubectl kustomize " << dir << ": " << r.output;
    return {};
  }
  return YAML::LoadAll(r.output);
}

// The directories a deployment is made from: the base and every overlay.
inline std::vector<std::filesystem::path> deployable_dirs() {
  std::vector<std::filesystem::path> dirs = {kKubernetes / "base"};
  for (const auto& entry : std::filesystem::directory_iterator(kKubernetes / "overlays"))
    if (entry.is_directory()) dirs.push_back(entry.path());
  return dirs;
}

// The objects of `kind` among `objects`.
inline std::vector<YAML::Node> of_kind(const std::vector<YAML::Node>& objects,
                                       const std::string& kind) {
  std::vector<YAML::Node> found;
  for (const YAML::Node& o : objects)
    if (o["kind"] && o["kind"].as<std::string>() == kind) found.push_back(o);
  return found;
}

// The one object of `kind` (a failure, and a null node, unless exactly one).
inline YAML::Node one(const std::vector<YAML::Node>& objects, const std::string& kind) {
  const std::vector<YAML::Node> found = of_kind(objects, kind);
  if (found.size() != 1) {
    ADD_FAILURE() << found.size() << " objects of kind " << kind << ", expected one";
    return YAML::Node(YAML::NodeType::Null);
  }
  return found.front();
}

// A quantity is a string in the manifests; YAML may type a bare one as a number.
inline std::string text(const YAML::Node& node) { return node ? node.as<std::string>() : ""; }

// The container's environment: literal values, and `secret_value` for a
// value from a Secret (the pod does not start without it).
inline std::map<std::string, std::string> env_of(const YAML::Node& container,
                                                 const std::string& secret_value = "token") {
  std::map<std::string, std::string> env;
  for (const YAML::Node& e : container["env"]) {
    const std::string name = e["name"].as<std::string>();
    if (e["value"])
      env[name] = e["value"].as<std::string>();
    else if (e["valueFrom"]["secretKeyRef"])
      env[name] = secret_value;
    else
      env[name] = "";
  }
  return env;
}

// Every environment variable the daemon reads, from its own declarations.
inline std::set<std::string> declared_variables() {
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

// The daemon's settings as the environment `env` makes them for `corral
// serve`, or nullopt with the daemon's refusals in `errors` (a listener's
// included: daemon::listening_errors).
inline std::optional<corral::daemon::Settings> parse_settings(
    const std::map<std::string, std::string>& env, std::vector<std::string>& errors) {
  CLI::App app;
  corral::daemon::SettingsParser parser(app);
  const char* argv[] = {"corral"};
  app.parse(1, argv);
  std::optional<corral::daemon::Settings> settings =
      parser.parse(errors, [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      });
  if (!settings) return settings;
  errors = corral::daemon::listening_errors(*settings);
  if (!errors.empty()) settings.reset();
  return settings;
}

// The same, where a refusal is a test failure.
inline corral::daemon::Settings settings_from(const std::map<std::string, std::string>& env) {
  std::vector<std::string> errors;
  auto settings = parse_settings(env, errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return settings.value_or(corral::daemon::Settings{});
}

inline double seconds(std::chrono::milliseconds d) {
  return std::chrono::duration<double>(d).count();
}

// Kubernetes memory quantities: 512Mi, 1Gi, 1G, plain bytes.
inline double quantity_bytes(const std::string& q) {
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

// A loopback TCP port free when asked (for programs that cannot take port 0).
inline std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A child process: stdout on a pipe the test reads, stderr into `log`.
// Stopped with SIGTERM (SIGKILL after 30 s) when it goes out of scope.
class Child {
 public:
  Child(std::vector<std::string> args, const std::vector<std::string>& extra_env,
        const std::filesystem::path& log)
      : log_(log) {
    int out[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()), 0)
        << args[0];
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    out_ = out[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(pid_, SIGKILL);
          ::waitpid(pid_, nullptr, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // no fd tells an exit
      }
    }
    ::close(out_);
  }

  // Reads stdout until a line matches `pattern`; returns the match and its
  // groups, or nothing after `bound` or at the end of stdout.
  std::vector<std::string> wait_for_line(const std::regex& pattern, std::chrono::seconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (true) {
      for (std::size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        std::smatch m;
        if (std::regex_search(line, m, pattern)) return {m.begin(), m.end()};
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{out_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return {};
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  std::string log() const { return read(log_); }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::filesystem::path log_;
  std::string buffer_;
};

}  // namespace corral::deploy::testing
