// fuzz/request_guard_fuzzer.cc: the request guard's Host and Origin parsers
// (server::parse_authority, parse_origin) and its verdict
// (RequestGuard::check) on hostile header values and policies.
//
// Input: byte 0 picks the listener's scope (bits 0-1: loopback, wildcard,
// network, unix socket) and HTTP/1.0 (bit 2). The rest is parsed whole as a
// Host and as an Origin value (so NUL, CR and LF reach both parsers), and
// read as lines: "H<value>" a Host field, "O<value>" an Origin field,
// "A<origin>" an allowed origin, "B<host>" an allowed host.
//
// Invariants: an accepted Host holds only the characters of a reg-name, an
// IPv4 address, a bracketed IPv6 address and a port (so no NUL, CR, LF,
// space, '@' or '/'); it is loopback exactly when it is "localhost",
// 127.0.0.0/8 or ::1 (checked with inet_pton); a name is never something
// inet_aton reads as an address ("127.1", "0x7f.1"); what was accepted
// re-parses to the same authority. An accepted Origin re-parses from its
// key() to the same key and has no path, query, fragment or userinfo. A
// verdict is 0, 400 or 403; an admitted request on a loopback-only listener
// named a loopback host or an allowed one; a refusal's body is short,
// valid UTF-8 JSON; the guard's constructor refuses only with
// std::invalid_argument.
#include <arpa/inet.h>

#include <boost/json.hpp>
#include <cstring>
#include <stdexcept>

#include "fuzz_util.hpp"
#include "server/request_guard.hpp"

namespace server = corral::server;
using corral::fuzz::fail;

