// src/mcp/result_store.hpp: what a tool result lost at its budget, kept
// whole for a while as MCP resources, so that a client (and the model behind
// it) can read it with `resources/read`, whole or page by page.
//
// One store per Service, shared by its sessions: every entry belongs to the
// session that made it (only that one lists or reads it), the store's bytes
// are bounded (the oldest entries go first) and so is each entry's age.
// URIs carry 128 random bits, so they are not guessable either.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::mcp {

// ResultStore: bounded, expiring, per-session text resources.
class ResultStore {
 public:
  using Clock = std::chrono::steady_clock;

  // `max_bytes`: the texts of every session together (0 keeps nothing);
  // `retention`: how long an entry stays readable.
  ResultStore(std::size_t max_bytes, std::chrono::milliseconds retention);

  // One kept text as resources/list shows it.
  struct Entry {
    std::uint64_t owner = 0;  // the session's number
    std::string uri;          // corral://results/<32 hex digits>/<name>
    std::string name;         // "value.json", "stdout.txt", ...
    std::string mime;         // "application/json", "text/plain"
    std::string description;
    std::string text;
    Clock::time_point kept;
    std::size_t size = 0;  // the text's bytes (list() leaves the text out)
  };

  // One text to keep.
  struct Text {
    std::string name;  // "value.json", "stdout.txt", ...
    std::string mime;
    std::string description;
    std::string text;
  };
  // Keeps the texts of one result for session `owner`, together: older
  // entries make room for them, and keeping one never evicts another (a
  // result never links a part its sibling pushed out). For each text its
  // URI, or nothing when it cannot be kept (in order, a text that would not
  // fit the store with the ones before it: any text but an empty one when
  // the store holds 0 bytes).
  std::vector<std::optional<std::string>> keep(std::uint64_t owner, std::vector<Text> texts);

  // Page: a slice of one entry, as resources/read answers it.
  struct Page {
    std::string uri;  // as asked, with its query
    std::string mime;
    std::string text;
    std::size_t offset = 0;  // where `text` begins in the whole (after the boundary move)
    std::size_t size = 0;    // the whole text's bytes
  };
  // The entry at `uri` (owned by `owner`, not expired), whole, or the
  // slice `?offset=N&length=M` asks for (bytes, moved back to the nearest
  // UTF-8 character boundaries; length at most kMaxPageBytes). Nothing when
  // it is not there (unknown, another session's, expired, evicted);
  // std::invalid_argument for a malformed query (a part other than offset
  // and length, one given twice, a value that is no whole number).
  std::optional<Page> read(std::uint64_t owner, std::string_view uri);

  // The owner's entries, oldest first (texts left empty).
  std::vector<Entry> list(std::uint64_t owner);

  // Drops the owner's entries (its session ended).
  void forget(std::uint64_t owner);

  std::size_t bytes() const;
  std::chrono::milliseconds retention() const noexcept { return retention_; }

  static constexpr std::size_t kMaxPageBytes = std::size_t{1} << 20;
  static constexpr std::string_view kScheme = "corral://results/";

 private:
  void expire(Clock::time_point now);  // mutex_ held

  const std::size_t max_bytes_;
  const std::chrono::milliseconds retention_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;  // oldest first
  std::size_t bytes_ = 0;
};

}  // namespace corral::mcp
