// Backpressure and connection lifecycle (issue 14, items 5 and 6) against a
// real server, real workers and raw sockets: a caller that stops reading is
// stopped from sending, run caps answer `busy`, a vanished caller's run is
// cancelled, unsolicited pongs keep nothing alive, the age limit waits for
// runs, binary frames close 1003 and an oversized message 1009. Every test
// ends with a trivial execute on a fresh socket: the server is healthy.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <optional>
#include <set>
#include <thread>

#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

using std::chrono::milliseconds;

const json::object& result_of(const json::value& reply) { return reply.at("result").as_object(); }

json::object execute(std::int64_t id, json::object params) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", "execute"}, {"params", params}};
}

// A run that waits on the caller's tool `wait` and returns what it answered.
json::object waiting_run() {
  json::object params = execute_params("async () => (await codemode.wait({})).n");
  params["tools"] = json::array{json::object{{"name", "wait"}}};
  return params;
}

// One masked client frame (mask key 0: the payload goes as is).
std::string client_frame(unsigned opcode, std::string_view payload) {
  std::string frame;
  frame += static_cast<char>(0x80 | opcode);
  if (payload.size() < 126) {
    frame += static_cast<char>(0x80 | payload.size());
  } else if (payload.size() < 65536) {
    frame += static_cast<char>(0x80 | 126);
    frame += static_cast<char>(payload.size() >> 8);
    frame += static_cast<char>(payload.size() & 0xff);
  } else {
    frame += static_cast<char>(0x80 | 127);
    for (int shift = 56; shift >= 0; shift -= 8)
      frame += static_cast<char>((payload.size() >> shift) & 0xff);
  }
  frame.append(4, '\0');
  frame += payload;
  return frame;
}

// Waits for pool events. The listener shares its state, so an event the
// pool sends while the server shuts down (after the test's Events is gone)
// touches nothing freed.
class Events {
 public:
  explicit Events(pool::WorkerPool& pool) {
    pool.subscribe([state = state_](const pool::Event& event) {
      std::lock_guard lock(state->mutex);
      state->events.push_back(event);
      state->cv.notify_all();
    });
  }
  // The first event of `kind` (past `skip` of them), or nullopt after `limit`.
  std::optional<pool::Event> wait(pool::Event::Kind kind, std::size_t skip = 0,
                                  milliseconds limit = milliseconds(20'000)) {
    std::unique_lock lock(state_->mutex);
    std::optional<pool::Event> found;
    state_->cv.wait_for(lock, limit, [&] {
      std::size_t seen = 0;
      for (const auto& event : state_->events) {
        if (event.kind == kind && seen++ == skip) {
          found = event;
          return true;
        }
      }
      return false;
    });
    return found;
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<pool::Event> events;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

TEST(Backpressure, AClientThatStopsReadingCannotKeepSending) {
  Options options = test_options();
  options.max_write_queue = std::size_t{1} << 20;
  options.run_limits.memory_limit = std::uint64_t{64} << 20;
  Server server(std::move(options));
  server.listen();
  Events events(server.pool());

  // A small receive window, so the kernel holds little of what the server
  // writes; set before the handshake so the window is negotiated small.
  asio::io_context ioc;
  websocket::stream<tcp::socket> ws(ioc);
  ws.next_layer().open(tcp::v4());
  ws.next_layer().set_option(asio::socket_base::receive_buffer_size(4096));
  ws.next_layer().connect(
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.address().port));
  bound_reads(ws.next_layer().native_handle());
  ws.handshake("127.0.0.1", "/");

  // One answer of 12 MiB the client never reads: the server's queue stays
  // above the 1 MiB bound.
  ws.text(true);
  ws.write(
      asio::buffer(json::serialize(execute(1, execute_params("'x'.repeat(12 * 1024 * 1024)")))));
  ASSERT_TRUE(events.wait(pool::Event::Kind::execution_finished));

  // Now the client sends requests without reading. A server that kept
  // reading would take them all; this one stops, so the client's socket
  // stops being writable long before 48 MiB went out.
  const int fd = ws.next_layer().native_handle();
  const std::string padding(64 * 1024, ' ');
  const std::string message = client_frame(
      1, R"({"jsonrpc":"2.0","id":2,"method":"protocolVersion","pad":")" + padding + "\"}");
  std::size_t sent = 0;
  bool blocked = false;
  std::size_t offset = 0;
  while (sent < (std::size_t{48} << 20)) {
    const ssize_t n =
        ::send(fd, message.data() + offset, message.size() - offset, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      offset = (offset + static_cast<std::size_t>(n)) % message.size();
      continue;
    }
    ASSERT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) << std::strerror(errno);
    pollfd p{fd, POLLOUT, 0};
    // Writable again within 2 s means the server is still reading.
    if (::poll(&p, 1, 2000) == 0) {
      blocked = true;
      break;
    }
  }
  EXPECT_TRUE(blocked) << "the server kept reading: " << sent << " bytes went out";
  EXPECT_LT(sent, std::size_t{48} << 20);
  // No execution beyond the first one started meanwhile.
  EXPECT_EQ(server.pool().stats().executions_running, 0u);
  ws.next_layer().close();
  expect_healthy(server.address().port);
}

