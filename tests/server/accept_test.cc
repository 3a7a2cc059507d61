// Accepting a connection: the acceptance flag, the identity hook and its
// three refusals, the listen address, and the lifecycle switches.
#include <sys/socket.h>
#include <sys/un.h>

#include <future>
#include <thread>

#include "corral/client.hpp"
#include "server/server_test_util.hpp"

namespace corral::server::testing {
namespace {

IdentityHook bearer(std::string token) {
  return sync_identity([token](const Handshake& handshake) {
    auto found = handshake.headers.find("authorization");
    if (found != handshake.headers.end() && found->second == "Bearer " + token) {
      return Decision::admit("caller@" + handshake.remote_address);
    }
    return Decision::refuse("the authorization header did not match\r\nX-Injected: yes");
  });
}

TEST(Accept, TheThreeRefusalsOfTheSeed) {
  LogSink log;
  Options options = test_options();
  options.identify = bearer("s3cret");
  options.logger = log.logger();
  options.metrics = own_metrics();
  Server server(std::move(options));
  server.listen();
  const std::uint16_t port = server.address().port;

  // hook rejects: a raw upgrade with no Authorization header.
  HttpReply rejected = http_request(port, http::verb::get, "/",
                                    {{"Connection", "Upgrade"},
                                     {"Upgrade", "websocket"},
                                     {"Sec-WebSocket-Version", "13"},
                                     {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
  EXPECT_EQ(rejected.status, 403);
  EXPECT_EQ(rejected.body, "");
  for (const auto& [name, value] : rejected.headers) {
    EXPECT_EQ(value.find("did not match"), std::string::npos) << name;
    EXPECT_NE(name, "X-Injected");
  }
  // The reason is logged beside the remote address, and counted.
  EXPECT_TRUE(log.wait_for("127.0.0.1: the authorization header did not match"));
  EXPECT_NE(server.render_metrics().find("corral_connection_rejections_total 1"),
            std::string::npos);

  // The header the hook accepts opens a session.
  EXPECT_EQ(raw_upgrade_status(port, {{"Authorization", "Bearer s3cret"}}), 101);

  // not accepting: the same accepted header, 503, and the hook never runs.
  server.stop_accepting();
  EXPECT_EQ(raw_upgrade_status(port, {{"Authorization", "Bearer s3cret"}}), 503);
  EXPECT_EQ(raw_upgrade_status(port), 503);  // the hook would have said 403
  EXPECT_NE(server.render_metrics().find("corral_connection_rejections_total 1"),
            std::string::npos);

  // the caller sees: both refusals read alike from the shipped client.
  const std::string url = "ws://127.0.0.1:" + std::to_string(port);
  try {
    client::Client::connect(url, {.authorization = "Bearer s3cret"});
    FAIL() << "connected while not accepting";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::connection_rejected);
    EXPECT_NE(std::string(e.what()).find("Executor handshake failed for " + url), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("503"), std::string::npos) << e.what();
  }
  server.resume_accepting();
  try {
    client::Client::connect(url);
    FAIL() << "connected without the token";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::connection_rejected);
    EXPECT_NE(std::string(e.what()).find("403"), std::string::npos) << e.what();
  }
  auto client = client::Client::connect(url, {.authorization = "Bearer s3cret"});
  EXPECT_TRUE(client->connected());
}

TEST(Accept, TheHookSeesFlattenedHeadersAndTheRemoteAddress) {
  std::promise<Handshake> seen;
  Options options = test_options();
  options.identify = [&seen](const Handshake& handshake, DecideCallback decide) {
    seen.set_value(handshake);
    decide(Decision::admit("someone"));
  };
  Server server(std::move(options));
  server.listen();
  RawSocket socket(server.address().port,
                   {{"X-Tenant", "a"}, {"x-tenant", "b"}, {"X-Single", "only"}});
  Handshake handshake = seen.get_future().get();
  EXPECT_EQ(handshake.remote_address, "127.0.0.1");
  EXPECT_EQ(handshake.headers["x-tenant"], "a, b");
  EXPECT_EQ(handshake.headers["x-single"], "only");
  EXPECT_EQ(handshake.headers["upgrade"], "websocket");
}

TEST(Accept, AHookThatThrowsAdmitsNobody) {
  LogSink log;
  Options options = test_options();
  options.logger = log.logger();
  options.identify = sync_identity(
      [](const Handshake&) -> Decision { throw std::runtime_error("policy store unreachable"); });
  Server server(std::move(options));
  server.listen();
  EXPECT_EQ(raw_upgrade_status(server.address().port), 403);
  EXPECT_TRUE(log.wait_for("policy store unreachable"));
}

TEST(Accept, AHookThatNeverDecidesRefuses) {
  Options options = test_options();
  options.identify = [](const Handshake&, DecideCallback) {};
  Server server(std::move(options));
  server.listen();
  EXPECT_EQ(raw_upgrade_status(server.address().port), 403);
}

TEST(Accept, TheFlagIsReadAgainAfterAnAsynchronousHook) {
  std::promise<DecideCallback> parked;
  Options options = test_options();
  options.identify = [&parked](const Handshake&, DecideCallback decide) {
    parked.set_value(std::move(decide));
  };
  Server server(std::move(options));
  server.listen();
  auto upgrade = std::async(std::launch::async,
                            [port = server.address().port] { return raw_upgrade_status(port); });
  DecideCallback decide = parked.get_future().get();
  // The hook is still deciding when acceptance stops; its admission must
  // not open a session.
  server.stop_accepting();
  std::thread([decide] { decide(Decision::admit("late")); }).join();
  EXPECT_EQ(upgrade.get(), 503);
}

TEST(Accept, WithoutAHookEveryCallerIsAdmitted) {
  Server server(test_options());
  server.listen();
  EXPECT_EQ(raw_upgrade_status(server.address().port), 101);
}

TEST(Accept, UpgradesOnlyAtTheRoot) {
  Server server(test_options());
  server.listen();
  HttpReply reply = http_request(server.address().port, http::verb::get, "/ws",
                                 {{"Connection", "Upgrade"},
                                  {"Upgrade", "websocket"},
                                  {"Sec-WebSocket-Version", "13"},
                                  {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
  EXPECT_EQ(reply.status, 404);
}

TEST(Accept, PortZeroGetsARealPortAndATakenPortFailsListenWithTheOsError) {
  Server first(test_options());
  first.listen();
  Address address = first.address();
  EXPECT_EQ(address.address, "127.0.0.1");
  EXPECT_EQ(address.family, "IPv4");
  EXPECT_NE(address.port, 0);
  EXPECT_EQ(address.to_string(), "127.0.0.1:" + std::to_string(address.port));

  Options options = test_options();
  options.port = address.port;
  Server second(std::move(options));
  try {
    second.listen();
    FAIL() << "listened on a taken port";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::address_in_use) << e.what();
  }
}

TEST(Accept, AUnixSocketPathReplacesHostAndPort) {
  char dir_template[] = "/tmp/corral-server-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/executor.sock";
  Options options = test_options();
  options.socket_path = path;
  {
    Server server(std::move(options));
    server.listen();
    EXPECT_EQ(server.address().family, "unix");
    EXPECT_EQ(server.address().address, path);
    auto client = client::Client::connect("ws+unix://" + path);
    client::Outcome outcome = client->execute(request_of("6 * 7"));
    ASSERT_TRUE(outcome.ok()) << outcome.failure().message;
    EXPECT_EQ(outcome.execution().value(), "42");
  }
  rmdir(dir_template);
}

TEST(Accept, ResumeAfterCloseBeganIsAnInternalError) {
  Options options = test_options();
  options.shutdown_delay = std::chrono::milliseconds(100);
  Server server(std::move(options));
  server.listen();
  std::promise<void> closed;
  server.close([&closed] { closed.set_value(); });
  try {
    server.resume_accepting();
    FAIL() << "resumed a closing server";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), FailureCode::internal);
    EXPECT_STREQ(e.what(), "A closed server cannot accept connections again.");
  }
  closed.get_future().get();
}

TEST(Accept, BadOptionsAreNamed) {
  Options options = test_options();
  options.max_timeout = std::chrono::milliseconds(0);
  EXPECT_THROW(
      {
        try {
          Server server(options);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("max_timeout"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
  options = test_options();
  options.io_threads = 0;
  EXPECT_THROW(Server server(options), std::invalid_argument);
  options = test_options();
  options.socket_path = std::string(200, 'x');
  EXPECT_THROW(Server server(options), std::invalid_argument);
}

TEST(Accept, AddressBeforeListenIsALogicError) {
  Server server(test_options());
  EXPECT_THROW(server.address(), std::logic_error);
  server.listen();
  EXPECT_THROW(server.listen(), std::logic_error);
}

}  // namespace
}  // namespace corral::server::testing
