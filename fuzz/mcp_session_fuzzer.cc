// fuzz/mcp_session_fuzzer.cc: the MCP server's message handling on hostile
// input, through the stdio transport (mcp::serve_stdio: newline-delimited
// JSON-RPC) and the session a Streamable HTTP POST body goes to
// (mcp::Session::handle).
//
// The service is the one `corral mcp` starts with no manifest and no
// upstream: its one tool is `execute`, over a WorkerPool that is shut down
// before the first input, so a tools/call is refused (`unavailable`) without
// starting a worker. A fresh Service and Session serve every input.
//
// Input: byte 0 picks the transport (bit 0: 0 stdio, 1 an HTTP body) and
// whether an `initialize` request goes first (bit 1); the rest is what stdin
// carries until end of file (read from a memfd, answers written to another),
// or the one POST body.
//
// Invariants: no crash and no exception out of either; every line written
// is one valid UTF-8 JSON-RPC object with "jsonrpc":"2.0" and exactly one of
// result, error or method; on stdio, every request with a valid id (string
// or integer) that is not a tools/call gets exactly one response with that
// id, a tools/call at most one (the session cancels calls at end of file),
// and no id gets more responses than requests carried it; on HTTP, the
// stream is finished exactly once, within 10 s, and a request with a valid
// id is answered with that id.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "core/json.hpp"
#include "corral/mcp.hpp"
#include "corral/pool.hpp"
#include "fuzz_util.hpp"
#include "mcp/session.hpp"

namespace json = corral::core::json;
namespace mcp = corral::mcp;
using corral::fuzz::fail;

namespace {

constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}})";

corral::pool::WorkerPool& shut_pool() {
  static corral::pool::WorkerPool* pool = [] {
    auto* p = new corral::pool::WorkerPool();
    p->shutdown(std::chrono::seconds(0));
    return p;
  }();
  return *pool;
}

std::shared_ptr<mcp::Service> make_service() {
  mcp::Options options;
  options.logger = [](mcp::LogLevel, const std::string&) {};
  return mcp::Service::start(std::move(options), shut_pool());
}

std::optional<json::value> parse(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec) return std::nullopt;
  return v;
}

bool valid_id(const json::value& id) { return id.is_string() || id.is_int64() || id.is_uint64(); }

// One message the server wrote: valid UTF-8, one JSON-RPC object. Returns
// the key of its id for a response (serialized id; "null" for a null id),
// nullopt for a notification.
std::optional<std::string> check_written(std::string_view line) {
  if (!corral::fuzz::is_utf8(line)) fail("a message written that is not UTF-8", line);
  const auto v = parse(line);
  if (!v || !v->is_object()) fail("a message written that is not a JSON object", line);
  const json::object& o = v->get_object();
  const json::value* jsonrpc = o.if_contains("jsonrpc");
  if (!jsonrpc || !jsonrpc->is_string() || jsonrpc->get_string() != "2.0")
    fail("a message written without \"jsonrpc\":\"2.0\"", line);
  const int kinds = (o.contains("result") ? 1 : 0) + (o.contains("error") ? 1 : 0) +
                    (o.contains("method") ? 1 : 0);
  if (kinds != 1) fail("a message written with not exactly one of result/error/method", line);
  if (o.contains("method")) {
    if (o.contains("id")) fail("the server sent a request", line);
    return std::nullopt;
  }
  const json::value* id = o.if_contains("id");
  if (!id) fail("a response without an id", line);
  // An integer id is echoed as its token: past uint64 it reads back as an
  // integral double.
  const bool integral = id->is_double() && std::isfinite(id->get_double()) &&
                        std::trunc(id->get_double()) == id->get_double();
  if (!id->is_null() && !valid_id(*id) && !integral)
    fail("a response with an id of the wrong type", line);
  if (const json::value* error = o.if_contains("error")) {
    const json::object* e = error->if_object();
    if (!e || !e->contains("code") || !e->at("code").is_int64() || !e->contains("message") ||
        !e->at("message").is_string())
      fail("an error without an integer code and a message string", line);
  }
  return json::serialize(*id);
}

// What a client message asks for: the key of its id when it is a request
// with a valid id, and whether it must be answered (false for tools/call on
// stdio).
struct Expect {
  std::optional<std::string> key;  // any valid id it carries
  bool must_answer = false;
};