TEST(Backpressure, AReadingClientGetsEveryAnswerPastTheBound) {
  Options options = test_options();
  options.max_write_queue = 64 * 1024;
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  // Eight answers of 512 KiB each, far past the bound: reading pauses and
  // resumes, and every one arrives.
  for (int id = 1; id <= 8; ++id)
    socket.send(
        execute(id, execute_params("'y'.repeat(512 * 1024).length + " + std::to_string(id))));
  std::set<std::int64_t> ids;
  for (int i = 0; i < 8; ++i) {
    json::value reply = socket.receive();
    ASSERT_EQ(result_of(reply).at("ok"), true) << json::serialize(reply).substr(0, 300);
    ids.insert(reply.at("id").as_int64());
  }
  EXPECT_EQ(ids.size(), 8u);
  expect_healthy(server.address().port);
}

TEST(Backpressure, RunsPastThePerConnectionCapAreBusy) {
  Options options = test_options();
  options.max_runs_per_connection = 2;
  options.metrics = own_metrics();
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  socket.send(execute(1, waiting_run()));
  socket.send(execute(2, waiting_run()));
  std::vector<json::value> calls = {socket.receive(), socket.receive()};
  for (const auto& call : calls) ASSERT_EQ(call.at("method"), "tool.call");
  // The third is refused at once, retryable, and nothing ran.
  socket.send(execute(3, execute_params("1")));
  json::value busy = socket.receive();
  EXPECT_EQ(busy.at("id"), 3);
  ASSERT_EQ(result_of(busy).at("ok"), false) << json::serialize(busy);
  EXPECT_EQ(result_of(busy).at("failure").at("code"), "busy");
  EXPECT_EQ(result_of(busy).at("failure").at("retryable"), true);
  EXPECT_NE(std::string(result_of(busy).at("failure").at("message").as_string())
                .find("the cap per connection is 2"),
            std::string::npos);
  // Once the runs answered, their slots are free again.
  for (const auto& call : calls) {
    socket.send(json::object{
        {"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", json::object{{"n", 5}}}});
  }
  for (int i = 0; i < 2; ++i) EXPECT_EQ(result_of(socket.receive()).at("ok"), true);
  json::value again = socket.call(4, "execute", execute_params("2"));
  EXPECT_EQ(result_of(again).at("ok"), true) << json::serialize(again);
  EXPECT_NE(server.render_metrics().find("corral_executions_total{outcome=\"busy\"} 1"),
            std::string::npos);
  expect_healthy(server.address().port);
}

