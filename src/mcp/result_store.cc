// ResultStore: kept texts, bounded in bytes and age, per session.
#include "mcp/result_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "core/text.hpp"

namespace corral::mcp {

namespace {

// `text`'s value for `key` in a query "a=1&b=2"; nothing when absent.
std::optional<std::size_t> query_number(std::string_view query, std::string_view key) {
  std::optional<std::size_t> found;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) throw std::invalid_argument("a query part without '='");
    const std::string_view k = pair.substr(0, eq), v = pair.substr(eq + 1);
    if (k != "offset" && k != "length")
      throw std::invalid_argument("a query takes offset and length only");
    if (k != key) continue;
    if (found) throw std::invalid_argument(fmt::format("{} is given twice", key));
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty())
      throw std::invalid_argument(fmt::format("{} must be a whole number of bytes", key));
    found = n;
  }
  return found;
}

// The first byte of the UTF-8 character `at` is in (at most 3 back).
std::size_t character_start(std::string_view text, std::size_t at) {
  std::size_t back = 0;
  while (at > 0 && at < text.size() && back < 3 &&
         (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) {
    --at;
    ++back;
  }
  return at;
}

}  // namespace

ResultStore::ResultStore(std::size_t max_bytes, std::chrono::milliseconds retention)
    : max_bytes_(max_bytes), retention_(retention) {}

std::vector<std::optional<std::string>> ResultStore::keep(std::uint64_t owner,
                                                          std::vector<Text> texts) {
  std::vector<std::optional<std::string>> uris(texts.size());
  std::vector<Entry> kept;
  std::size_t total = 0;
  const Clock::time_point now = Clock::now();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Text& t = texts[i];
    if (t.text.size() > max_bytes_ - total) continue;
    total += t.text.size();
    uris[i] = std::string(kScheme) + core::random_hex128() + "/" + t.name;
    const std::size_t size = t.text.size();
    kept.push_back(Entry{owner, *uris[i], std::move(t.name), std::move(t.mime),
                         std::move(t.description), std::move(t.text), now, size});
  }
  std::lock_guard lock(mutex_);
  expire(now);
  while (!entries_.empty() && bytes_ + total > max_bytes_) {
    bytes_ -= entries_.front().text.size();
    entries_.pop_front();
  }
  bytes_ += total;
  for (Entry& e : kept) entries_.push_back(std::move(e));
  return uris;
}

std::optional<ResultStore::Page> ResultStore::read(std::uint64_t owner, std::string_view uri) {
  const std::size_t question = uri.find('?');
  const std::string_view base = uri.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : uri.substr(question + 1);
  const std::optional<std::size_t> offset = query_number(query, "offset");
  const std::optional<std::size_t> length = query_number(query, "length");
  std::lock_guard lock(mutex_);
  expire(Clock::now());
  for (const Entry& e : entries_) {
    if (e.owner != owner || e.uri != base) continue;
    if (!offset && !length) return Page{std::string(uri), e.mime, e.text, 0, e.text.size()};
    const std::string_view text = e.text;
    const std::size_t from = character_start(text, std::min(offset.value_or(0), text.size()));
    const std::size_t want = std::min(length.value_or(kMaxPageBytes), kMaxPageBytes);
    const std::size_t to = character_start(text, std::min(text.size(), from + want));
    return Page{std::string(uri), e.mime, std::string(text.substr(from, to - from)), from,
                text.size()};
  }
  return std::nullopt;
}

std::vector<ResultStore::Entry> ResultStore::list(std::uint64_t owner) {
  std::lock_guard lock(mutex_);
  expire(Clock::now());
  std::vector<Entry> out;
  for (const Entry& e : entries_) {
    if (e.owner != owner) continue;
    out.push_back(Entry{e.owner, e.uri, e.name, e.mime, e.description, {}, e.kept, e.size});
  }
  return out;
}

void ResultStore::forget(std::uint64_t owner) {
  std::lock_guard lock(mutex_);
  std::erase_if(entries_, [&](const Entry& e) {
    if (e.owner != owner) return false;
    bytes_ -= e.text.size();
    return true;
  });
}

std::size_t ResultStore::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

void ResultStore::expire(Clock::time_point now) {
  while (!entries_.empty() && now - entries_.front().kept >= retention_) {
    bytes_ -= entries_.front().text.size();
    entries_.pop_front();
  }
}

}  // namespace corral::mcp