Expect expect_of(std::string_view text, bool calls_may_be_dropped) {
  Expect e;
  const auto v = parse(text);
  if (!v || !v->is_object()) return e;
  const json::object& o = v->get_object();
  const json::value* id = o.if_contains("id");
  if (!id) return e;
  if (id->is_double()) {
    // An integer token past uint64 is a valid id, "1e3" or "1.5" is not:
    // the parsed value cannot tell, so such a request may be answered
    // with this id or with null, and need not be.
    e.key = json::serialize(*id);
    return e;
  }
  if (!valid_id(*id)) return e;
  e.key = json::serialize(*id);
  const json::value* jsonrpc = o.if_contains("jsonrpc");
  const json::value* method = o.if_contains("method");
  if (!jsonrpc || !jsonrpc->is_string() || jsonrpc->get_string() != "2.0") {
    e.must_answer = true;  // an Invalid Request with this id
    return e;
  }
  if (!method) return e;  // a response (not answered) or an invalid request
  if (!method->is_string()) {
    e.must_answer = true;
    return e;
  }
  e.must_answer = !(calls_may_be_dropped && method->get_string() == "tools/call");
  return e;
}

int memfd(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) fail("memfd_create failed");
  return fd;
}

void write_fd(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) fail("writing the memfd failed");
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_fd(int fd) {
  std::string out;
  ::lseek(fd, 0, SEEK_SET);
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) fail("reading the memfd failed");
    if (n == 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

void run_stdio(std::string_view input) {
  const int in = memfd("mcp-in");
  const int out = memfd("mcp-out");
  write_fd(in, input);
  ::lseek(in, 0, SEEK_SET);
  {
    auto service = make_service();
    if (mcp::serve_stdio(*service, in, out) != 0) fail("serve_stdio reported a broken stdout");
  }
  const std::string written = read_fd(out);
  ::close(in);
  ::close(out);

  // The messages stdin carried, framed independently of stdio.cc.
  std::map<std::string, int> at_least, at_most;
  int messages = 0;
  auto parts = corral::fuzz::split(input, '\n');
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string line = parts[i];
    // A line is one '\r' shorter; the text after the last newline is not.
    const bool last = i + 1 == parts.size();
    if (!last && !line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(last ? " \t\r" : " \t") == std::string::npos) continue;
    ++messages;
    const Expect e = expect_of(line, true);
    if (!e.key) continue;
    ++at_most[*e.key];
    if (e.must_answer) ++at_least[*e.key];
  }
  if (!written.empty() && written.back() != '\n') fail("stdout ends inside a line", written);
  std::map<std::string, int> answered;
  int null_answers = 0;
  auto lines = corral::fuzz::split(written, '\n');
  lines.pop_back();  // after the last newline
  for (const std::string& line : lines) {
    const auto key = check_written(line);
    if (!key) continue;
    if (*key == "null") {
      ++null_answers;
    } else {
      ++answered[*key];
    }
  }
  if (null_answers > messages) fail("more id-less errors than messages", written);
  for (const auto& [key, n] : answered)
    if (n > at_most[key]) fail("more responses for an id than requests carried it", key);
  for (const auto& [key, n] : at_least)
    if (answered[key] < n) fail("a request with a valid id was not answered", key);
}

// What a POST's exchange received.
class Collect : public mcp::Stream {
 public:
  void send(std::string message) override {
    std::lock_guard lock(mutex_);
    if (finishes_ > 0) fail("a message sent after the exchange finished", message);
    sent_.push_back(std::move(message));
  }
  void finish(std::optional<std::string> response) override {
    std::lock_guard lock(mutex_);
    if (++finishes_ > 1) fail("an exchange finished twice");
    response_ = std::move(response);
    done_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    return done_.wait_for(lock, std::chrono::seconds(10), [&] { return finishes_ > 0; });
  }
  std::vector<std::string> sent_;
  std::optional<std::string> response_;

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  int finishes_ = 0;
};

void run_http(std::string_view body, bool initialize) {
  auto service = make_service();
  auto session = std::make_shared<mcp::Session>(service);
  if (initialize) {
    auto first = std::make_shared<Collect>();
    session->handle(kInitialize, first);
    if (!first->wait() || !first->response_) fail("initialize was not answered");
  }
  auto exchange = std::make_shared<Collect>();
  session->handle(body, exchange);
  if (!exchange->wait()) fail("an exchange not finished within 10 s", body);
  session->close();
  for (const std::string& m : exchange->sent_)
    if (check_written(m)) fail("a response sent as a notification", m);
  const Expect e = expect_of(body, false);
  if (exchange->response_) {
    const auto key = check_written(*exchange->response_);
    if (!key) fail("an exchange finished with a notification", *exchange->response_);
    if (e.key && *key != *e.key && *key != "null")
      fail("a response with another request's id", *exchange->response_);
    if (e.must_answer && *key != *e.key) fail("a request answered without its id", *key);
  } else if (e.must_answer) {
    fail("a request with a valid id finished without a response", body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const std::string_view rest = corral::fuzz::text_of(data + 1, size - 1);
  const bool initialize = (control & 2) != 0;
  if ((control & 1) == 0) {
    std::string input;
    if (initialize) {
      input.append(kInitialize);
      input += '\n';
    }
    input.append(rest);
    run_stdio(input);
  } else {
    run_http(rest, initialize);
  }
  return 0;
}
