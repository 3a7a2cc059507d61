#include "daemon/tokens.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

namespace corral::daemon {

std::vector<std::string> read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("--auth-token-file: cannot read " + path);
  std::vector<std::string> tokens;
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    tokens.push_back(line.substr(first, last - first + 1));
  }
  if (in.bad()) throw std::runtime_error("--auth-token-file: cannot read " + path);
  if (tokens.empty()) throw std::runtime_error("--auth-token-file: " + path + " holds no token");
  return tokens;
}

bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

std::optional<std::string_view> bearer_token(std::string_view header) {
  // credentials = auth-scheme [ 1*SP token68 ] (RFC 7235 section 2.1); the
  // scheme is case-insensitive. Surrounding whitespace is not part of it.
  constexpr std::string_view kScheme = "bearer";
  const auto begin = header.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return std::nullopt;
  header.remove_prefix(begin);
  header.remove_suffix(header.size() - (header.find_last_not_of(" \t") + 1));
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = header[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i])
      return std::nullopt;
  }
  std::string_view rest = header.substr(kScheme.size());
  if (rest.front() != ' ') return std::nullopt;  // "Bearerx ...": another scheme
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  if (rest.empty() || rest.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
  return rest;
}

TokenSet::TokenSet(std::vector<std::string> tokens)
    : tokens_(std::make_shared<const std::vector<std::string>>(std::move(tokens))) {}

TokenSet::Change TokenSet::replace(std::vector<std::string> tokens) {
  auto next = std::make_shared<const std::vector<std::string>>(std::move(tokens));
  std::lock_guard lock(mutex_);
  const std::set<std::string> before(tokens_->begin(), tokens_->end());
  const std::set<std::string> after(next->begin(), next->end());
  Change change;
  change.count = after.size();
  for (const std::string& t : after) change.added += before.count(t) == 0 ? 1 : 0;
  for (const std::string& t : before) change.removed += after.count(t) == 0 ? 1 : 0;
  tokens_ = std::move(next);
  return change;
}

std::optional<std::string> TokenSet::identify(std::string_view token) const {
  std::shared_ptr<const std::vector<std::string>> tokens;
  {
    std::lock_guard lock(mutex_);
    tokens = tokens_;
  }
  std::optional<std::string> identity;
  // Every token is compared, so the time does not say which one matched.
  for (std::size_t i = 0; i < tokens->size(); ++i) {
    if (same_secret(token, (*tokens)[i]) && !identity) identity = "token-" + std::to_string(i + 1);
  }
  return identity;
}

server::IdentityHook bearer_identity(std::shared_ptr<const TokenSet> tokens) {
  return server::sync_identity([tokens = std::move(tokens)](const server::Handshake& handshake) {
    auto it = handshake.headers.find("authorization");
    if (it == handshake.headers.end()) return server::Decision::refuse("no bearer token");
    const std::optional<std::string_view> presented = bearer_token(it->second);
    if (!presented) return server::Decision::refuse("authorization is not a bearer token");
    if (std::optional<std::string> identity = tokens->identify(*presented))
      return server::Decision::admit(std::move(*identity));
    return server::Decision::refuse("unknown bearer token");
  });
}

}  // namespace corral::daemon