namespace {

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == ':' || c == '[' || c == ']';
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Whether `authority` is loopback, decided without the guard's code.
bool oracle_loopback(const server::Authority& authority) {
  switch (authority.kind) {
    case server::Authority::Kind::name:
      return authority.host == "localhost";
    case server::Authority::Kind::ipv4: {
      in_addr v4{};
      if (::inet_pton(AF_INET, authority.host.c_str(), &v4) != 1)
        fail("an IPv4 host inet_pton does not read", authority.host);
      return (ntohl(v4.s_addr) >> 24) == 127;
    }
    case server::Authority::Kind::ipv6: {
      const std::string& host = authority.host;
      if (host.size() < 2 || host.front() != '[' || host.back() != ']')
        fail("an IPv6 host without brackets", host);
      const std::string inner = host.substr(1, host.size() - 2);
      in6_addr v6{};
      if (::inet_pton(AF_INET6, inner.c_str(), &v6) != 1)
        fail("an IPv6 host inet_pton does not read", host);
      return IN6_IS_ADDR_LOOPBACK(&v6);
    }
  }
  return false;
}

std::string authority_text(const server::Authority& authority) {
  std::string text = authority.host;
  if (authority.port) {
    text += ':';
    text += std::to_string(*authority.port);
  }
  return text;
}

void check_authority(std::string_view text) {
  const auto parsed = server::parse_authority(text);
  if (!parsed) return;
  for (char c : text)
    if (!host_char(c)) fail("a Host with a character no authority has was accepted", text);
  if (parsed->loopback != oracle_loopback(*parsed))
    fail("a Host's loopback flag disagrees with inet_pton / \"localhost\"", text);
  if (parsed->host != lower(parsed->host)) fail("a Host kept upper case", text);
  if (parsed->kind == server::Authority::Kind::name) {
    in_addr v4{};
    if (::inet_aton(parsed->host.c_str(), &v4) != 0)
      fail("a name inet_aton reads as an address was accepted", text);
    if (parsed->host.empty() || parsed->host.back() == '.')
      fail("a name kept its trailing dot (or is empty)", text);
  }
  const std::string again_text = authority_text(*parsed);
  const auto again = server::parse_authority(again_text);
  if (!again || again->kind != parsed->kind || again->host != parsed->host ||
      again->port != parsed->port || again->loopback != parsed->loopback)
    fail("an accepted Host does not re-parse the same", again_text);
}

void check_origin(std::string_view text) {
  const auto parsed = server::parse_origin(text);
  if (!parsed) return;
  if (text == "null") fail("\"null\" parsed as an origin");
  const auto sep = text.find("://");
  if (sep == std::string_view::npos) fail("an origin without ://", text);
  const std::string_view rest = text.substr(sep + 3);
  for (char c : rest)
    if (!host_char(c))
      fail("an origin with a path, query, fragment, userinfo or junk was accepted", text);
  if (parsed->authority.loopback != oracle_loopback(parsed->authority))
    fail("an origin's loopback flag disagrees with inet_pton / \"localhost\"", text);
  const std::string key = parsed->key();
  const auto again = server::parse_origin(key);
  if (!again || again->key() != key) fail("an origin's key does not re-parse the same", key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const std::string_view text = corral::fuzz::text_of(data + 1, size - 1);
  check_authority(text);
  check_origin(text);

  server::GuardPolicy policy;
  std::vector<std::string> hosts, origins;
  for (const std::string& line : corral::fuzz::split(text, '\n')) {
    if (line.empty()) continue;
    const std::string value = line.substr(1);
    switch (line[0]) {
      case 'H':
        hosts.push_back(value);
        check_authority(value);
        break;
      case 'O':
        origins.push_back(value);
        check_origin(value);
        break;
      case 'A':
        policy.allowed_origins.push_back(value);
        break;
      case 'B':
        policy.allowed_hosts.push_back(value);
        break;
      default:
        break;
    }
  }
  constexpr server::RequestGuard::Scope kScopes[] = {
      server::RequestGuard::Scope::loopback, server::RequestGuard::Scope::wildcard,
      server::RequestGuard::Scope::network, server::RequestGuard::Scope::local_socket};
  const server::RequestGuard::Scope scope = kScopes[control & 3];
  const bool http10 = (control & 4) != 0;
  std::optional<server::RequestGuard> guard;
  try {
    guard.emplace(policy, scope);
  } catch (const std::invalid_argument& e) {
    if (!corral::fuzz::is_utf8(e.what()) || std::strlen(e.what()) > 200)
      fail("a policy refusal that is long or not UTF-8", e.what());
    return 0;
  }
  const std::vector<std::string_view> host_views(hosts.begin(), hosts.end());
  const std::vector<std::string_view> origin_views(origins.begin(), origins.end());
  const server::GuardVerdict verdict = guard->check(host_views, origin_views, http10);
  if (verdict.status != 0 && verdict.status != 400 && verdict.status != 403)
    fail("a verdict status other than 0, 400, 403", std::to_string(verdict.status));
  if (!verdict.allowed()) {
    const std::string body = verdict.body();
    if (body.size() > 300 || !corral::fuzz::is_utf8(body))
      fail("a refusal body that is long or not UTF-8", body);
    boost::system::error_code ec;
    (void)boost::json::parse(body, ec);
    if (ec) fail("a refusal body that is not JSON", body);
    return 0;
  }
  if (hosts.size() > 1) fail("several Host fields admitted");
  if (origins.size() > 1) fail("several Origin fields admitted");
  if (!origins.empty() && verdict.origin != origins.front())
    fail("an admitted Origin not echoed as received", verdict.origin);
  if (hosts.empty()) {
    if (!http10) fail("an HTTP/1.1 request without Host admitted");
    return 0;
  }
  const auto host = server::parse_authority(hosts.front());
  if (!host) fail("a malformed Host admitted", hosts.front());
  if (scope == server::RequestGuard::Scope::loopback && !host->loopback) {
    // Only an allowed host (or the host of an allowed origin) may pass.
    bool listed = false;
    for (const std::string& h : policy.allowed_hosts) {
      if (h == "*") listed = true;
      const auto allowed = server::parse_authority(h);
      if (allowed && allowed->host == host->host && (!allowed->port || allowed->port == host->port))
        listed = true;
    }
    for (const std::string& o : policy.allowed_origins) {
      const auto allowed = server::parse_origin(o);
      if (allowed && allowed->authority.host == host->host) listed = true;
    }
    if (!listed) fail("a loopback-only listener admitted a Host nobody allowed", hosts.front());
  }
  return 0;
}
