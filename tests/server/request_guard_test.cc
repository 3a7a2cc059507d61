// The request guard (src/server/request_guard.hpp) against hostile Host and
// Origin values: one table, each row a value and the verdict on a loopback
// listener, then the rules that depend on the listener and the policy.
#include "server/request_guard.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace corral::server {
namespace {

using Scope = RequestGuard::Scope;

struct Row {
  std::vector<std::string> hosts;
  std::vector<std::string> origins;
  int status;  // 0: admitted
  const char* why;
};

GuardVerdict check(const RequestGuard& guard, const Row& row, bool http10 = false) {
  std::vector<std::string_view> hosts(row.hosts.begin(), row.hosts.end());
  std::vector<std::string_view> origins(row.origins.begin(), row.origins.end());
  return guard.check(hosts, origins, http10);
}

TEST(RequestGuard, HostileHostAndOriginValuesOnALoopbackListener) {
  const std::string long_name(300, 'a');
  const std::string long_labels = [] {
    std::string s;
    for (int i = 0; i < 40; ++i) s += "abcdef.";
    return s + "localhost";
  }();
  const std::string long_origin = "http://localhost/" + std::string(100'000, 'x');
  const RequestGuard guard({{"https://app.example"}, {}}, Scope::loopback);
  const std::vector<Row> table = {
      // Loopback names and addresses, exactly.
      {{"127.0.0.1"}, {}, 0, "loopback address"},
      {{"127.0.0.1:8080"}, {}, 0, "with a port"},
      {{"127.255.10.2:1"}, {}, 0, "anywhere in 127.0.0.0/8"},
      {{"localhost"}, {}, 0, "localhost"},
      {{"LOCALHOST:80"}, {}, 0, "names compare without case"},
      {{"localhost."}, {}, 0, "one trailing dot is the same name"},
      {{"[::1]"}, {}, 0, "IPv6 loopback"},
      {{"[::1]:80"}, {}, 0, "IPv6 loopback with a port"},
      {{"LOCALHOST."}, {}, 0, "a name compares without case, one trailing dot"},
      {{"[0:0:0:0:0:0:0:1]"}, {}, 0, "IPv6 loopback spelled in full"},
      {{"[::ffff:127.0.0.1]"}, {}, 403, "IPv4-mapped loopback is not loopback here"},
      {{"[0:0:0:0:0:0:0:1]"}, {}, 0, "IPv6 loopback written out"},
      {{"app.example"}, {}, 0, "the host of an allowed origin"},
      // Prefixes, suffixes and near misses.
      {{"127.0.0.1.attacker.example"}, {}, 403, "a name starting with 127."},
      {{"localhost.attacker.example"}, {}, 403, "a name starting with localhost"},
      {{"attacker.localhost"}, {}, 403, "a subdomain of localhost"},
      {{"app.example.attacker.example"}, {}, 403, "an allowed host as a prefix"},
      {{"evil.example:80"}, {}, 403, "a foreign name"},
      {{"10.0.0.1"}, {}, 403, "a non-loopback address on a loopback listener"},
      {{"[::ffff:127.0.0.1]"}, {}, 403, "IPv4-mapped IPv6 is not in the loopback set"},
      {{"[::2]"}, {}, 403, "another IPv6 address"},
      // Malformed: 400.
      {{"127.1"}, {}, 400, "short IPv4 form"},
      {{"0x7f.1"}, {}, 400, "hexadecimal IPv4 form"},
      {{"0x7f000001"}, {}, 400, "one hexadecimal number"},
      {{"2130706433"}, {}, 400, "one decimal number"},
      {{"127.0.0.01"}, {}, 400, "a leading zero"},
      {{"127.0.0.256"}, {}, 400, "an octet past 255"},
      {{"127.0.0.1."}, {}, 400, "an address with a trailing dot"},
      {{"localhost.."}, {}, 400, "an empty label"},
      {{".localhost"}, {}, 400, "a leading dot"},
      {{""}, {}, 400, "empty"},
      {{}, {}, 400, "absent on HTTP/1.1"},
      {{"127.0.0.1", "127.0.0.1"}, {}, 400, "two Host headers"},
      {{"a@127.0.0.1"}, {}, 400, "userinfo"},
      {{"127.0.0.1:"}, {}, 400, "an empty port"},
      {{"127.0.0.1:65536"}, {}, 400, "a port past 65535"},
      {{"127.0.0.1:80:80"}, {}, 400, "two ports"},
      {{"127.0.0.1:+80"}, {}, 400, "a signed port"},
      {{"[::1"}, {}, 400, "an unclosed bracket"},
      {{"[::1]x"}, {}, 400, "junk after the bracket"},
      {{"::1"}, {}, 400, "IPv6 without brackets"},
      {{"[fe80::1%25eth0]"}, {}, 400, "an IPv6 zone"},
      {{"[v1.x]"}, {}, 400, "IPvFuture"},
      {{" localhost"}, {}, 400, "a space"},
      {{"local\thost"}, {}, 400, "a control character"},
      {{"localhost/x"}, {}, 400, "a path"},
      {{"l\xc3\xb6"
        "calhost"},
       {},
       400,
       "non-ASCII bytes"},
      {{"localhost\xff"}, {}, 400, "invalid UTF-8"},
      {{"local%68ost"}, {}, 400, "percent-encoding"},
      {{long_name}, {}, 400, "a name past 253 characters"},
      {{std::string(64, 'a') + ".localhost"}, {}, 400, "a label past 63 characters"},
      {{long_labels}, {}, 400, "many labels past 253 characters"},
      // Origins: absent passes; present must be allowed.
      {{"localhost"}, {"http://localhost:3000"}, 0, "a loopback origin"},
      {{"localhost"}, {"https://127.0.0.1"}, 0, "a loopback https origin"},
      {{"localhost"}, {"http://[::1]:5173"}, 0, "an IPv6 loopback origin"},
      {{"localhost"}, {"https://app.example"}, 0, "the allowed origin"},
      {{"localhost"}, {"HTTPS://APP.EXAMPLE"}, 0, "scheme and host compare without case"},
      {{"localhost"}, {"https://app.example:443"}, 0, "the default port folded in"},
      {{"localhost"}, {"https://app.example."}, 0, "a trailing dot is the same host"},
      {{"localhost"}, {"https://app.example:8443"}, 403, "a port mismatch"},
      {{"localhost"}, {"http://app.example"}, 403, "a scheme mismatch"},
      {{"localhost"}, {"https://app.example/"}, 403, "an origin with a path"},
      {{"localhost"}, {"https://app.example/x?y"}, 403, "an origin with a path and query"},
      {{"localhost"}, {"https://u@app.example"}, 403, "an origin with userinfo"},
      {{"localhost"}, {"null"}, 403, "the null origin"},
      {{"localhost"}, {"http://evil.example"}, 403, "a foreign origin"},
      {{"localhost"}, {"http://127.0.0.1.attacker.example"}, 403, "a 127. prefix origin"},
      {{"localhost"}, {"http://127.1"}, 403, "a short IPv4 origin"},
      {{"localhost"}, {"file://localhost"}, 403, "a file origin on a loopback host"},
      {{"localhost"}, {""}, 403, "an empty Origin"},
      {{"localhost"}, {"http://localhost", "http://localhost"}, 403, "two Origin headers"},
      {{"localhost"}, {long_origin}, 403, "a very long origin"},
      {{"localhost"},
       {"http://l\xc3\xb6"
        "calhost"},
       403,
       "a non-ASCII origin"},
      {{"localhost"}, {"https://app.example\r\nX: y"}, 403, "an injected line"},
  };
  for (const Row& row : table) {
    const GuardVerdict verdict = check(guard, row);
    EXPECT_EQ(verdict.status, row.status) << row.why << ": " << verdict.reason;
    if (row.status == 0) continue;
    // The body is JSON, says which header, and never echoes raw bytes.
    const std::string body = verdict.body();
    EXPECT_EQ(body.rfind(R"({"error":")", 0), 0u) << row.why;
    EXPECT_NE(body.find(row.origins.empty() ? "Host" : "Origin"), std::string::npos)
        << row.why << ": " << body;
    EXPECT_LE(body.size(), 200u) << row.why;
    for (char c : body) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << row.why;
  }
}

TEST(RequestGuard, AnAllowedOriginIsHandedBackForCors) {
  const RequestGuard guard({{"https://app.example"}, {}}, Scope::loopback);
  EXPECT_EQ(check(guard, {{"localhost"}, {"https://app.example"}, 0, ""}).origin,
            "https://app.example");
  EXPECT_EQ(check(guard, {{"localhost"}, {}, 0, ""}).origin, "");
}

TEST(RequestGuard, HttpTenMayOmitTheHost) {
  const RequestGuard guard({}, Scope::loopback);
  EXPECT_TRUE(check(guard, {{}, {}, 0, ""}, true).allowed());
  EXPECT_EQ(check(guard, {{}, {}, 0, ""}, false).status, 400);
}

TEST(RequestGuard, NetworkListenersTakeAddressesAndTheConfiguredNames) {
  // No allowed hosts: a network listener takes any well-formed Host (its
  // names are the operator's: a Service name, a pod address).
  const RequestGuard open({}, Scope::wildcard);
  EXPECT_TRUE(check(open, {{"corral.default.svc:8080"}, {}, 0, ""}).allowed());
  EXPECT_TRUE(check(open, {{"localhost"}, {}, 0, ""}).allowed());
  EXPECT_EQ(check(open, {{"127.1"}, {}, 0, ""}).status, 400);
  EXPECT_EQ(check(open, {{"corral"}, {"http://evil.example"}, 0, ""}).status, 403);

  // Allowed hosts configured: names must be in the list; addresses pass.
  const RequestGuard named({{}, {"corral.example", "api.example:9000"}}, Scope::network);
  EXPECT_TRUE(check(named, {{"corral.example:8080"}, {}, 0, ""}).allowed());
  EXPECT_TRUE(check(named, {{"CORRAL.example."}, {}, 0, ""}).allowed());
  EXPECT_TRUE(check(named, {{"api.example:9000"}, {}, 0, ""}).allowed());
  EXPECT_EQ(check(named, {{"api.example:9001"}, {}, 0, ""}).status, 403);
  EXPECT_EQ(check(named, {{"api.example"}, {}, 0, ""}).status, 403);
  EXPECT_EQ(check(named, {{"rebound.attacker.example"}, {}, 0, ""}).status, 403);
  EXPECT_TRUE(check(named, {{"10.1.2.3:8080"}, {}, 0, ""}).allowed());
  EXPECT_TRUE(check(named, {{"[2001:db8::1]:8080"}, {}, 0, ""}).allowed());
  // Not reachable over loopback: loopback hosts are names like any other,
  // and loopback origins are not allowed.
  EXPECT_EQ(check(named, {{"localhost"}, {}, 0, ""}).status, 403);
  EXPECT_EQ(check(named, {{"10.1.2.3"}, {"http://localhost:3000"}, 0, ""}).status, 403);

  // "*" allows every host and every origin.
  const RequestGuard any({{"*"}, {"*"}}, Scope::loopback);
  EXPECT_TRUE(check(any, {{"anything.example"}, {"http://evil.example"}, 0, ""}).allowed());
  EXPECT_EQ(check(any, {{"127.1"}, {}, 0, ""}).status, 400);  // still parsed
}

TEST(RequestGuard, UnixSocketsTakeAnyWellFormedHost) {
  const RequestGuard guard({}, RequestGuard::scope_of(""));
  EXPECT_EQ(guard.scope(), Scope::local_socket);
  EXPECT_TRUE(check(guard, {{"whatever.example"}, {}, 0, ""}).allowed());
  EXPECT_EQ(check(guard, {{"a@b"}, {}, 0, ""}).status, 400);
  EXPECT_EQ(check(guard, {{"localhost"}, {"http://evil.example"}, 0, ""}).status, 403);
}

TEST(RequestGuard, ScopesOfBoundAddresses) {
  EXPECT_EQ(RequestGuard::scope_of("127.0.0.1"), Scope::loopback);
  EXPECT_EQ(RequestGuard::scope_of("127.3.4.5"), Scope::loopback);
  EXPECT_EQ(RequestGuard::scope_of("::1"), Scope::loopback);
  EXPECT_EQ(RequestGuard::scope_of("[::1]"), Scope::loopback);
  EXPECT_EQ(RequestGuard::scope_of("::ffff:127.0.0.1"), Scope::loopback);
  EXPECT_EQ(RequestGuard::scope_of("0.0.0.0"), Scope::wildcard);
  EXPECT_EQ(RequestGuard::scope_of("::"), Scope::wildcard);
  EXPECT_EQ(RequestGuard::scope_of("10.0.0.5"), Scope::network);
  EXPECT_EQ(RequestGuard::scope_of("2001:db8::1"), Scope::network);
  EXPECT_EQ(RequestGuard::scope_of(""), Scope::local_socket);
}

TEST(RequestGuard, MalformedPolicyEntriesAreRefusedUpFront) {
  EXPECT_THROW(validate({{"https://app.example/"}, {}}), std::invalid_argument);
  EXPECT_THROW(validate({{"app.example"}, {}}), std::invalid_argument);
  EXPECT_THROW(validate({{"null"}, {}}), std::invalid_argument);
  EXPECT_THROW(validate({{}, {"a@b.example"}}), std::invalid_argument);
  EXPECT_THROW(validate({{}, {"127.1"}}), std::invalid_argument);
  EXPECT_THROW(RequestGuard({{"nope"}, {}}, Scope::loopback), std::invalid_argument);
  EXPECT_NO_THROW(validate({{"*", "https://app.example:8443", "chrome-extension://abc"},
                            {"*", "corral.example", "[::1]:80"}}));
}

}  // namespace
}  // namespace corral::server
