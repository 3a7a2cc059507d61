// The request guard (see request_guard.hpp): hand-written, linear parsers
// for Host and Origin, and the allow-list decision.
#include "server/request_guard.hpp"

#include <arpa/inet.h>

#include <array>
#include <boost/json.hpp>
#include <stdexcept>

#include "core/text.hpp"

namespace corral::server {

namespace {

constexpr std::size_t kMaxName = 253;
constexpr std::size_t kMaxLabel = 63;
constexpr std::size_t kMaxOrigin = 1024;
constexpr std::size_t kMaxShown = 80;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A value as shown in a refusal or a log line: printable ASCII only (no
// spaces), cut short.
std::string shown(std::string_view value) {
  if (value.empty()) return "(empty)";
  std::string out;
  for (char c : value.substr(0, kMaxShown)) out += c > 0x20 && c < 0x7f ? c : '?';
  if (value.size() > kMaxShown) out += "...";
  return out;
}

// "0".."65535" without a sign; empty is refused.
std::optional<std::uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  std::uint32_t value = 0;
  for (char c : text) {
    if (!is_digit(c)) return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

// RFC 3986 dec-octet: 0-255, no leading zero.
bool parse_octet(std::string_view text, unsigned& value) {
  if (text.empty() || text.size() > 3) return false;
  if (text.size() > 1 && text.front() == '0') return false;
  value = 0;
  for (char c : text) {
    if (!is_digit(c)) return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value <= 255;
}

// Four dec-octets; sets the first octet.
bool parse_ipv4(std::string_view text, unsigned& first) {
  std::array<unsigned, 4> octets{};
  std::size_t part = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '.') continue;
    if (part == 4 || !parse_octet(text.substr(start, i - start), octets[part])) return false;
    ++part;
    start = i + 1;
  }
  if (part != 4) return false;
  first = octets[0];
  return true;
}

// A label that a resolver or browser might read as a number: digits, or 0x
// followed by hex digits.
bool numeric_label(std::string_view label) {
  if (label.empty()) return false;
  if (label.size() >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X')) {
    for (char c : label.substr(2)) {
      if (!is_digit(c) && !((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
    }
    return true;
  }
  for (char c : label)
    if (!is_digit(c)) return false;
  return true;
}

bool parse_name(std::string_view text, Authority& out) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty() || text.size() > kMaxName) return false;
  std::size_t start = 0;
  std::string_view last;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size()) {
      const char c = text[i];
      if (c == '.') {
        // fallthrough to the label check below
      } else if (is_alpha(c) || is_digit(c) || c == '-' || c == '_') {
        continue;
      } else {
        return false;
      }
    }
    const std::string_view label = text.substr(start, i - start);
    if (label.empty() || label.size() > kMaxLabel) return false;
    last = label;
    start = i + 1;
  }
  if (numeric_label(last)) return false;
  out.kind = Authority::Kind::name;
  out.host = core::ascii_lower(text);
  out.loopback = out.host == "localhost";
  return true;
}

bool parse_ipv6(std::string_view text, Authority& out) {
  // text is "[...]"; no zone identifier, no IPvFuture.
  const std::string_view inner = text.substr(1, text.size() - 2);
  if (inner.empty() || inner.size() > 45) return false;
  for (char c : inner) {
    if (!(is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.'))
      return false;
  }
  const std::string address(inner);
  in6_addr parsed{};
  if (::inet_pton(AF_INET6, address.c_str(), &parsed) != 1) return false;
  static const in6_addr kLoopback = IN6ADDR_LOOPBACK_INIT;
  out.kind = Authority::Kind::ipv6;
  // Built by appending: GCC 12's -O3 flags `"[" + std::string` with a
  // false -Wrestrict (as in v8/guest.cc).
  out.host.assign(1, '[');
  out.host += core::ascii_lower(inner);
  out.host += ']';
  out.loopback = std::equal(std::begin(parsed.s6_addr), std::end(parsed.s6_addr),
                            std::begin(kLoopback.s6_addr));
  return true;
}

}  // namespace

std::optional<Authority> parse_authority(std::string_view text) {
  if (text.empty() || text.size() > kMaxName + 7) return std::nullopt;
  Authority out;
  std::string_view host = text;
  std::string_view port;
  bool has_port = false;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = text.substr(0, close + 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      has_port = true;
    }
    if (!parse_ipv6(host, out)) return std::nullopt;
  } else {
    if (const auto colon = text.find(':'); colon != std::string_view::npos) {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
      has_port = true;
    }
    unsigned first = 0;
    if (parse_ipv4(host, first)) {
      out.kind = Authority::Kind::ipv4;
      out.host = std::string(host);
      out.loopback = first == 127;
    } else if (!parse_name(host, out)) {
      return std::nullopt;
    }
  }
  if (has_port) {
    out.port = parse_port(port);
    if (!out.port) return std::nullopt;
  }
  return out;
}

std::string Origin::key() const {
  return scheme + "://" + authority.host + ":" + std::to_string(port);
}

std::optional<Origin> parse_origin(std::string_view text) {
  if (text.empty() || text.size() > kMaxOrigin) return std::nullopt;
  const auto sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  const std::string_view scheme = text.substr(0, sep);
  if (!is_alpha(scheme.front())) return std::nullopt;
  for (char c : scheme) {
    if (!(is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.')) return std::nullopt;
  }
  // No path, query, fragment or userinfo: parse_authority refuses '/', '?',
  // '#' and '@'.
  auto authority = parse_authority(text.substr(sep + 3));
  if (!authority) return std::nullopt;
  Origin origin;
  origin.scheme = core::ascii_lower(scheme);
  origin.authority = std::move(*authority);
  if (origin.authority.port) {
    origin.port = *origin.authority.port;
  } else if (origin.scheme == "http" || origin.scheme == "ws") {
    origin.port = 80;
  } else if (origin.scheme == "https" || origin.scheme == "wss") {
    origin.port = 443;
  }
  return origin;
}

void validate(const GuardPolicy& policy) {
  for (const std::string& origin : policy.allowed_origins) {
    if (origin != "*" && !parse_origin(origin))
      throw std::invalid_argument("\"" + shown(origin) +
                                  "\" is not an origin (scheme://host[:port], no path)");
  }
  for (const std::string& host : policy.allowed_hosts) {
    if (host != "*" && !parse_authority(host))
      throw std::invalid_argument("\"" + shown(host) + "\" is not a host (host[:port])");
  }
}

std::string GuardVerdict::body() const {
  std::string text = status == 400 ? "Bad Request: " : "Forbidden: ";
  text += reason;
  text += ".";
  return boost::json::serialize(boost::json::object{{"error", text}});
}

RequestGuard::Scope RequestGuard::scope_of(std::string_view address) {
  if (address.empty()) return Scope::local_socket;
  if (address.size() > 2 && address.front() == '[' && address.back() == ']')
    address = address.substr(1, address.size() - 2);
  const std::string text(address);
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    const std::uint32_t host = ntohl(v4.s_addr);
    if (host == 0) return Scope::wildcard;
    return (host >> 24) == 127 ? Scope::loopback : Scope::network;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_UNSPECIFIED(&v6)) return Scope::wildcard;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return Scope::loopback;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127 ? Scope::loopback : Scope::network;
    return Scope::network;
  }
  return Scope::local_socket;  // a path
}

RequestGuard::RequestGuard(GuardPolicy policy, Scope scope)
    : policy_(std::move(policy)), scope_(scope) {
  validate(policy_);
  for (const std::string& origin : policy_.allowed_origins) {
    if (origin == "*") {
      any_origin_ = true;
      continue;
    }
    const Origin parsed = *parse_origin(origin);
    origin_keys_.push_back(parsed.key());
    Authority host = parsed.authority;
    host.port.reset();  // a page's host may reach the daemon on any port
    hosts_.push_back(std::move(host));
  }
  for (const std::string& host : policy_.allowed_hosts) {
    hosts_configured_ = true;
    if (host == "*") {
      any_host_ = true;
      continue;
    }
    hosts_.push_back(*parse_authority(host));
  }
}

bool RequestGuard::reaches_loopback() const noexcept {
  return scope_ == Scope::loopback || scope_ == Scope::wildcard || scope_ == Scope::local_socket;
}

bool RequestGuard::host_allowed(const Authority& host) const {
  if (any_host_ || scope_ == Scope::local_socket) return true;
  if (host.loopback && reaches_loopback()) return true;
  if (scope_ != Scope::loopback) {
    if (host.kind != Authority::Kind::name) return true;
    if (!hosts_configured_) return true;
  }
  for (const Authority& allowed : hosts_) {
    if (allowed.host == host.host && (!allowed.port || allowed.port == host.port)) return true;
  }
  return false;
}

bool RequestGuard::origin_allowed(const Origin& origin) const {
  if (any_origin_) return true;
  const std::string key = origin.key();
  for (const std::string& allowed : origin_keys_)
    if (allowed == key) return true;
  return origin.authority.loopback && reaches_loopback() &&
         (origin.scheme == "http" || origin.scheme == "https");
}

GuardVerdict RequestGuard::check(const std::vector<std::string_view>& hosts,
                                 const std::vector<std::string_view>& origins, bool http10) const {
  GuardVerdict verdict;
  if (hosts.size() > 1) return {400, "more than one Host header", {}};
  if (hosts.empty()) {
    if (!http10) return {400, "an HTTP/1.1 request needs a Host header", {}};
  } else {
    const auto host = parse_authority(hosts.front());
    if (!host) return {400, "the Host " + shown(hosts.front()) + " is malformed", {}};
    if (!host_allowed(*host))
      return {403, "the Host " + shown(hosts.front()) + " is not allowed", {}};
  }
  if (origins.empty()) return verdict;
  if (origins.size() > 1) return {403, "more than one Origin header", {}};
  const auto origin = parse_origin(origins.front());
  if (!origin || !origin_allowed(*origin))
    return {403, "the Origin " + shown(origins.front()) + " is not allowed", {}};
  verdict.origin = std::string(origins.front());
  return verdict;
}

}  // namespace corral::server
