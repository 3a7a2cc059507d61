// tests/deploy/monitoring_test.cc: corral's rules, autoscaling queries and
// monitoring objects held to the daemon. promtool unit-tests every alert
// (deploy/prometheus/rules_test.yml) and evaluates the prometheus-adapter
// and KEDA queries on known series; then a real `corral serve` with the
// prod overlay's environment is scraped by a real Prometheus loading the
// rules, and the queries docs/operations.md shows are run against it.
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "client/admin.hpp"
#include "deploy/deploy_test_util.hpp"
#include "gtest/gtest.h"

namespace {

using namespace corral::deploy::testing;
using namespace std::chrono_literals;

const std::filesystem::path kRule = kKubernetes / "monitoring" / "prometheusrule.yaml";
const std::filesystem::path kAdapterRules = kDeploy / "prometheus" / "adapter-rules.yaml";
// The command docs/operations.md gives for a plain Prometheus's rules file.
const std::string kExtract =
    "sed '1,/^spec:$/d; s/^  //' deploy/kubernetes/monitoring/prometheusrule.yaml > "
    "corral-rules.yml";
// The Prometheus address in the documented queries.
const std::string kDocPrometheus = "http://prometheus:9090";

// Every metric family the manifests, the rules, the adapter and KEDA read;
// the daemon must export each.
const std::set<std::string> kExpectedFamilies = {
    "corral_execution_slots", "corral_queue_capacity",        "corral_executions_running",
    "corral_queue_depth",     "corral_pool_rejections_total", "corral_worker_exits_total",
    "corral_command_slots",
};

// A fresh directory under the test's temporary folder.
std::filesystem::path temp_dir() {
  std::string pattern = ::testing::TempDir() + "/corral-deploy-XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// YAML with every mapping's keys sorted: two documents that mean the same
// compare equal however kustomize ordered or folded them.
std::string canonical(const YAML::Node& node) {
  if (node.IsMap()) {
    std::map<std::string, std::string> sorted;
    for (const auto& kv : node) sorted[kv.first.as<std::string>()] = canonical(kv.second);
    std::string out = "{";
    for (const auto& [k, v] : sorted) out += k + ": " + v + ", ";
    return out + "}";
  }
  if (node.IsSequence()) {
    std::string out = "[";
    for (const auto& item : node) out += canonical(item) + ", ";
    return out + "]";
  }
  return node.IsScalar() ? "'" + node.as<std::string>() + "'" : "~";
}

// The rules file a plain Prometheus gets, made by the documented command.
std::filesystem::path extract_rules(const std::filesystem::path& dir) {
  const std::string command =
      kExtract.substr(0, kExtract.rfind('>')) + "> " + quoted((dir / "corral-rules.yml").string());
  const CommandResult r = run("cd " + quoted(kSource.string()) + " && " + command);
  EXPECT_EQ(r.status, 0) << r.output;
  return dir / "corral-rules.yml";
}

// Metric names (no recording rules, whose names hold colons) in PromQL `expr`.
std::set<std::string> metric_names(const std::string& expr) {
  std::set<std::string> names;
  const std::regex word("[a-zA-Z_:][a-zA-Z0-9_:]*");
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), word); it != std::sregex_iterator();
       ++it)
    if (it->str().starts_with("corral_") && it->str().find(':') == std::string::npos)
      names.insert(it->str());
  return names;
}

// The adapter's metricsQuery as it asks about `pods` of namespace `ns`.
std::string adapter_query(const std::string& ns, const std::string& pods) {
  std::string q =
      YAML::LoadFile(kAdapterRules.string())["rules"][0]["metricsQuery"].as<std::string>();
  q = std::regex_replace(q, std::regex("<<\\.GroupBy>>"), "pod");
  return std::regex_replace(q, std::regex("<<\\.LabelMatchers>>"),
                            "namespace=\"" + ns + "\",pod=~\"" + pods + "\"");
}

YAML::Node keda_trigger() {
  for (const YAML::Node& o : render(kKubernetes / "overlays" / "prod-keda"))
    if (o["kind"].as<std::string>() == "ScaledObject")
      for (const YAML::Node& t : o["spec"]["triggers"])
        if (t["type"].as<std::string>() == "prometheus") return t;
  ADD_FAILURE() << "overlays/prod-keda has no prometheus trigger";
  return YAML::Node(YAML::NodeType::Null);
}

