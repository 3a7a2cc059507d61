// src/daemon/tokens.hpp: the bearer tokens callers present, and the
// identity hook that checks them.
//
// A TokenSet is the set in force; `replace` swaps it atomically (SIGHUP
// re-reads --auth-token-file): a check that started keeps the set it took,
// every later one sees the new set. Open connections were admitted at their
// upgrade and are not checked again.
//
// The Authorization header is matched per RFC 7235: the scheme `Bearer` in
// any case, then one or more spaces, then the token; the token is compared
// in time independent of where it differs.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/server.hpp"

namespace corral::daemon {

// The tokens of a file, one a line ('#' starts a comment, blank lines and
// surrounding spaces ignored). Throws std::runtime_error when the file
// cannot be read or holds no token (the message names the file, never a
// token).
std::vector<std::string> read_token_file(const std::string& path);

// True when a and b are equal; the time taken does not depend on where they
// first differ.
bool same_secret(std::string_view a, std::string_view b);

// The credentials of an `Authorization: Bearer TOKEN` value, or nullopt when
// the scheme is not Bearer (case-insensitive) or no token follows.
std::optional<std::string_view> bearer_token(std::string_view header);

class TokenSet {
 public:
  explicit TokenSet(std::vector<std::string> tokens);

  struct Change {
    std::size_t count = 0;
    std::size_t added = 0;
    std::size_t removed = 0;
  };
  // Puts `tokens` in force; says how the set changed (counts, never values).
  Change replace(std::vector<std::string> tokens);

  // The identity of a caller presenting `token` ("token-N", N its line in
  // the set in force), or nullopt.
  std::optional<std::string> identify(std::string_view token) const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::vector<std::string>> tokens_;
};

// Admits a caller whose Authorization header carries a token of `tokens`.
server::IdentityHook bearer_identity(std::shared_ptr<const TokenSet> tokens);

}  // namespace corral::daemon