TEST(Backpressure, RunsPastThePerIdentityCapAreBusyOnAnyConnection) {
  Options options = test_options();
  options.max_runs_per_connection = 0;
  options.max_runs_per_identity = 2;
  Server server(std::move(options));
  server.listen();
  RawSocket first(server.address().port);
  RawSocket second(server.address().port);
  first.send(execute(1, waiting_run()));
  second.send(execute(1, waiting_run()));
  json::value call_one = first.receive();
  json::value call_two = second.receive();
  ASSERT_EQ(call_one.at("method"), "tool.call");
  ASSERT_EQ(call_two.at("method"), "tool.call");
  // Both sockets are "anonymous": a third run on a third socket is busy.
  {
    RawSocket third(server.address().port);
    json::value busy = third.call(1, "execute", execute_params("1"));
    EXPECT_EQ(result_of(busy).at("failure").at("code"), "busy") << json::serialize(busy);
    EXPECT_NE(std::string(result_of(busy).at("failure").at("message").as_string())
                  .find("the cap per identity is 2"),
              std::string::npos);
  }
  // The first socket's run answers: one slot frees, the next run goes.
  first.send(json::object{
      {"jsonrpc", "2.0"}, {"id", call_one.at("id")}, {"result", json::object{{"n", 1}}}});
  EXPECT_EQ(result_of(first.receive()).at("ok"), true);
  expect_healthy(server.address().port);
  second.send(json::object{
      {"jsonrpc", "2.0"}, {"id", call_two.at("id")}, {"result", json::object{{"n", 2}}}});
  EXPECT_EQ(result_of(second.receive()).at("ok"), true);
}