TEST(Rules, TheDocumentedRulesFileIsThePrometheusRulesSpec) {
  const std::string doc = read(kSource / "docs" / "operations.md");
  ASSERT_NE(doc.find(kExtract), std::string::npos) << "docs/operations.md shows: " << kExtract;
  const YAML::Node spec = YAML::LoadFile(kRule.string())["spec"];
  ASSERT_TRUE(spec["groups"]);
  const std::filesystem::path dir = temp_dir();
  EXPECT_EQ(canonical(YAML::LoadFile(extract_rules(dir).string())), canonical(spec));
  // The overlay that ships it ships it unchanged.
  bool shipped = false;
  for (const YAML::Node& o : render(kKubernetes / "overlays" / "prod"))
    if (o["kind"].as<std::string>() == "PrometheusRule") {
      EXPECT_EQ(canonical(o["spec"]), canonical(spec));
      shipped = true;
    }
  EXPECT_TRUE(shipped);
  std::filesystem::remove_all(dir);
}

TEST(Rules, PromtoolAcceptsThemAndEveryAlertFiresAndStaysQuietInItsUnitTests) {
  const std::filesystem::path dir = temp_dir();
  extract_rules(dir);
  std::filesystem::copy_file(kDeploy / "prometheus" / "rules_test.yml", dir / "rules_test.yml");
  const CommandResult check =
      run("cd " + quoted(dir.string()) + " && promtool check rules corral-rules.yml");
  EXPECT_EQ(check.status, 0) << check.output;
  const CommandResult test =
      run("cd " + quoted(dir.string()) + " && promtool test rules rules_test.yml");
  EXPECT_EQ(test.status, 0) << test.output;

  // Each alert has a case where it fires and one where it must not; each
  // recording rule is evaluated.
  std::map<std::string, std::pair<bool, bool>> alerts;  // fires, stays quiet
  std::set<std::string> records, tested_exprs;
  for (const YAML::Node& group : YAML::LoadFile((dir / "corral-rules.yml").string())["groups"])
    for (const YAML::Node& rule : group["rules"]) {
      if (rule["alert"]) alerts[rule["alert"].as<std::string>()] = {false, false};
      if (rule["record"]) records.insert(rule["record"].as<std::string>());
    }
  for (const YAML::Node& t : YAML::LoadFile((dir / "rules_test.yml").string())["tests"]) {
    for (const YAML::Node& a : t["alert_rule_test"]) {
      auto& [fires, quiet] = alerts[a["alertname"].as<std::string>()];
      (a["exp_alerts"].size() > 0 ? fires : quiet) = true;
    }
    for (const YAML::Node& e : t["promql_expr_test"])
      tested_exprs.insert(e["expr"].as<std::string>());
  }
  EXPECT_GE(alerts.size(), 5u);
  for (const auto& [name, cases] : alerts) {
    EXPECT_TRUE(cases.first) << name << " never fires in rules_test.yml";
    EXPECT_TRUE(cases.second) << name << " is never shown quiet in rules_test.yml";
  }
  for (const std::string& record : records)
    EXPECT_TRUE(tested_exprs.contains(record)) << record << " is not evaluated in rules_test.yml";
  std::filesystem::remove_all(dir);
}

