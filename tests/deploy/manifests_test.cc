// tests/deploy/manifests_test.cc: the image and the manifests under deploy/
// held to the daemon they run. No Docker engine or cluster runs here: the
// kustomize base and every overlay are rendered by Debian's kubectl
// (kustomize v2.0.3) and the objects checked against the daemon's own
// settings; monitoring_test.cc runs a real daemon and Prometheus.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "core/units.hpp"
#include "deploy/deploy_test_util.hpp"
#include "gtest/gtest.h"

namespace {

using namespace corral::deploy::testing;

double seconds_of(const std::string& text) {
  return std::chrono::duration<double>(*corral::core::parse_duration(text, "duration")).count();
}

// One rendered directory (base or overlay) and its Deployment's parts.
struct Rendering {
  std::string name;  // "base", "overlays/prod", ...
  std::vector<YAML::Node> objects;
  YAML::Node deployment, pod, container;
  std::map<std::string, std::string> env;
};

std::vector<Rendering> render_all() {
  std::vector<Rendering> all;
  for (const auto& dir : deployable_dirs()) {
    Rendering r;
    r.name = std::filesystem::relative(dir, kKubernetes).string();
    r.objects = render(dir);
    r.deployment = one(r.objects, "Deployment");
    if (!r.deployment) continue;
    r.pod = r.deployment["spec"]["template"]["spec"];
    r.container = r.pod["containers"][0];
    r.env = env_of(r.container);
    all.push_back(std::move(r));
  }
  return all;
}

const std::vector<Rendering>& renderings() {
  static const std::vector<Rendering> all = render_all();
  return all;
}

const Rendering& rendering(const std::string& name) {
  for (const Rendering& r : renderings())
    if (r.name == name) return r;
  static const Rendering none;
  ADD_FAILURE() << name << " did not render";
  return none;
}

// The container port a probe's or policy's `port` (a name or a number) means.
int resolve_port(const YAML::Node& container, const YAML::Node& port) {
  for (const YAML::Node& p : container["ports"])
    if (p["name"] && p["name"].as<std::string>() == port.as<std::string>())
      return p["containerPort"].as<int>();
  return port.as<int>();
}

// Whether `selector` (matchLabels, or a bare label map) selects `labels`.
bool selects(const YAML::Node& selector, const YAML::Node& labels) {
  const YAML::Node match = selector["matchLabels"] ? selector["matchLabels"] : selector;
  if (!match || match.size() == 0) return false;
  for (const auto& kv : match)
    if (!labels[kv.first.as<std::string>()] ||
        labels[kv.first.as<std::string>()].as<std::string>() != kv.second.as<std::string>())
      return false;
  return true;
}

TEST(Kustomize, BaseAndEveryOverlayRenderWithDebiansKubectl) {
  const std::string kubectl = debian_kubectl();
  ASSERT_FALSE(kubectl.empty()) << "run scripts/setup: it unpacks Debian's kubernetes-client";
  EXPECT_NE(run(quoted(kubectl) + " version --client").output.find("GitVersion:\"v1.20."),
            std::string::npos)
      << "the manifests must render with the kustomize inside Debian 12's kubectl 1.20";
  std::set<std::string> names;
  for (const Rendering& r : renderings()) {
    names.insert(r.name);
    for (const char* kind :
         {"ServiceAccount", "Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy"})
      EXPECT_EQ(of_kind(r.objects, kind).size(), 1u) << r.name << ": " << kind;
    EXPECT_LE(of_kind(r.objects, "HorizontalPodAutoscaler").size() +
                  of_kind(r.objects, "ScaledObject").size(),
              1u)
        << r.name << ": two autoscalers would fight over one Deployment";
  }
  for (const char* expected :
       {"base", "overlays/dev", "overlays/open", "overlays/prod", "overlays/prod-keda"})
    EXPECT_TRUE(names.contains(expected)) << expected;
  EXPECT_EQ(names.size(), deployable_dirs().size());
}

TEST(Kustomize, TheTokenSecretIsRequiredUnlessTheOverlaySaysOpen) {
  for (const Rendering& r : renderings()) {
    SCOPED_TRACE(r.name);
    std::optional<YAML::Node> token_ref;
    for (const YAML::Node& e : r.container["env"])
      if (e["name"].as<std::string>() == "CORRAL_AUTH_TOKEN" && e["valueFrom"]["secretKeyRef"])
        token_ref = e["valueFrom"]["secretKeyRef"];
    if (r.name == "overlays/open") {
      EXPECT_FALSE(token_ref) << "the open overlay serves without a token";
      EXPECT_EQ(r.env.count("CORRAL_AUTH_TOKEN"), 0u);
      ASSERT_EQ(r.env.count("CORRAL_ALLOW_UNAUTHENTICATED"), 1u);
      const auto settings = settings_from(r.env);
      EXPECT_TRUE(settings.allow_unauthenticated);
      // The opt-out is what lets it start: without it the daemon refuses.
      std::map<std::string, std::string> closed = r.env;
      closed.erase("CORRAL_ALLOW_UNAUTHENTICATED");
      std::vector<std::string> errors;
      EXPECT_FALSE(parse_settings(closed, errors).has_value());
      continue;
    }
    ASSERT_TRUE(token_ref) << "CORRAL_AUTH_TOKEN must come from the Secret";
    EXPECT_EQ((*token_ref)["name"].as<std::string>(), "corral");
    EXPECT_EQ((*token_ref)["key"].as<std::string>(), "token");
    EXPECT_FALSE((*token_ref)["optional"] && (*token_ref)["optional"].as<bool>())
        << "an optional Secret would start an open executor when it is missing";
    EXPECT_EQ(r.env.count("CORRAL_ALLOW_UNAUTHENTICATED"), 0u);
    EXPECT_FALSE(settings_from(r.env).auth_token.empty());
  }
}

TEST(Manifests, EveryVariableNamedIsADeclaredSetting) {
  const std::set<std::string> declared = declared_variables();
  ASSERT_TRUE(declared.contains("CORRAL_MAX_QUEUE"));
  for (const Rendering& r : renderings())
    for (const auto& [name, value] : r.env)
      EXPECT_TRUE(declared.contains(name)) << r.name << " names " << name;
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

TEST(Manifests, ProbesServiceAndMonitorReachThePortTheDaemonListensOn) {
  for (const Rendering& r : renderings()) {
    SCOPED_TRACE(r.name);
    const auto settings = settings_from(r.env);
    EXPECT_EQ(settings.host, "0.0.0.0") << "a pod must listen beyond loopback";
    for (const char* probe : {"readinessProbe", "livenessProbe"}) {
      YAML::Node port = r.container[probe]["httpGet"]["port"];
      ASSERT_TRUE(port) << probe;
      EXPECT_EQ(resolve_port(r.container, port), settings.port) << probe;
    }
    EXPECT_EQ(r.container["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
    EXPECT_EQ(r.container["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
    const YAML::Node service = one(r.objects, "Service");
    std::set<std::string> service_ports;
    for (const YAML::Node& p : service["spec"]["ports"]) {
      EXPECT_EQ(resolve_port(r.container, p["targetPort"]), settings.port);
      service_ports.insert(p["name"].as<std::string>());
    }
    for (const YAML::Node& monitor : of_kind(r.objects, "ServiceMonitor")) {
      EXPECT_TRUE(selects(monitor["spec"]["selector"], service["metadata"]["labels"]));
      for (const YAML::Node& endpoint : monitor["spec"]["endpoints"]) {
        EXPECT_TRUE(service_ports.contains(endpoint["port"].as<std::string>()));
        EXPECT_EQ(endpoint["path"].as<std::string>(), "/metrics");
      }
    }
  }
}

TEST(Manifests, SelectorsSelectThePodsAndEvictionsCanProceed) {
  for (const Rendering& r : renderings()) {
    SCOPED_TRACE(r.name);
    const YAML::Node labels = r.deployment["spec"]["template"]["metadata"]["labels"];
    EXPECT_TRUE(selects(r.deployment["spec"]["selector"], labels));
    EXPECT_TRUE(selects(one(r.objects, "Service")["spec"]["selector"], labels));
    EXPECT_TRUE(selects(one(r.objects, "NetworkPolicy")["spec"]["podSelector"], labels));
    const YAML::Node pdb = one(r.objects, "PodDisruptionBudget")["spec"];
    EXPECT_TRUE(selects(pdb["selector"], labels));
    // A budget that allows no eviction blocks every node drain.
    const YAML::Node replicas = r.deployment["spec"]["replicas"];
    int fewest = replicas ? replicas.as<int>() : 1;  // Kubernetes' default
    const bool autoscaled = !of_kind(r.objects, "HorizontalPodAutoscaler").empty() ||
                            !of_kind(r.objects, "ScaledObject").empty();
    EXPECT_EQ(bool(replicas), !autoscaled && r.name != "base")
        << "an autoscaled Deployment names no replica count (each apply would reset it); "
           "others name theirs";
    for (const YAML::Node& hpa : of_kind(r.objects, "HorizontalPodAutoscaler")) {
      fewest = hpa["spec"]["minReplicas"].as<int>();
      EXPECT_EQ(hpa["spec"]["scaleTargetRef"]["name"].as<std::string>(),
                r.deployment["metadata"]["name"].as<std::string>());
    }
    for (const YAML::Node& so : of_kind(r.objects, "ScaledObject")) {
      fewest = so["spec"]["minReplicaCount"].as<int>();
      EXPECT_EQ(so["spec"]["scaleTargetRef"]["name"].as<std::string>(),
                r.deployment["metadata"]["name"].as<std::string>());
    }
    if (pdb["maxUnavailable"]) {
      EXPECT_GE(pdb["maxUnavailable"].as<int>(), 1);
    }
    if (pdb["minAvailable"]) {
      EXPECT_LT(pdb["minAvailable"].as<int>(), fewest);
    }
    const auto strategy = r.deployment["spec"]["strategy"]["rollingUpdate"];
    EXPECT_EQ(strategy["maxUnavailable"].as<int>(), 0) << "a rollout keeps every replica serving";
    const YAML::Node account = one(r.objects, "ServiceAccount");
    EXPECT_EQ(r.pod["serviceAccountName"].as<std::string>(),
              account["metadata"]["name"].as<std::string>());
    EXPECT_FALSE(r.pod["automountServiceAccountToken"].as<bool>());
  }
}

TEST(Manifests, TerminationGraceExceedsTheShutdownDelayAndGrace) {
  for (const Rendering& r : renderings()) {
    const auto settings = settings_from(r.env);
    EXPECT_GT(r.pod["terminationGracePeriodSeconds"].as<double>(),
              seconds(settings.shutdown_delay) + seconds(settings.shutdown_grace))
        << r.name;
  }
}

TEST(Manifests, MemoryLimitCoversThreeTimesEveryRunAtItsLimit) {
  for (const Rendering& r : renderings()) {
    const auto settings = settings_from(r.env);
    const double limit = quantity_bytes(text(r.container["resources"]["limits"]["memory"]));
    const double needed = 3.0 * static_cast<double>(settings.workers) *
                          static_cast<double>(settings.executions_per_worker) *
                          static_cast<double>(settings.memory_limit);
    EXPECT_GE(limit, needed) << r.name;
  }
}

TEST(Manifests, NetworkPolicyAdmitsOnlyTheExecutorPortAndNoEgress) {
  for (const Rendering& r : renderings()) {
    SCOPED_TRACE(r.name);
    const auto settings = settings_from(r.env);
    const YAML::Node policy = one(r.objects, "NetworkPolicy")["spec"];
    std::set<std::string> types;
    for (const YAML::Node& t : policy["policyTypes"]) types.insert(t.as<std::string>());
    EXPECT_EQ(types, (std::set<std::string>{"Ingress", "Egress"}));
    ASSERT_EQ(policy["ingress"].size(), 1u);
    ASSERT_EQ(policy["ingress"][0]["ports"].size(), 1u);
    const YAML::Node port = policy["ingress"][0]["ports"][0];
    EXPECT_EQ(port["protocol"].as<std::string>(), "TCP");
    EXPECT_EQ(resolve_port(r.container, port["port"]), settings.port);
    EXPECT_TRUE(!policy["egress"] || policy["egress"].size() == 0) << "corral calls nothing out";
  }
}

TEST(Manifests, ImagesArePinnedAndPulledByAnExplicitPolicy) {
  const std::regex digest("^[^@:]+(:[0-9]+)?/[^@]+@sha256:[0-9a-f]{64}$");
  const std::regex tag("^[^@]+:[A-Za-z0-9_][A-Za-z0-9_.-]*$");
  for (const Rendering& r : renderings()) {
    SCOPED_TRACE(r.name);
    const std::string image = r.container["image"].as<std::string>();
    ASSERT_TRUE(r.container["imagePullPolicy"]) << "the policy is never left to the default";
    const std::string policy = r.container["imagePullPolicy"].as<std::string>();
    if (r.name.starts_with("overlays/prod")) {
      EXPECT_TRUE(std::regex_match(image, digest)) << image;
      EXPECT_EQ(policy, "IfNotPresent");
    } else if (r.name != "base") {
      EXPECT_TRUE(std::regex_match(image, tag)) << image;
      EXPECT_FALSE(image.ends_with(":latest")) << image;
      EXPECT_EQ(policy, "IfNotPresent");
    }
  }
}

// kustomize v2.0.3 can neither remove the HPA from overlays/prod nor read
// prod's patches from another folder, so prod-keda repeats them: held here.
TEST(Kustomize, ProdAndProdKedaDifferOnlyInTheirAutoscaler) {
  auto without_autoscaler = [](const Rendering& r) {
    std::string all;
    for (const YAML::Node& o : r.objects) {
      const std::string kind = o["kind"].as<std::string>();
      if (kind != "HorizontalPodAutoscaler" && kind != "ScaledObject") all += YAML::Dump(o) + "\n";
    }
    return all;
  };
  const Rendering& prod = rendering("overlays/prod");
  const Rendering& keda = rendering("overlays/prod-keda");
  EXPECT_EQ(without_autoscaler(prod), without_autoscaler(keda));
  const YAML::Node hpa = one(prod.objects, "HorizontalPodAutoscaler")["spec"];
  const YAML::Node so = one(keda.objects, "ScaledObject")["spec"];
  EXPECT_EQ(hpa["minReplicas"].as<int>(), so["minReplicaCount"].as<int>());
  EXPECT_EQ(hpa["maxReplicas"].as<int>(), so["maxReplicaCount"].as<int>());
  EXPECT_EQ(YAML::Dump(hpa["behavior"]),
            YAML::Dump(so["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]));
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
  // Builder and runtime from one base; the binaries from the builder unless
  // deploy/test-image.sh passes an image that holds them.
  const std::regex from("\nFROM ([^\n]+)");
  std::vector<std::string> stages;
  for (auto it = std::sregex_iterator(dockerfile.begin(), dockerfile.end(), from);
       it != std::sregex_iterator(); ++it)
    stages.push_back((*it)[1].str());
  EXPECT_EQ(stages, (std::vector<std::string>{"${BASE_IMAGE} AS builder", "${BINARIES} AS binaries",
                                              "${BASE_IMAGE}"}));
  EXPECT_NE(dockerfile.find("\nARG BASE_IMAGE=debian:bookworm-slim\n"), std::string::npos);
  EXPECT_NE(dockerfile.find("\nARG BINARIES=builder\n"), std::string::npos);
  EXPECT_NE(dockerfile.find("\nCOPY --from=binaries /out/ /\n"), std::string::npos);
  // tini is PID 1: it forwards SIGTERM (the drain) and reaps orphans.
  EXPECT_NE(dockerfile.find("ENTRYPOINT [\"/usr/bin/tini\", \"--\", \"corral\"]"),
            std::string::npos);
}

// The image's test builds the Dockerfile and runs the container as the
// base Deployment does: the same settings and the same hardening.
TEST(Manifests, TheImageTestRunsTheContainerAsThePodDoes) {
  const std::string script = read(kDeploy / "test-image.sh");
  const Rendering& d = rendering("base");
  for (const char* name :
       {"CORRAL_MAX_WORKERS", "CORRAL_EXECUTIONS_PER_WORKER", "CORRAL_MEMORY_LIMIT",
        "CORRAL_TIMEOUT", "CORRAL_SHUTDOWN_DELAY", "CORRAL_SHUTDOWN_GRACE"}) {
    ASSERT_TRUE(d.env.contains(name)) << name;
    EXPECT_NE(script.find(std::string("-e ") + name + "=" + d.env.at(name)), std::string::npos)
        << name << "=" << d.env.at(name) << " is not what test-image.sh runs with";
  }
  const YAML::Node security = d.container["securityContext"];
  ASSERT_TRUE(security["readOnlyRootFilesystem"].as<bool>());
  EXPECT_NE(script.find("--read-only --read-only-tmpfs=false\n"), std::string::npos);
  EXPECT_EQ(script.find("--tmpfs"), std::string::npos);
  EXPECT_EQ(security["capabilities"]["drop"][0].as<std::string>(), "ALL");
  EXPECT_NE(script.find("--cap-drop=ALL"), std::string::npos);
  EXPECT_FALSE(security["allowPrivilegeEscalation"].as<bool>());
  EXPECT_NE(script.find("--security-opt no-new-privileges"), std::string::npos);
  EXPECT_NE(
      script.find("--user " + std::to_string(d.pod["securityContext"]["runAsUser"].as<int>())),
      std::string::npos);
  EXPECT_EQ(d.pod["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault")
      << "test-image.sh runs podman's default seccomp profile, as RuntimeDefault is";
  // The container runs with nothing writable, so the pod needs no volume.
  EXPECT_FALSE(d.container["volumeMounts"]);
}

}  // namespace

namespace {

TEST(Docs, OperationsDocumentsEverySetting) {
  const std::string doc = read(kSource / "docs" / "operations.md");
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

// Every deploy/ path docs/operations.md names exists.
TEST(Docs, OperationsNamesOnlyDeployPathsThatExist) {
  const std::string doc = read(kSource / "docs" / "operations.md");
  const std::regex path("(^|[^/A-Za-z0-9_])(deploy/[A-Za-z0-9_./-]*[A-Za-z0-9_])");
  int named = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), path); it != std::sregex_iterator();
       ++it, ++named)
    EXPECT_TRUE(std::filesystem::exists(kSource / (*it)[2].str())) << (*it)[2].str();
  EXPECT_GT(named, 5);
}

}  // namespace