TEST(Backpressure, ARunWhoseCallerVanishedIsCancelledAndFreesItsWorker) {
  Options options = test_options();
  options.pool.max_workers = 1;
  Server server(std::move(options));
  server.listen();
  Events events(server.pool());
  {
    RawSocket socket(server.address().port);
    socket.send(execute(1, execute_params("while (true) {}", 120'000, true)));
    ASSERT_TRUE(events.wait(pool::Event::Kind::execution_started));
    beast::error_code ignored;
    socket.ws().next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    socket.ws().next_layer().close(ignored);
  }
  std::optional<pool::Event> finished = events.wait(pool::Event::Kind::execution_finished);
  ASSERT_TRUE(finished);
  ASSERT_TRUE(finished->outcome.has_value());
  EXPECT_EQ(*finished->outcome, FailureCode::cancelled);
  // The only worker serves the next caller well inside the first run's
  // 120 s timeout (this run's own bound is 20 s).
  const auto started = std::chrono::steady_clock::now();
  RawSocket next(server.address().port);
  json::value reply = next.call(2, "execute", execute_params("'free'", 20'000, true));
  EXPECT_EQ(result_of(reply).at("ok"), true) << json::serialize(reply);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));
}

TEST(Backpressure, UnsolicitedPongsDoNotKeepASocketAlive) {
  Options options = test_options();
  options.ping_interval = milliseconds(100);
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  auto& raw = socket.ws().next_layer();
  // Pongs with payloads of our own, never an answer to the server's pings
  // (which this socket never reads as frames).
  std::atomic<bool> stop{false};
  std::thread ponger([&] {
    const std::string pong = client_frame(0xA, "not yours");
    const std::string empty = client_frame(0xA, "");
    while (!stop) {
      beast::error_code ec;
      asio::write(raw, asio::buffer(pong), ec);
      if (!ec) asio::write(raw, asio::buffer(empty), ec);
      if (ec) return;
      std::this_thread::sleep_for(milliseconds(10));  // pacing, not synchronisation
    }
  });
  beast::error_code ec;
  std::string bytes;
  while (!ec) {  // bounded: the socket's reads give up after 20 s
    char chunk[256];
    const std::size_t n = raw.read_some(asio::buffer(chunk), ec);
    bytes.append(chunk, n);
  }
  stop = true;
  ponger.join();
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x89) << "the first frame was not a ping";
  expect_healthy(server.address().port);
}

TEST(Backpressure, TheAgeLimitWaitsForTheRunsInFlight) {
  Options options = test_options();
  options.max_connection_age = milliseconds(300);
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  socket.send(execute(1, waiting_run()));
  json::value call = socket.receive();
  ASSERT_EQ(call.at("method"), "tool.call");
  // Quick runs go on until the age passes; then each is refused busy.
  json::value busy;
  for (std::int64_t id = 2; id < 10'000; ++id) {
    json::value reply = socket.call(id, "execute", execute_params("1"));
    if (result_of(reply).at("ok") == false) {
      busy = reply;
      break;
    }
  }
  ASSERT_FALSE(busy.is_null());
  EXPECT_EQ(result_of(busy).at("failure").at("code"), "busy");
  EXPECT_EQ(result_of(busy).at("failure").at("retryable"), true);
  // The run in flight still gets its tool answer through, and its result,
  // and only then the 1000.
  socket.send(
      json::object{{"jsonrpc", "2.0"}, {"id", call.at("id")}, {"result", json::object{{"n", 7}}}});
  json::value reply = socket.receive();
  EXPECT_EQ(reply.at("id"), 1);
  EXPECT_EQ(json::serialize(result_of(reply).at("execution").at("value")), "7");
  EXPECT_EQ(socket.read_until_closed(), websocket::error::closed);
  EXPECT_EQ(socket.reason().code, 1000);
  EXPECT_EQ(socket.reason().reason, "connection age limit");
  expect_healthy(server.address().port);
}

// A run whose tool is never answered ends at its own `timeout_ms`, past the
// connection's age: its timeout answer arrives, then the close (1000).
void expect_timeout_answer_then_age_close(Options options, int timeout_ms) {
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  json::object params = waiting_run();
  params["timeout"] = timeout_ms;
  socket.send(execute(1, params));
  ASSERT_EQ(socket.receive().at("method"), "tool.call");
  json::value reply = socket.receive();
  EXPECT_EQ(reply.at("id"), 1);
  EXPECT_EQ(result_of(reply).at("failure").at("code"), "timeout") << json::serialize(reply);
  EXPECT_EQ(socket.read_until_closed(), websocket::error::closed);
  EXPECT_EQ(socket.reason().code, 1000);
  expect_healthy(server.address().port);
}

TEST(Backpressure, TheAgeLimitClosesOnceARunTimedOut) {
  Options options = test_options();
  // The age passes while the run is in flight, with room for the run to
  // be read first (200 ms was not, under ASan beside heavy tests).
  options.max_connection_age = milliseconds(500);
  expect_timeout_answer_then_age_close(std::move(options), 2000);
}

// A run's timeout counts from when a worker takes it; a worker slow to
// start (1.5 s here, as under a loaded sanitizer build) must not let the
// age limit close the connection before the run's answer.
TEST(Backpressure, TheAgeLimitWaitsForARunWhoseWorkerWasSlowToStart) {
  Options options = test_options();
  options.pool.worker_command = {"/bin/sh", "-c", "sleep 1.5; exec \"$0\" worker", CORRAL_BINARY};
  options.max_connection_age = milliseconds(300);
  expect_timeout_answer_then_age_close(std::move(options), 500);
}

TEST(Backpressure, ABinaryMessageClosesWith1003Unprocessed) {
  Server server(test_options());
  server.listen();
  Events events(server.pool());
  RawSocket socket(server.address().port);
  socket.ws().binary(true);
  socket.ws().write(asio::buffer(json::serialize(execute(1, execute_params("1")))));
  EXPECT_EQ(socket.read_until_closed(), websocket::error::closed);
  EXPECT_EQ(socket.reason().code, 1003);
  const auto& why = socket.reason().reason;
  EXPECT_NE(std::string(why.data(), why.size()).find("binary"), std::string::npos);
  EXPECT_FALSE(events.wait(pool::Event::Kind::queued, 0, milliseconds(0)));
  EXPECT_EQ(server.pool().stats().workers_started, 0u) << "the binary execute ran";
  expect_healthy(server.address().port);
}

TEST(Backpressure, AnOversizedMessageStillBeingSentReadsAs1009) {
  Options options = test_options();
  options.max_message_size = std::size_t{1} << 20;
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port);
  // 8 MiB in one message: the server refuses it from the header, then
  // drains the rest, so the client finishes writing and reads the close.
  beast::error_code ec;
  socket.ws().text(true);
  socket.ws().write(asio::buffer(std::string(8 << 20, 'a')), ec);
  EXPECT_FALSE(ec) << "the write was cut: " << ec.message();
  EXPECT_EQ(socket.read_until_closed(), websocket::error::closed);
  EXPECT_EQ(socket.reason().code, 1009);
  expect_healthy(server.address().port);
}

}  // namespace
}  // namespace corral::server::testing