// The HPA asks for the adapter's metric; the adapter and KEDA compute the
// busy ratio from the same series, per pod and per Deployment.
TEST(Autoscaling, AdapterAndKedaQueriesComputeTheBusyRatio) {
  const YAML::Node adapter = YAML::LoadFile(kAdapterRules.string())["rules"][0];
  std::set<std::string> hpa_metrics;
  for (const YAML::Node& o : render(kKubernetes / "overlays" / "prod"))
    if (o["kind"].as<std::string>() == "HorizontalPodAutoscaler")
      for (const YAML::Node& m : o["spec"]["metrics"]) {
        if (m["type"].as<std::string>() == "Pods") {
          hpa_metrics.insert(m["pods"]["metric"]["name"].as<std::string>());
          EXPECT_EQ(m["pods"]["target"]["averageValue"].as<std::string>(), "700m");
        } else {
          EXPECT_EQ(m["resource"]["name"].as<std::string>(), "cpu");
        }
      }
  EXPECT_EQ(hpa_metrics, std::set<std::string>{adapter["name"]["as"].as<std::string>()});
  const YAML::Node trigger = keda_trigger();
  ASSERT_TRUE(trigger);
  EXPECT_EQ(trigger["metricType"].as<std::string>(), "Value");
  EXPECT_EQ(trigger["metadata"]["threshold"].as<std::string>(), "0.7");
  const std::string keda = trigger["metadata"]["query"].as<std::string>();
  EXPECT_NE(keda.find("namespace=\"corral\""), std::string::npos)
      << "the query must name the namespace overlays/prod-keda deploys to";

  // Pods a and b are this Deployment's; c is another namespace's and d
  // another job's: neither may count.
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "evaluation_interval" << YAML::Value << "1m";
  out << YAML::Key << "tests" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "interval" << YAML::Value << "1m";
  out << YAML::Key << "input_series" << YAML::Value << YAML::BeginSeq;
  const std::map<std::string, int> values = {{"a", 0}, {"b", 1}, {"c", 2}, {"d", 3}};
  const int running[] = {2, 1, 9, 9}, queued[] = {3, 0, 9, 9}, slots[] = {2, 2, 1, 1};
  for (const auto& [pod, i] : values) {
    const std::string labels = std::string("{job=\"") + (pod == "d" ? "other" : "corral") +
                               "\",namespace=\"" + (pod == "c" ? "elsewhere" : "corral") +
                               "\",pod=\"" + pod + "\"}";
    for (const auto& [name, v] :
         std::map<std::string, int>{{"corral_executions_running", running[i]},
                                    {"corral_queue_depth", queued[i]},
                                    {"corral_execution_slots", slots[i]}})
      out << YAML::BeginMap << YAML::Key << "series" << YAML::Value << name + labels << YAML::Key
          << "values" << YAML::Value << std::to_string(v) + "x5" << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::Key << "promql_expr_test" << YAML::Value << YAML::BeginSeq;
  auto expect = [&](const std::string& expr, const std::map<std::string, double>& samples) {
    out << YAML::BeginMap << YAML::Key << "expr" << YAML::Value << expr << YAML::Key << "eval_time"
        << YAML::Value << "2m" << YAML::Key << "exp_samples" << YAML::Value << YAML::BeginSeq;
    for (const auto& [labels, value] : samples)
      out << YAML::BeginMap << YAML::Key << "labels" << YAML::Value << labels << YAML::Key
          << "value" << YAML::Value << value << YAML::EndMap;
    out << YAML::EndSeq << YAML::EndMap;
  };
  // (2 + 3) / 2 and (1 + 0) / 2 per pod; (2 + 3 + 1 + 0) / (2 + 2) in all.
  expect(adapter_query("corral", "a|b|c|d"), {{"{pod=\"a\"}", 2.5}, {"{pod=\"b\"}", 0.5}});
  expect(keda, {{"{}", 1.5}});
  out << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  ASSERT_TRUE(out.good()) << out.GetLastError();

  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "queries_test.yml") << out.c_str() << "\n";
  const CommandResult r = run("promtool test rules " + quoted((dir / "queries_test.yml").string()));
  EXPECT_EQ(r.status, 0) << r.output << "\n" << out.c_str();
  std::filesystem::remove_all(dir);
}

