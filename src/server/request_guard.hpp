// src/server/request_guard.hpp: the one gate every HTTP surface of corral
// passes before anything else (the executor upgrade at `/`, the probes,
// `/mcp`, the admin listener): exact Host parsing and the Origin allow-list,
// against DNS rebinding and pages on foreign sites (docs/security.md).
//
//   RequestGuard guard(policy, RequestGuard::scope_of(bound_address));
//   const GuardVerdict verdict = guard.check(request);  // a Beast request
//   if (!verdict.allowed()) answer(verdict.status, verdict.body());
//
// Rules, in order:
// - Host: exactly one (several: 400); HTTP/1.1 requires one (400), HTTP/1.0
//   may omit it. It must parse as an RFC 3986 authority without userinfo:
//   a reg-name of letters, digits, '-', '_' and '.' (labels of 1-63, at most
//   253 characters, one trailing dot ignored), a dotted-decimal IPv4 address
//   (four decimal parts 0-255, no leading zeros) or a bracketed IPv6 address
//   (no zone), then an optional port 0-65535 (else 400). A name whose last
//   label is numeric ("127.1", "0x7f.1") is refused as malformed: resolvers
//   and browsers read it as an address in forms no one should rely on.
// - The Host is allowed when "*" is among the allowed hosts; or it is a
//   loopback host ("localhost", 127.0.0.0/8, [::1]; names compare without
//   case and one trailing dot, so "LOCALHOST." is loopback, and [::1] in any
//   spelling inet_pton reads, such as [0:0:0:0:0:0:0:1]; nothing else, no
//   prefix or suffix matching, and no IPv4-mapped [::ffff:127.0.0.1]) and
//   the listener is reachable over loopback; or the listener is not
//   loopback-only and the Host is an IP address (a rebinding
//   page always names a host) or no allowed hosts are configured; or it
//   equals an allowed host ("name" any port, "name:port" that port) or the
//   host of an allowed origin. Otherwise 403. On a unix socket any
//   well-formed Host is allowed (no browser reaches one).
// - Origin: when the request carries one (browsers always do on WebSocket
//   upgrades and POST/PUT/DELETE; curl, the npm `ws` client and corral's own
//   client send none, and are allowed), it must be exactly one, a serialized
//   origin ("scheme://host[:port]", no path, no userinfo; "null" never
//   matches) that is in the allowed origins (scheme and host compared without
//   case, default ports folded: "https://a.example" is "https://a.example:443")
//   or an http(s) origin on a loopback host while the listener is reachable
//   over loopback. "*" allows every origin. Otherwise 403.
// Every refusal's body says which header was refused and why, and never
// echoes more than a short, printable prefix of the value.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::server {

// Authority: a parsed Host header value or the host part of an origin.
struct Authority {
  enum class Kind { name, ipv4, ipv6 };
  Kind kind = Kind::name;
  // Lower case; a name without its trailing dot; an IPv6 address in
  // brackets, as written ("[::1]").
  std::string host;
  std::optional<std::uint16_t> port;
  bool loopback = false;  // localhost, 127.0.0.0/8 or [::1]
};

// parse_authority: "host[:port]" exactly as the rules above say, or nullopt.
std::optional<Authority> parse_authority(std::string_view text);

// Origin: a parsed serialized origin; `port` is always set (the scheme's
// default when omitted, 0 for a scheme without one).
struct Origin {
  std::string scheme;  // lower case
  Authority authority;
  std::uint16_t port = 0;
  // "scheme://host:port" with every default folded in, for comparison.
  std::string key() const;
};

// parse_origin: "scheme://host[:port]", or nullopt (also for "null").
std::optional<Origin> parse_origin(std::string_view text);

// GuardPolicy: what an operator allows (--allowed-origins, --allowed-hosts).
struct GuardPolicy {
  std::vector<std::string> allowed_origins;  // "*": every origin
  std::vector<std::string> allowed_hosts;    // "*": every host
};

// Throws std::invalid_argument naming the first entry that is neither "*"
// nor a well-formed origin (respectively host[:port]).
void validate(const GuardPolicy& policy);

// GuardVerdict: status 0 admits; otherwise 400 or 403 with a reason.
struct GuardVerdict {
  int status = 0;
  std::string reason;  // "the Origin http://evil.example is not allowed"
  // The request's Origin when it carried an allowed one (routes answering
  // browsers echo it in Access-Control-Allow-Origin).
  std::string origin;
  bool allowed() const noexcept { return status == 0; }
  // A JSON body for the refusal: {"error":"Forbidden: <reason>."}
  std::string body() const;
};

class RequestGuard {
 public:
  // Scope: how the listener can be reached.
  enum class Scope {
    loopback,     // bound to 127.0.0.0/8 or ::1
    wildcard,     // 0.0.0.0 or :: (loopback and every interface)
    network,      // a non-loopback address
    local_socket  // a unix socket
  };
  // The scope of a bound address ("127.0.0.1", "::", "10.0.0.5"); an empty
  // address is a unix socket.
  static Scope scope_of(std::string_view address);

  // Throws std::invalid_argument as validate() does.
  RequestGuard(GuardPolicy policy, Scope scope);

  // The verdict on the given header values (every Host field, every Origin
  // field, as received).
  GuardVerdict check(const std::vector<std::string_view>& hosts,
                     const std::vector<std::string_view>& origins, bool http10 = false) const;
  // The verdict on a request's headers.
  template <class Fields>
  GuardVerdict check(const boost::beast::http::header<true, Fields>& request) const {
    std::vector<std::string_view> hosts, origins;
    for (const auto& field : request) {
      if (field.name() == boost::beast::http::field::host) {
        hosts.emplace_back(field.value().data(), field.value().size());
      } else if (field.name() == boost::beast::http::field::origin) {
        origins.emplace_back(field.value().data(), field.value().size());
      }
    }
    return check(hosts, origins, request.version() < 11);
  }

  Scope scope() const noexcept { return scope_; }

 private:
  bool host_allowed(const Authority& host) const;
  bool origin_allowed(const Origin& origin) const;
  bool reaches_loopback() const noexcept;

  GuardPolicy policy_;
  Scope scope_;
  bool any_origin_ = false;
  bool any_host_ = false;
  std::vector<std::string> origin_keys_;
  std::vector<Authority> hosts_;  // allowed hosts and the hosts of allowed origins
  bool hosts_configured_ = false;
};

}  // namespace corral::server