// A real daemon with the prod overlay's environment, and a real Prometheus
// scraping it with the labels a ServiceMonitor gives and the rules loaded.
class LiveDeployment : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(temp_dir());
    for (const YAML::Node& o : render(kKubernetes / "overlays" / "prod"))
      if (o["kind"].as<std::string>() == "Deployment") {
        pod_ = new YAML::Node(o["spec"]["template"]);
        env_ = new std::map<std::string, std::string>(env_of((*pod_)["spec"]["containers"][0]));
      }
    ASSERT_NE(env_, nullptr);
    std::vector<std::string> env;
    for (const auto& [name, value] : *env_)
      if (name != "CORRAL_HOST" && name != "CORRAL_PORT") env.push_back(name + "=" + value);
    // A bound command, so that corral_command_slots is exported too.
    daemon_ =
        new Child({CORRAL_BINARY, "serve", "--port", "0", "--admin-port", "0", "--mcp-manifest",
                   (kSource / "tests/mcp/fixtures/mcp_tools.yaml").string()},
                  env, *dir_ / "corral.log");
    const auto line =
        daemon_->wait_for_line(std::regex("executor on ws://127\\.0\\.0\\.1:([0-9]+)/"), 60s);
    ASSERT_EQ(line.size(), 2u) << daemon_->log();
    port_ = static_cast<std::uint16_t>(std::stoi(line[1]));

    extract_rules(*dir_);
    prometheus_port_ = free_port();
    std::ofstream(*dir_ / "prometheus.yml")
        << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        << "rule_files: [corral-rules.yml]\n"
        << "scrape_configs:\n"
        << "  - job_name: corral\n"
        << "    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << port_ << "']\n"
        << "        labels: {namespace: corral, pod: corral-0}\n";
    prometheus_ =
        new Child({"/usr/bin/prometheus", "--config.file=" + (*dir_ / "prometheus.yml").string(),
                   "--storage.tsdb.path=" + (*dir_ / "data").string(),
                   "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port_)},
                  {}, *dir_ / "prometheus.log");
  }
  static void TearDownTestSuite() {
    delete prometheus_;
    delete daemon_;
    delete pod_;
    delete env_;
    if (dir_) std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static corral::client::AdminResponse get(const std::string& path) {
    return corral::client::admin_request("127.0.0.1", port_, "GET", path);
  }
  static std::string prometheus_url() {
    return "http://127.0.0.1:" + std::to_string(prometheus_port_);
  }
  // `promtool query instant` until it prints a sample (or `bound`).
  static CommandResult query_until_sample(const std::string& expr, std::chrono::seconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    CommandResult r;
    do {
      r = run("promtool query instant " + prometheus_url() + " " + quoted(expr));
      if (r.status == 0 && r.output.find(" => ") != std::string::npos) return r;
      std::this_thread::sleep_for(250ms);  // Prometheus pushes nothing: poll its API
    } while (std::chrono::steady_clock::now() < deadline);
    return r;
  }

  static inline std::filesystem::path* dir_ = nullptr;
  static inline YAML::Node* pod_ = nullptr;
  static inline std::map<std::string, std::string>* env_ = nullptr;
  static inline Child* daemon_ = nullptr;
  static inline Child* prometheus_ = nullptr;
  static inline std::uint16_t port_ = 0, prometheus_port_ = 0;
};

TEST_F(LiveDeployment, AnswersEveryPathTheManifestsAndTheImagePoll) {
  ASSERT_NE(port_, 0);
  const YAML::Node container = (*pod_)["spec"]["containers"][0];
  std::set<std::string> paths = {
      container["readinessProbe"]["httpGet"]["path"].as<std::string>(),
      container["livenessProbe"]["httpGet"]["path"].as<std::string>(),
      (*pod_)["metadata"]["annotations"]["prometheus.io/path"].as<std::string>(),
  };
  for (const YAML::Node& o : render(kKubernetes / "overlays" / "prod"))
    if (o["kind"].as<std::string>() == "ServiceMonitor")
      for (const YAML::Node& e : o["spec"]["endpoints"]) paths.insert(e["path"].as<std::string>());
  EXPECT_EQ(paths, (std::set<std::string>{"/healthz", "/readyz", "/metrics"}));
  const std::string dockerfile = read(kDeploy / "Dockerfile");
  std::smatch healthcheck;
  ASSERT_TRUE(std::regex_search(dockerfile, healthcheck, std::regex("CORRAL_PORT\\}(/[a-z]+)")));
  paths.insert(healthcheck[1]);
  for (const std::string& path : paths) EXPECT_EQ(get(path).status, 200) << path;
}

TEST_F(LiveDeployment, ExportsEveryMetricTheRulesTheAdapterAndKedaRead) {
  ASSERT_NE(port_, 0);
  const auto metrics = get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  std::set<std::string> exported;
  const std::regex type_line("(^|\n)# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) ");
  for (auto it = std::sregex_iterator(metrics.body.begin(), metrics.body.end(), type_line);
       it != std::sregex_iterator(); ++it)
    exported.insert((*it)[2].str());

  std::set<std::string> used;
  for (const YAML::Node& group : YAML::LoadFile(kRule.string())["spec"]["groups"])
    for (const YAML::Node& rule : group["rules"])
      used.merge(metric_names(rule["expr"].as<std::string>()));
  const YAML::Node adapter = YAML::LoadFile(kAdapterRules.string())["rules"][0];
  used.merge(metric_names(adapter["seriesQuery"].as<std::string>()));
  used.merge(metric_names(adapter["metricsQuery"].as<std::string>()));
  used.merge(metric_names(keda_trigger()["metadata"]["query"].as<std::string>()));
  EXPECT_EQ(used, kExpectedFamilies) << "keep kExpectedFamilies the list the manifests read";
  for (const std::string& name : kExpectedFamilies)
    EXPECT_TRUE(exported.contains(name)) << name << " is not in /metrics";

  // The label values the alerts select are among those exported.
  for (const char* series : {"corral_pool_rejections_total{reason=\"queue_overflow\"}",
                             "corral_worker_exits_total{reason=\"crashed\"}",
                             "corral_worker_exits_total{reason=\"start_failed\"}",
                             "corral_command_slots{binding=\"fixture\",state=\"cleanup_failed\"}"})
    EXPECT_NE(metrics.body.find(std::string("\n") + series + " "), std::string::npos) << series;
  // The ratio's denominators are the overlay's settings.
  const auto settings = settings_from(*env_);
  EXPECT_NE(
      metrics.body.find("\ncorral_execution_slots " +
                        std::to_string(settings.workers * settings.executions_per_worker) + "\n"),
      std::string::npos);
  EXPECT_NE(
      metrics.body.find("\ncorral_queue_capacity " + std::to_string(settings.max_queue) + "\n"),
      std::string::npos);

  // The documented `curl .../metrics | grep -E '...'` finds one line each.
  const std::string doc = read(kSource / "docs" / "operations.md");
  std::smatch grep;
  ASSERT_TRUE(std::regex_search(doc, grep, std::regex("/metrics \\| grep -E '([^']+)'")));
  std::ofstream(*dir_ / "metrics.txt") << metrics.body;
  const CommandResult lines =
      run("grep -E " + quoted(grep[1]) + " " + quoted((*dir_ / "metrics.txt").string()));
  EXPECT_EQ(std::count(lines.output.begin(), lines.output.end(), '\n'), 4) << lines.output;
}

TEST_F(LiveDeployment, PrometheusEvaluatesTheRulesAndTheDocumentedQueries) {
  ASSERT_NE(port_, 0);
  // The recording rules and the autoscalers' queries give a sample on a
  // real scrape: their label matching joins the daemon's real series.
  const CommandResult busy = query_until_sample("namespace:corral_busy:ratio", 90s);
  ASSERT_NE(busy.output.find("namespace:corral_busy:ratio{namespace=\"corral\"} => 0 @"),
            std::string::npos)
      << busy.output << prometheus_->log();
  // Bounds as wide as the first: on a loaded machine (ctest -j) a scrape can
  // miss and leave a gap before the next.
  const CommandResult adapter = query_until_sample(adapter_query("corral", "corral-0"), 60s);
  EXPECT_NE(adapter.output.find("{pod=\"corral-0\"} => 0 @"), std::string::npos) << adapter.output;
  const CommandResult keda =
      query_until_sample(keda_trigger()["metadata"]["query"].as<std::string>(), 60s);
  EXPECT_NE(keda.output.find("{} => 0 @"), std::string::npos) << keda.output << prometheus_->log();

  // Each `promtool query instant` docs/operations.md shows: key numbers
  // answer with a sample; on this healthy daemon no corral alert is active.
  const std::string doc = read(kSource / "docs" / "operations.md");
  const std::regex shown("promtool query instant " + kDocPrometheus + " '([^'\n]+)'");
  int queries = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), shown); it != std::sregex_iterator();
       ++it, ++queries) {
    const std::string expr = (*it)[1].str();
    if (expr.starts_with("ALERTS")) {
      const CommandResult r =
          run("promtool query instant " + prometheus_url() + " " + quoted(expr));
      EXPECT_EQ(r.status, 0) << expr << ": " << r.output;
      // Nothing even pending, but for one cause outside the daemon: on a
      // loaded machine a scrape can miss its 1 s timeout, and `up` is 0
      // until the next (CorralNoReplicaUp pending, never firing in 2 min).
      std::istringstream lines(r.output);
      for (std::string line; std::getline(lines, line);) {
        if (line.find(" => ") == std::string::npos) continue;
        EXPECT_TRUE(line.find("alertname=\"CorralNoReplicaUp\"") != std::string::npos &&
                    line.find("alertstate=\"pending\"") != std::string::npos)
            << expr << ": " << r.output;
      }
    } else {
      EXPECT_NE(query_until_sample(expr, 60s).output.find(" => "), std::string::npos) << expr;
    }
  }
  EXPECT_GE(queries, 3);
}

}  // namespace
